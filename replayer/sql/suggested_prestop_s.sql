-- model: macro(p99_request_to_off_s, margin_s)
-- The preStop delay that would have covered the race: the 99th percentile of "deletion
-- requested → endpoint off" plus the dataplane margin, rounded up.
ceil(greatest(p99_request_to_off_s, 0) + margin_s)::INTEGER
