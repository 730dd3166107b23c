-- not_running_at(ts, threshold_s := 60): pods that, at ts, were not Running and Ready —
-- `pending` (not scheduled or containers not started), `not_ready` (running but not
-- Ready) or `unknown` (no status recorded: reported only on evidence of a failure) — for
-- longer than threshold_s, or at once when the evidence shows a failure (a cause scored 50 or more: an image that cannot be pulled
-- does not need a minute to be conclusive). Each has ranked causes from cause_scores, each
-- with its evidence records. Pods being deleted are stuck_at's; finished pods (Succeeded,
-- Failed) are not stuck. Documented in docs/projections.md.

CREATE OR REPLACE MACRO not_running_at(ts, threshold_s := 60) AS TABLE
WITH live_pods AS MATERIALIZED (
    SELECT l.uid, l.cluster, l.namespace, l.name, l.event_id, l.topic, l.created_at, l.received_at,
           p.phase, p.node_name, p.claim_names
    FROM state_at(ts) l JOIN pods p USING (event_id)
    WHERE l.kind = 'Pod' AND l.deletion_at IS NULL
      AND coalesce(p.phase, 'Pending') NOT IN ('Succeeded', 'Failed')),
-- their conditions and container readiness, in one pass each
pod_conditions AS (
    SELECT c.event_id, any_value(c.status) FILTER (WHERE c.type = 'Ready') AS ready,
           any_value(c.last_transition) FILTER (WHERE c.type = 'Ready') AS ready_transition,
           -- (the two fields read, not the whole row: every column of every condition
           -- row packed into a struct cost a third of not_running_at at 1M events)
           any_value({'status': c.status, 'message': c.message})
               FILTER (WHERE c.type = 'PodScheduled') AS scheduled,
           count(*) AS conditions
    FROM conditions c WHERE c.event_id IN (SELECT event_id FROM live_pods) GROUP BY c.event_id),
pod_containers AS (
    SELECT k.event_id, CASE WHEN bool_and(k.ready) THEN 'True' END AS all_ready
    FROM containers k WHERE NOT k.init AND k.event_id IN (SELECT event_id FROM live_pods)
    GROUP BY k.event_id),
pod AS (
    SELECT l.*,
           -- a capture without conditions: Ready when every container says ready
           coalesce(c.ready, k.all_ready) AS ready_status,
           c.ready_transition, c.scheduled, coalesce(c.conditions, 0) AS conditions
    FROM live_pods l LEFT JOIN pod_conditions c USING (event_id)
    LEFT JOIN pod_containers k USING (event_id)),
stuck AS (
    SELECT *, coalesce(ready_transition, created_at, received_at) AS since,
           CASE WHEN phase = 'Running' AND ready_status = 'False' THEN 'not_ready'
                WHEN phase = 'Running' THEN 'unknown'
                WHEN phase = 'Pending' OR node_name IS NOT NULL OR conditions > 0 THEN 'pending'
                ELSE 'unknown' END AS problem
    FROM pod
    WHERE ready_status IS DISTINCT FROM 'True'),
events AS (
    SELECT s.uid, e.reason, e.message, e.type, e.event_id,
           coalesce(e.last_time, r.received_at) AS event_at
    FROM stuck s JOIN k8s_events e ON e.regarding_uid = s.uid
    JOIN raw_events r ON r.event_id = e.event_id
    WHERE r.received_at <= ts),
-- the earliest evidence of the stretch: a Warning about the pod still being reported when
-- the stretch began started its series earlier (a capture that begins late, a List import,
-- a pod first seen mid-life: the pod's own records start after the Events' first time)
earliest AS (
    SELECT s.uid, min(coalesce(e.first_time, e.last_time, r.received_at)) AS first_at
    FROM stuck s JOIN k8s_events e ON e.regarding_uid = s.uid
    JOIN raw_events r ON r.event_id = e.event_id
    WHERE r.received_at <= ts AND e.type = 'Warning'
      AND coalesce(e.last_time, r.received_at) >= s.since
    GROUP BY s.uid),
-- each reason's last Event, and the failure its message names (classified once here, not
-- at each of the four places that compare it)
last_event AS (
    SELECT *, kubelet_failure(reason, message) AS failure
    FROM (SELECT uid, reason, arg_max(message, row(event_at, event_id)) AS message,
                 min(event_at) AS first_at,
                 list(event_id ORDER BY event_at DESC, event_id DESC)[1:3] AS ids
          FROM events GROUP BY uid, reason)),
