-- The rollout race (design §5): for each terminating pod behind a Service, when its
-- endpoint stopped being ready (turned not-ready/terminating, or left the slice) versus
-- when its containers stopped. kube-proxy's own programming delay is invisible in watch
-- events, so containers stopping less than margin_s after the endpoint went off are
-- flagged too. Documented in docs/projections.md.

CREATE OR REPLACE MACRO races_with(margin_s) AS TABLE
-- (the last time each pod turned ready, grouped once: a window over every membership row
-- cost a quarter of races at 1M events)
WITH last_ready AS (
    SELECT pod_uid, max(since_at) AS last_ready_at
    FROM endpoint_membership WHERE state = 'ready' GROUP BY pod_uid),
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
    WHERE t.step IN ('deletion_requested', 'containers_stopped') GROUP BY t.uid)
SELECT l.namespace, l.pod, l.uid, o.service, l.deletion_requested_at, o.endpoint_off_at,
       o.off_state, l.containers_stopped_at,
       epoch(o.endpoint_off_at - l.containers_stopped_at) AS exposed_s,
       epoch(o.endpoint_off_at - l.deletion_requested_at) AS request_to_endpoint_off_s,
       CASE WHEN o.endpoint_off_at IS NULL OR l.containers_stopped_at IS NULL THEN 'unknown'
            -- equal times (1 s derived times) are ordered by resourceVersion
            WHEN l.containers_stopped_at < o.endpoint_off_at
                 OR (l.containers_stopped_at = o.endpoint_off_at AND s.stopped_rv < o.off_rv)
                THEN 'stopped_before_endpoint_off'
            WHEN epoch(l.containers_stopped_at - o.endpoint_off_at) < margin_s
                THEN 'within_margin'
            ELSE 'ok' END AS verdict,
       [s.request_event_id, o.off_event_id, s.stopped_event_id] AS evidence
FROM pod_lifecycle l JOIN last_ready v ON v.pod_uid = l.uid
LEFT JOIN off o ON o.pod_uid = l.uid
LEFT JOIN steps s ON s.uid = l.uid
WHERE l.deletion_requested_at IS NOT NULL;

CREATE OR REPLACE VIEW races AS SELECT * FROM races_with(1.0);

-- The preStop delay that would have covered the race: the 99th percentile of "deletion
-- requested → endpoint off" plus the dataplane margin, rounded up.
CREATE OR REPLACE MACRO suggested_prestop_s(p99_request_to_off_s, margin_s) AS
    ceil(greatest(p99_request_to_off_s, 0) + margin_s)::INTEGER;

-- The distribution of "deletion requested → endpoint off" and the suggested preStop delay.
CREATE OR REPLACE MACRO race_summary_with(margin_s) AS TABLE
SELECT count(*) AS pods,
       count(*) FILTER (WHERE verdict = 'stopped_before_endpoint_off') AS stopped_before_endpoint_off,
       count(*) FILTER (WHERE verdict = 'within_margin') AS within_margin,
       count(*) FILTER (WHERE verdict = 'ok') AS ok,
       count(*) FILTER (WHERE verdict = 'unknown') AS unknown,
       quantile_cont(request_to_endpoint_off_s, 0.5) AS p50_request_to_endpoint_off_s,
       quantile_cont(request_to_endpoint_off_s, 0.9) AS p90_request_to_endpoint_off_s,
       quantile_cont(request_to_endpoint_off_s, 0.99) AS p99_request_to_endpoint_off_s,
       max(request_to_endpoint_off_s) AS max_request_to_endpoint_off_s,
       max(exposed_s) FILTER (WHERE exposed_s > 0) AS max_exposed_s,
       suggested_prestop_s(quantile_cont(request_to_endpoint_off_s, 0.99), margin_s)
           AS suggested_prestop_s
FROM races_with(margin_s);

-- Capacity dips: stretches when a Service had fewer ready endpoints than its Deployment's
-- desired replicas, after it had first reached them (new pods Ready after old ones left).
-- A Service is one cluster's: clusters share namespace and Service names.
CREATE OR REPLACE VIEW capacity_dips AS
WITH changes AS (
    SELECT *, lag(state) OVER (PARTITION BY slice_uid, pod_uid ORDER BY since_at) AS prev
    FROM endpoint_membership),
deltas AS (
    SELECT cluster, namespace, service, since_at AS time, pod,
           CASE WHEN state = 'ready' AND prev IS DISTINCT FROM 'ready' THEN 1
                WHEN state <> 'ready' AND prev = 'ready' THEN -1 ELSE 0 END AS delta
    FROM changes),
counts AS (
    SELECT cluster, namespace, service, time, sum(delta) AS delta,
           list(pod ORDER BY pod) FILTER (WHERE delta < 0) AS pods_off,
           list(pod ORDER BY pod) FILTER (WHERE delta > 0) AS pods_on
    FROM deltas WHERE delta <> 0 GROUP BY ALL),
running AS (
    SELECT *, sum(delta) OVER (PARTITION BY cluster, namespace, service ORDER BY time)
               AS ready_count
    FROM counts),
service_deployment AS (
    SELECT m.cluster, m.namespace, m.service, any_value(d.owner_uid) AS deploy_uid,
           any_value(d.owner_name) AS deployment
    FROM endpoint_membership m
    JOIN owner_refs p ON p.uid = m.pod_uid AND p.owner_kind = 'ReplicaSet' AND p.controller
    JOIN owner_refs d ON d.uid = p.owner_uid AND d.owner_kind = 'Deployment' AND d.controller
    GROUP BY ALL),
desired AS (
    SELECT r.uid AS deploy_uid, r.received_at, w.replicas
    FROM workloads w JOIN raw_events r USING (event_id) WHERE w.kind = 'Deployment'),
sized AS (
    SELECT c.*, sd.deployment, d.replicas AS desired
    FROM running c JOIN service_deployment sd USING (cluster, namespace, service)
    ASOF JOIN desired d ON d.deploy_uid = sd.deploy_uid AND c.time >= d.received_at),
flagged AS (
    SELECT *, max(CASE WHEN ready_count >= desired THEN 1 ELSE 0 END)
                  OVER (PARTITION BY cluster, namespace, service ORDER BY time) AS reached,
              ready_count < desired AS below,
              lead(time) OVER (PARTITION BY cluster, namespace, service ORDER BY time) AS next_at
    FROM sized),
islands AS (
    SELECT *, sum(CASE WHEN below THEN 0 ELSE 1 END)
                  OVER (PARTITION BY cluster, namespace, service ORDER BY time) AS island
    FROM flagged WHERE reached = 1)
SELECT cluster, namespace, service, any_value(deployment) AS deployment, max(desired) AS desired,
       min(ready_count) AS min_ready, min(time) AS start_at, max(next_at) AS end_at,
       epoch(max(next_at) - min(time)) AS duration_s,
       flatten(list(pods_off ORDER BY time) FILTER (WHERE pods_off IS NOT NULL)) AS pods_off,
       flatten(list(pods_on ORDER BY time) FILTER (WHERE pods_on IS NOT NULL)) AS pods_on
FROM islands WHERE below
GROUP BY cluster, namespace, service, island;
