-- model: view; depends: data_end, stuck_at
-- stuck_at at the end of the data.
SELECT * FROM stuck_at(data_end())