box AS (
    SELECT s.uid, k.* EXCLUDE (event_id, uid)
    FROM stuck s JOIN containers k USING (event_id)),
c_unschedulable AS (
    SELECT s.uid, 'unschedulable' AS cause,
           concat_ws(' — ',
               array_to_string(list_distinct([x.category FOR x IN
                   scheduling_reasons(coalesce(e.message, s.scheduled.message)).reasons]), ', '),
               coalesce(e.message, s.scheduled.message)) AS detail,
           [s.event_id] || coalesce(e.ids, []) AS evidence
    FROM stuck s LEFT JOIN last_event e ON e.uid = s.uid AND e.reason = 'FailedScheduling'
    WHERE s.node_name IS NULL
      AND (s.scheduled.status = 'False' OR e.uid IS NOT NULL)),
c_waiting AS (
    SELECT b.uid,
           CASE WHEN b.reason IN ('ErrImagePull', 'ImagePullBackOff', 'InvalidImageName',
                                  'ErrImageNeverPull', 'RegistryUnavailable',
                                  'ImageInspectError', 'SignatureValidationFailed')
                    THEN 'image_pull'
                WHEN b.reason = 'CrashLoopBackOff' THEN 'crash_loop'
                WHEN b.reason = 'CreateContainerConfigError' THEN 'container_config'
                WHEN b.reason IN ('RunContainerError', 'CreateContainerError', 'StartError',
                                  'ContainerCannotRun', 'PreCreateHookError',
                                  'PostStartHookError', 'PreStartHookError')
                     OR b.last_exit_code IN (127, 128) THEN 'run_container_error'
                WHEN b.restart_count > 0 AND b.last_exit_code IS DISTINCT FROM 0 THEN 'crash_loop'
           END AS cause, b.*
    FROM box b WHERE NOT b.init OR b.sidecar),
c_containers AS (
    SELECT w.uid, w.cause,
           string_agg(w.name || ': ' || concat_ws(', ',
                   coalesce(w.reason, w.state),
                   CASE WHEN w.restart_count > 0 THEN w.restart_count || ' restarts' END,
                   CASE WHEN w.last_exit_code IS NOT NULL THEN 'last exit ' || w.last_exit_code
                        || coalesce(' (' || w.last_reason || ')', '') END,
                   w.message), '; ' ORDER BY w.name)
               || coalesce('; ' || any_value(e.message), '') AS detail,
           [any_value(s.event_id)] || coalesce(flatten(list(e.ids)), []) AS evidence
    FROM c_waiting w JOIN stuck s USING (uid)
    LEFT JOIN last_event e ON e.uid = w.uid AND e.failure = w.cause
    WHERE w.cause IS NOT NULL GROUP BY w.uid, w.cause),
-- the kubelet's Failed/BackOff Events name a cause the recorded status may not show
c_kubelet_events AS (
    SELECT e.uid, e.failure AS cause,
           string_agg(e.reason || ': ' || e.message, '; ' ORDER BY e.reason) AS detail,
           flatten(list(e.ids ORDER BY e.reason)) AS evidence
    FROM last_event e
    WHERE e.failure IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM c_waiting w WHERE w.uid = e.uid
                      AND w.cause = e.failure)
      -- an init container's failures are the init_container cause
      AND NOT EXISTS (SELECT 1 FROM box b WHERE b.uid = e.uid AND b.init AND NOT b.sidecar
                      AND contains(e.message, 'container ' || b.name || ' '))
    GROUP BY e.uid, 2),
c_init AS (
    SELECT b.uid, 'init_container' AS cause,
           string_agg('init container ' || b.name || ': ' || concat_ws(', ',
                   coalesce(b.reason, b.state),
                   CASE WHEN b.exit_code IS NOT NULL THEN 'exit ' || b.exit_code END,
                   CASE WHEN b.restart_count > 0 THEN b.restart_count || ' restarts' END,
                   CASE WHEN b.last_exit_code IS NOT NULL THEN 'last exit ' || b.last_exit_code
                        || coalesce(' (' || b.last_reason || ')', '') END,
                   b.message), '; ' ORDER BY b.name) AS detail,
           [any_value(s.event_id)] AS evidence
    FROM box b JOIN stuck s USING (uid)
    WHERE b.init AND NOT b.sidecar AND s.problem = 'pending'
      AND (b.state IS DISTINCT FROM 'terminated' OR b.exit_code IS DISTINCT FROM 0)
    GROUP BY b.uid),
