-- model: view; depends: endpoint_membership, owner_refs, raw_events, workloads
-- Capacity dips: stretches when a Service had fewer ready endpoints than its Deployment's
-- desired replicas, after it had first reached them (new pods Ready after old ones left).
-- A Service is one cluster's: clusters share namespace and Service names.
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
GROUP BY cluster, namespace, service, island
