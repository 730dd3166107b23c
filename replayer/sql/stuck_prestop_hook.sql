-- model: macro(stuck, running, events); depends: cause_score
-- prestop_hook: containers still running past the deadline of a pod with a preStop hook;
-- scored below containers_not_exiting without a FailedPreStopHook Event (the kubelet waits
-- for a hook only until the deadline, +2 s: past it a declared hook holds nothing).
SELECT s.uid, 'prestop_hook' AS cause, cause_score('prestop_hook', e.uid IS NULL) AS score,
       coalesce(e.message, 'preStop hook defined; containers still running: '
                           || array_to_string(r.names, ', ')) AS detail,
       [s.event_id] || coalesce(e.ids, []) AS evidence
FROM query_table(stuck) s JOIN query_table(running) r USING (uid)
LEFT JOIN query_table(events) e
       ON e.uid = s.uid AND e.reason = 'FailedPreStopHook'
WHERE s.has_prestop
