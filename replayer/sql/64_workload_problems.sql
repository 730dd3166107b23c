-- workload_problems_at(ts): workloads that cannot make their pods at ts —
--   not_created: a ReplicaSet, Job, StatefulSet or DaemonSet with fewer pods than desired
--     whose controller reports FailedCreate Events or a ReplicaFailure condition (quota,
--     admission webhook, Pod Security), problem `not_created`;
--   rollout_stalled: a Deployment whose Progressing condition is False with reason
--     ProgressDeadlineExceeded, problem `rollout_stalled`.
-- Same shape as not_running_at. Documented in docs/projections.md.

CREATE OR REPLACE MACRO workload_problems_at(ts) AS TABLE
WITH live AS (
    SELECT l.kind, l.namespace, l.name, l.uid, l.event_id, l.topic, w.replicas,
           w.status_replicas
    FROM state_at(ts) l JOIN workloads w USING (event_id)
    -- (the kinds judged below, filtered in the scan: most live objects are Events)
    WHERE l.kind IN ('ReplicaSet', 'Job', 'StatefulSet', 'DaemonSet', 'Deployment')),
failed_create AS (
    SELECT e.regarding_uid AS uid, arg_max(e.message, e.event_id) AS message,
           min(coalesce(e.first_time, r.received_at)) AS since,
           list(e.event_id ORDER BY e.event_id DESC)[1:3] AS ids
    FROM k8s_events e JOIN raw_events r USING (event_id)
    WHERE e.reason = 'FailedCreate' AND r.received_at <= ts GROUP BY ALL),
conds AS (
    SELECT l.uid, c.type, c.status, c.reason, c.message, c.last_transition
    FROM live l JOIN conditions c USING (event_id)),
not_created AS (
    SELECT l.kind, l.namespace, l.name, l.uid, 'not_created' AS problem,
           coalesce(f.since, c.last_transition) AS since, 'not_created' AS cause,
           concat_ws(' — ', coalesce(l.status_replicas, 0) || ' of ' || l.replicas || ' pods',
                     coalesce(f.message, c.reason || ': ' || c.message)) AS detail,
           [l.event_id] || coalesce(f.ids, []) AS evidence, l.event_id
    FROM live l LEFT JOIN failed_create f USING (uid)
    LEFT JOIN conds c ON c.uid = l.uid AND c.type = 'ReplicaFailure' AND c.status = 'True'
    WHERE l.kind IN ('ReplicaSet', 'Job', 'StatefulSet', 'DaemonSet')
      AND (f.uid IS NOT NULL OR c.uid IS NOT NULL)
      AND coalesce(l.status_replicas, 0) < coalesce(l.replicas, 1)),
stalled AS (
    SELECT l.kind, l.namespace, l.name, l.uid, 'rollout_stalled' AS problem,
           c.last_transition AS since, 'rollout_stalled' AS cause,
           c.reason || ': ' || c.message AS detail, [l.event_id] AS evidence, l.event_id
    FROM live l JOIN conds c ON c.uid = l.uid AND c.type = 'Progressing'
         AND c.status = 'False' AND c.reason = 'ProgressDeadlineExceeded'
    WHERE l.kind = 'Deployment'),
found AS (SELECT * FROM not_created UNION ALL SELECT * FROM stalled)
SELECT f.kind, f.namespace, f.name, f.uid, f.problem, f.since, epoch(ts - f.since) AS stuck_for_s,
       NULL::VARCHAR AS node, f.cause AS top_cause,
       [{'cause': f.cause, 'score': cs.score, 'detail': f.detail, 'evidence': f.evidence}]
           AS causes,
       f.event_id AS evidence_event_id
FROM found f JOIN cause_scores cs USING (cause);
