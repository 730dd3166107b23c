-- model: macro(cause, failure)
-- failure_covers(cause, failure): whether Events naming `failure` are about a container
-- whose status shows `cause` (the restart back-off of an OOM-killed container or of one
-- that cannot start is that cause's, not another crash loop).
cause = failure OR (failure = 'crash_loop' AND cause IN ('oom_killed', 'run_container_error'))
