-- model: view; depends: data_end, problems_at
-- problems_at at the end of the data.
SELECT * FROM problems_at(data_end())