c_events AS (
    SELECT e.uid,
           CASE WHEN e.reason IN ('FailedMount', 'FailedAttachVolume', 'FailedMapVolume')
                    THEN 'volume_mount'
                WHEN e.reason = 'Unhealthy' THEN 'readiness' END AS cause,
           string_agg(e.reason || ': ' || e.message, '; ' ORDER BY e.reason) AS detail,
           flatten(list(e.ids ORDER BY e.reason)) AS evidence
    FROM last_event e JOIN stuck s USING (uid)
    WHERE e.reason IN ('FailedMount', 'FailedAttachVolume', 'FailedMapVolume', 'Unhealthy')
    GROUP BY e.uid, 2),
c_readiness_silent AS (
    SELECT s.uid, 'readiness' AS cause,
           'containers running but the pod is not Ready; no probe failure Events seen' AS detail,
           [s.event_id] AS evidence
    FROM stuck s
    WHERE s.problem = 'not_ready'
      AND NOT EXISTS (SELECT 1 FROM c_waiting w WHERE w.uid = s.uid AND w.cause IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM last_event e WHERE e.uid = s.uid AND e.reason = 'Unhealthy')),
c_node AS (
    SELECT s.uid, 'node_not_ready' AS cause, node_problem(s.node_name, n) AS detail,
           [x FOR x IN [s.event_id, n.event_id, n.lease_event_id] IF x IS NOT NULL] AS evidence
    FROM stuck s JOIN node_health_at(ts) n ON n.cluster = s.cluster AND n.name = s.node_name
    WHERE n.not_ready OR n.deleted),
c_gap AS (
    SELECT s.uid, 'recording_gap' AS cause,
           string_agg(gap_label(g.type, g.start_at, g.end_at), '; '
                      ORDER BY g.start_at, g.type) AS detail,
           list(g.evidence_event_id ORDER BY g.start_at, g.type) AS evidence
    FROM stuck s JOIN unseen_stretches g
      ON gap_hides(g, s, ts)
    GROUP BY s.uid),
causes AS (
    SELECT * FROM c_unschedulable UNION ALL SELECT * FROM c_containers
    UNION ALL SELECT * FROM c_kubelet_events UNION ALL SELECT * FROM c_init
    UNION ALL SELECT * FROM c_events
    UNION ALL SELECT * FROM c_readiness_silent UNION ALL SELECT * FROM c_node
    UNION ALL SELECT * FROM c_gap),
found AS (
    SELECT s.uid, coalesce(c.cause, CASE WHEN s.node_name IS NOT NULL THEN 'starting'
                                         ELSE 'unknown' END) AS cause,
           coalesce(c.detail, CASE WHEN s.node_name IS NOT NULL
                                   THEN 'scheduled to ' || s.node_name
                                        || '; no container failure seen yet'
                                   ELSE 'no evidence in the recording' END) AS detail,
           coalesce(c.evidence, [s.event_id]) AS evidence
    FROM stuck s LEFT JOIN causes c USING (uid)),
ranked AS (
    SELECT f.*, cs.score FROM found f JOIN cause_scores cs USING (cause))
SELECT 'Pod' AS kind, s.namespace, s.name, s.uid, s.problem,
       least(s.since, el.first_at) AS since,
       epoch(ts - least(s.since, el.first_at)) AS stuck_for_s, s.node_name AS node,
       list(r.cause ORDER BY r.score DESC, r.cause)[1] AS top_cause,
       list({'cause': r.cause, 'score': r.score, 'detail': r.detail, 'evidence': r.evidence}
            ORDER BY r.score DESC, r.cause) AS causes,
       s.event_id AS evidence_event_id
FROM stuck s JOIN ranked r USING (uid) LEFT JOIN earliest el USING (uid)
GROUP BY ALL
-- a pod whose status was not recorded is reported only on evidence of a failure
HAVING (epoch(ts - least(s.since, el.first_at)) > threshold_s AND s.problem <> 'unknown')
    OR max(r.score) >= 50;
