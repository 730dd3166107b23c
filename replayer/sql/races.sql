-- model: view; depends: races_with
-- races_with at a 1 s dataplane margin.
SELECT * FROM races_with(1.0)
