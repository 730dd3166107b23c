-- model: table; key: uid; depends: endpoint_membership, pod_lifecycle, pod_transitions, projection_scope, raw_events, refreshed_from
-- The rollout race's moments per pod (design §5), whatever the margin: for each pod that was
-- ready behind a Service and whose deletion was requested, when its endpoint stopped being
-- ready (turned not-ready/terminating, or left the slice) and when its containers stopped,
-- with the resourceVersions that order equal times. races_with judges them at a margin.
-- Materialized per pod (uid in projection_scope: a slice's records touch its target pods),
-- so an analysis reads one row per such pod, not every membership stretch and record.
-- (the last time each pod turned ready, grouped once: a window over every membership row
-- cost a quarter of races at 1M events)
WITH last_ready AS (
    SELECT pod_uid, max(since_at) AS last_ready_at
    FROM endpoint_membership
    WHERE state = 'ready' AND pod_uid IN (SELECT uid FROM projection_scope) GROUP BY pod_uid),
off AS (
    SELECT m.pod_uid, any_value(m.service) AS service,
           min(m.since_at) AS endpoint_off_at,
           arg_min(m.state, m.since_at) AS off_state,
           arg_min(m.since_event_id, m.since_at) AS off_event_id,
           arg_min(r.rv, m.since_at) AS off_rv
    FROM endpoint_membership m JOIN last_ready l USING (pod_uid)
    JOIN raw_events r ON r.event_id = m.since_event_id
    WHERE m.state <> 'ready' AND m.since_at > l.last_ready_at GROUP BY m.pod_uid),
-- (both steps in one pass over pod_transitions: each is at most one row per pod)
steps AS (
    SELECT t.uid,
           any_value(t.evidence_event_id) FILTER (WHERE t.step = 'deletion_requested')
               AS request_event_id,
           any_value(t.evidence_event_id) FILTER (WHERE t.step = 'containers_stopped')
               AS stopped_event_id,
           any_value(r.rv) FILTER (WHERE t.step = 'containers_stopped') AS stopped_rv
    FROM pod_transitions t
    LEFT JOIN raw_events r ON r.event_id = t.evidence_event_id AND t.step = 'containers_stopped'
    WHERE t.step IN ('deletion_requested', 'containers_stopped')
      AND t.rowid >= refreshed_from('pod_transitions')
      AND t.uid IN (SELECT uid FROM projection_scope) GROUP BY t.uid)
SELECT l.namespace, l.pod, l.uid, o.service, l.deletion_requested_at, o.endpoint_off_at,
       o.off_state, l.containers_stopped_at,
       epoch(o.endpoint_off_at - l.containers_stopped_at) AS exposed_s,
       epoch(o.endpoint_off_at - l.deletion_requested_at) AS request_to_endpoint_off_s,
       s.stopped_rv, o.off_rv,
       [s.request_event_id, o.off_event_id, s.stopped_event_id] AS evidence
FROM pod_lifecycle l JOIN last_ready v ON v.pod_uid = l.uid
LEFT JOIN off o ON o.pod_uid = l.uid
LEFT JOIN steps s ON s.uid = l.uid
WHERE l.deletion_requested_at IS NOT NULL AND l.rowid >= refreshed_from('pod_lifecycle')
  AND l.uid IN (SELECT uid FROM projection_scope)
