-- model: view; depends: slow_steps_with
-- slow_steps_with at the default thresholds.
SELECT * FROM slow_steps_with([]::VARCHAR[], []::DOUBLE[])
