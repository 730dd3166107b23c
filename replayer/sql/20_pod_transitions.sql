-- pod_transitions: one row per lifecycle step of each pod (design §5), with its time, the
-- component that made it and the record that shows it. Documented in docs/projections.md.

-- The evidence of each step: the first version of a pod for which the step's condition
-- holds, the first Killing Event, and the pod's EndpointSlice stretches.
CREATE OR REPLACE VIEW pod_steps_raw AS
WITH pv AS (SELECT * FROM pod_versions),
first_version AS (
    SELECT * FROM pv QUALIFY row_number() OVER (PARTITION BY uid ORDER BY version_no) = 1),
owned AS (
    SELECT DISTINCT event_id FROM owner_refs WHERE controller),
steps AS (
    SELECT uid, 'created' AS step, 1 AS rank, event_id, rv, type, received_at, is_live,
           created_at AS server_at,
           coalesce(component, CASE WHEN event_id IN (SELECT event_id FROM owned)
                                    THEN 'kube-controller-manager' END) AS component,
           NULL AS detail
    FROM first_version
    UNION ALL
    SELECT uid, 'scheduled', 2, event_id, rv, type, received_at, is_live,
           scheduled_transition, 'kube-scheduler', node_name
    FROM pv WHERE node_name IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY uid ORDER BY version_no) = 1
    UNION ALL
    SELECT uid, 'running', 3, event_id, rv, type, received_at, is_live,
           coalesce(containers_started_at, start_time), coalesce(component, 'kubelet'), NULL
    FROM pv WHERE containers_running > 0 OR phase = 'Running'
    QUALIFY row_number() OVER (PARTITION BY uid ORDER BY version_no) = 1
    UNION ALL
    SELECT uid, 'ready', 4, event_id, rv, type, received_at, is_live,
           ready_transition, coalesce(component, 'kubelet'), NULL
    FROM pv WHERE ready_status = 'True'
    QUALIFY row_number() OVER (PARTITION BY uid ORDER BY version_no) = 1
    UNION ALL
    SELECT uid, 'deletion_requested', 6, event_id, rv, type, received_at, is_live,
           deletion_at - to_seconds(coalesce(deletion_grace_s, 0)), 'kube-apiserver',
           'grace ' || coalesce(deletion_grace_s, 0) || 's'
    FROM pv WHERE deletion_at IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY uid ORDER BY version_no) = 1
    UNION ALL
    SELECT uid, 'containers_stopped', 9, event_id, rv, type, received_at, is_live,
           containers_finished_at, coalesce(component, 'kubelet'),
           'exit ' || array_to_string(exit_codes, ',')
    FROM pv WHERE containers > 0 AND containers_terminated = containers
    QUALIFY row_number() OVER (PARTITION BY uid ORDER BY version_no) = 1
    UNION ALL
    SELECT uid, 'terminal', 10, event_id, rv, type, received_at, is_live,
           NULL, coalesce(component, 'kubelet'), phase
    FROM pv WHERE phase IN ('Succeeded', 'Failed')
    QUALIFY row_number() OVER (PARTITION BY uid ORDER BY version_no) = 1
    UNION ALL
    SELECT uid, 'deleted', 12, event_id, rv, type, received_at, is_live,
           NULL, CASE WHEN inferred OR type = 'INFERRED_DELETED' THEN 'unknown'
                      ELSE coalesce(component, 'kubelet') END,
           CASE WHEN inferred OR type = 'INFERRED_DELETED' THEN 'inferred at relist' END
    FROM pv WHERE type IN ('DELETED', 'INFERRED_DELETED')
    QUALIFY row_number() OVER (PARTITION BY uid ORDER BY version_no) = 1
    UNION ALL
    SELECT e.regarding_uid, 'killing', 8, r.event_id, r.rv, r.type, r.received_at,
           r.type IN ('ADDED', 'MODIFIED'), e.first_time, coalesce(e.component, 'kubelet'),
           e.message
    FROM k8s_events e JOIN raw_events r USING (event_id)
    WHERE e.reason = 'Killing' AND e.regarding_uid IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY e.regarding_uid ORDER BY r.received_at, r.rv) = 1),
