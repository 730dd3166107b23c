-- model: macro(); depends: ktrace_meta
-- projected (replayer/projections.py), 0 before the first; rows after it are new.
(SELECT coalesce(max(value::BIGINT), 0) FROM ktrace_meta WHERE key = 'projected_through')
