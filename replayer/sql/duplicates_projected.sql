-- model: macro(); depends: ktrace_meta
-- The first rowid of duplicate_sequence (which only grows) not yet projected: its rows
-- from there are the duplicates skipped since the last refresh (projections.py), 0 before
-- the first.
(SELECT coalesce(max(value::BIGINT), 0) FROM ktrace_meta WHERE key = 'duplicates_projected')