membership AS (
    SELECT m.*, r.rv, r.type, min(since_at) FILTER (WHERE state = 'ready')
               OVER (PARTITION BY pod_uid) AS first_ready_at
    FROM endpoint_membership m JOIN raw_events r ON r.event_id = m.since_event_id),
endpoint_steps AS (
    SELECT pod_uid AS uid, 'in_endpoints' AS step, 5 AS rank, since_event_id AS event_id, rv,
           type, since_at AS received_at, type IN ('ADDED', 'MODIFIED') AS is_live,
           NULL::TIMESTAMP AS server_at, 'endpointslice-controller' AS component,
           service AS detail
    FROM membership WHERE state = 'ready'
    QUALIFY row_number() OVER (PARTITION BY pod_uid ORDER BY since_at, rv) = 1
    UNION ALL
    SELECT pod_uid, 'endpoint_not_ready', 7, since_event_id, rv, type, since_at,
           type IN ('ADDED', 'MODIFIED'), NULL, 'endpointslice-controller',
           service || ': ' || state || CASE WHEN terminating THEN ', terminating' ELSE '' END
    FROM membership WHERE state IN ('serving', 'not_ready') AND since_at > first_ready_at
    QUALIFY row_number() OVER (PARTITION BY pod_uid ORDER BY since_at, rv) = 1
    UNION ALL
    SELECT pod_uid, 'endpoint_removed', 11, since_event_id, rv, type, since_at,
           type IN ('ADDED', 'MODIFIED', 'DELETED'), NULL, 'endpointslice-controller',
           service || CASE WHEN type = 'DELETED' THEN ': slice deleted' ELSE '' END
    FROM membership WHERE state = 'absent'
    QUALIFY row_number() OVER (PARTITION BY pod_uid ORDER BY since_at, rv) = 1)
SELECT * FROM steps UNION ALL SELECT * FROM endpoint_steps;

-- Step times: the receive time of the evidence record, except for records that only show
-- a past state (LISTED, inferred), where the server's own timestamp is the better guess.
-- Order: by time, then by the causal rules of design §4 (an endpoint turns not-ready or
-- leaves after the deletion was requested; DELETED follows everything else), then by
-- resourceVersion (one etcd's commit order; it breaks the ties of 1 s derived times).
CREATE OR REPLACE VIEW pod_transitions AS
WITH ids AS (
    SELECT uid, any_value(namespace) AS namespace, any_value(name) AS pod
    FROM raw_events WHERE kind = 'Pod' GROUP BY uid),
timed AS (
    SELECT s.*, CASE WHEN s.is_live OR s.server_at IS NULL THEN s.received_at
                     ELSE s.server_at END AS time
    FROM pod_steps_raw s),
bounds AS (
    SELECT uid, any_value(time) FILTER (WHERE step = 'deletion_requested') AS requested_at,
           max(time) FILTER (WHERE step <> 'deleted') AS last_before_delete_at
    FROM timed GROUP BY uid),
ordered AS (
    SELECT t.*, CASE
            WHEN t.step IN ('endpoint_not_ready', 'endpoint_removed')
                 AND b.requested_at IS NOT NULL AND t.time >= b.requested_at - INTERVAL 1 SECOND
                THEN greatest(t.time, b.requested_at)
            WHEN t.step = 'deleted' THEN greatest(t.time, b.last_before_delete_at)
            ELSE t.time END AS order_at
    FROM timed t JOIN bounds b USING (uid))
SELECT o.uid, i.namespace, coalesce(i.pod, m.pod) AS pod,
       row_number() OVER (PARTITION BY o.uid ORDER BY o.order_at, o.rv, o.rank) AS step_no,
       o.step, o.time, o.server_at, o.component, o.event_id AS evidence_event_id,
       o.type AS evidence_type, o.detail
FROM ordered o LEFT JOIN ids i USING (uid)
LEFT JOIN (SELECT pod_uid, any_value(pod) AS pod FROM endpoint_membership GROUP BY ALL) m
       ON m.pod_uid = o.uid;
