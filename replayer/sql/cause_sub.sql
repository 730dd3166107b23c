-- model: macro(detail)
-- The sub-reason at the head of a finding's detail ("not_found — …"), NULL when none.
nullif(regexp_extract(detail, '^([a-z_]+) — ', 1), '')
