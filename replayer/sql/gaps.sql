-- model: view; depends: gaps_with
-- gaps_with at the default thresholds.
SELECT * FROM gaps_with([]::VARCHAR[], []::DOUBLE[])
