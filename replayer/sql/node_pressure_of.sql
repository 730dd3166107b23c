-- model: macro(uids); depends: conditions, eviction_resource, k8s_events, pods, pressure_resource, raw_events
-- node_pressure_of(uids): every stretch the Nodes in uids reported a pressure condition True
-- (MemoryPressure KubeletHasInsufficientMemory, DiskPressure KubeletHasDiskPressure,
-- PIDPressure KubeletHasInsufficientPID — pkg/kubelet/nodestatus/setters.go;
-- NetworkUnavailable) — what `ktrace explain node/NAME` tells, passed or still holding. A
-- condition, not a stuck object: the kubelet reclaims by evicting, and the condition passes
-- by itself once it has. One row per node, condition and lastTransitionTime: `since` (the
-- condition's lastTransitionTime, else its first receipt; `since_derived` says which), `until` (the next version's
-- lastTransitionTime where it is no longer True; NULL while it holds), `reason`, `message`,
-- `reclaim` (the kubelet's EvictionThresholdMet "Attempting to reclaim <resource>" Event
-- about the node — named, not uid'd — from 10 s before `since` (nodeStatusUpdateFrequency:
-- the status is posted after the eviction manager acts) to `until`: {message, at, count,
-- event_id}), `evicted` (each pod on the node the kubelet evicted or refused for this
-- resource meanwhile — status Evicted whose message names it or the condition —
-- {pod, namespace, at, event_id}, its first such version) and `evidence` (the versions
-- that raised and cleared it, the Event, the pods' versions).
WITH versions AS (
    SELECT r.uid, r.cluster, r.name, r.event_id, r.received_at, c.type, c.status, c.reason,
           c.message, c.last_transition
    FROM raw_events r JOIN conditions c USING (event_id)
    WHERE r.kind = 'Node' AND list_contains(uids, r.uid)
      AND c.type IN ('MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable')),
stretches AS (
    SELECT uid, cluster, name, type, last_transition,
           coalesce(last_transition, min(received_at)) AS since, min(received_at) AS raised_at,
           arg_min(event_id, event_id) AS raised_id, arg_min(reason, event_id) AS reason,
           arg_min(message, event_id) AS message
    FROM versions WHERE status = 'True'
    GROUP BY uid, cluster, name, type, last_transition),
ended AS (
    SELECT s.*, e.until, e.cleared_id
    FROM stretches s LEFT JOIN LATERAL (
        SELECT coalesce(arg_min(v.last_transition, v.event_id), min(v.received_at)) AS until,
               min(v.event_id) AS cleared_id
        FROM versions v
        WHERE v.uid = s.uid AND v.type = s.type AND v.status <> 'True' AND v.event_id > s.raised_id
    ) e ON true),
reclaims AS (
    SELECT s.uid, s.type, s.last_transition,
           arg_min({'message': e.message, 'at': coalesce(e.first_time, r.received_at),
                    'count': e.count, 'event_id': e.event_id}, e.event_id) AS reclaim
    FROM ended s JOIN k8s_events e ON e.reason = 'EvictionThresholdMet' AND e.regarding_kind = 'Node'
                                  AND e.regarding_name = s.name
    JOIN raw_events r ON r.event_id = e.event_id AND r.cluster = s.cluster
    WHERE e.message IN ('Attempting to reclaim ' || pressure_resource(s.type),
                        'Attempting to reclaim inodes')  -- inodes: the DiskPressure of nodefs/imagefs
      AND (e.message <> 'Attempting to reclaim inodes' OR s.type = 'DiskPressure')
      AND coalesce(e.first_time, r.received_at) >= s.since - INTERVAL 10 SECOND
      AND (s.until IS NULL OR coalesce(e.first_time, r.received_at) <= s.until)
    GROUP BY s.uid, s.type, s.last_transition),
evictions AS (
    SELECT s.uid, s.type, s.last_transition,
           list({'pod': p.pod, 'namespace': p.namespace, 'at': p.at, 'event_id': p.event_id}
                ORDER BY p.at, p.pod) AS evicted
    FROM ended s JOIN (
        SELECT r.cluster, r.uid AS pod_uid, any_value(r.name) AS pod, any_value(r.namespace) AS namespace,
               any_value(p.node_name) AS node_name, arg_min(p.status_message, r.event_id) AS message,
               min(r.received_at) AS at, min(r.event_id) AS event_id
        FROM raw_events r JOIN pods p USING (event_id)
        WHERE r.kind = 'Pod' AND p.status_reason = 'Evicted'
        GROUP BY r.cluster, r.uid) p
      ON p.cluster = s.cluster AND p.node_name = s.name
     AND (eviction_resource(p.message) = pressure_resource(s.type)
          OR p.message LIKE '%[' || s.type || ']%')
     AND p.at >= s.since - INTERVAL 10 SECOND AND (s.until IS NULL OR p.at <= s.until)
    GROUP BY s.uid, s.type, s.last_transition)
SELECT s.uid, s.cluster, s.name, s.type, s.since, s.last_transition IS NOT NULL AS since_derived,
       s.until, s.reason, s.message, c.reclaim, v.evicted,
       [x FOR x IN list_concat([s.raised_id, s.cleared_id, c.reclaim.event_id],
                               [e.event_id FOR e IN coalesce(v.evicted, [])]) IF x IS NOT NULL] AS evidence
FROM ended s
LEFT JOIN reclaims c ON c.uid = s.uid AND c.type = s.type AND c.last_transition IS NOT DISTINCT FROM s.last_transition
LEFT JOIN evictions v ON v.uid = s.uid AND v.type = s.type AND v.last_transition IS NOT DISTINCT FROM s.last_transition
ORDER BY s.since, s.type
