-- model: macro(override_names, override_seconds); depends: slow_steps_with, unseen_stretches
-- gaps: what went slowly (category 'slow': a pod_lifecycle duration over its threshold)
-- and what the recording did not see (category 'unseen': GAP records, the time between a
-- session's end or loss and the next session, holes in a session's sequence numbers, and
-- 'damaged': a byte range of the source that could not be read, from the last record read
-- before it in its topic to the first one after it, or the end of the data).
-- Documented in docs/projections.md.
SELECT 'unseen' AS category, type, session, topic, namespace,
       NULL::VARCHAR AS name, NULL::VARCHAR AS uid, start_at, end_at,
       epoch(end_at - start_at) AS seconds, NULL::DOUBLE AS threshold_s, detail,
       evidence_event_id
FROM unseen_stretches
UNION ALL
SELECT CASE WHEN unseen IS NULL THEN 'slow' ELSE 'unknown' END,
       regexp_replace(step, '_s$', ''), NULL, NULL, namespace, pod, uid, start_at,
       start_at + to_microseconds((seconds * 1e6)::BIGINT), seconds, threshold_s,
       CASE WHEN unseen IS NULL THEN meaning
            ELSE 'unknown (recording gap): the recording did not see ' || unseen END,
       CASE WHEN unseen IS NULL THEN step_event_id ELSE unseen_event_id END
FROM slow_steps_with(override_names, override_seconds)
