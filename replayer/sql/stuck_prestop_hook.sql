-- model: macro(stuck, running, events); depends: cause_score
-- prestop_hook: containers still running past the deadline of a pod with a preStop hook;
-- scored lower without a FailedPreStopHook Event.
SELECT s.uid, 'prestop_hook' AS cause, cause_score('prestop_hook', e.uid IS NULL) AS score,
       coalesce(e.message, 'preStop hook defined; containers still running: '
                           || array_to_string(r.names, ', ')) AS detail,
       [s.event_id] || coalesce(e.ids, []) AS evidence
FROM query_table(stuck) s JOIN query_table(running) r USING (uid)
LEFT JOIN query_table(events) e
       ON e.uid = s.uid AND e.reason = 'FailedPreStopHook'
WHERE s.has_prestop
