-- model: view; depends: capacity_dips, owner_refs, pod_lifecycle, raw_events, workloads
-- rollouts: one row per Deployment revision (ReplicaSet) seen rolling out: when it began
-- and completed (the controller observed the change; every replica updated and available),
-- how far it surged, how low availability went, and how many old pods terminated while new
-- pods became ready. Documented in docs/projections.md.
WITH rs AS (
    SELECT r.uid AS rs_uid, r.name AS replicaset, r.cluster, r.namespace,
           o.owner_uid AS deploy_uid,
           o.owner_name AS deployment, w.revision, w.replicas, r.received_at, r.created_at,
           r.rv, r.event_id
    FROM workloads w JOIN raw_events r USING (event_id)
    JOIN owner_refs o ON o.event_id = w.event_id AND o.controller AND o.owner_kind = 'Deployment'
    WHERE w.kind = 'ReplicaSet'),
revisions AS (
    SELECT deploy_uid, any_value(deployment) AS deployment, any_value(cluster) AS cluster,
           any_value(namespace) AS namespace,
           rs_uid, any_value(replicaset) AS replicaset,
           arg_max(revision, rv) AS revision,
           -- a revision starts when its ReplicaSet is created or first scaled up from 0
           coalesce(min(received_at) FILTER (WHERE replicas > 0 AND prev_replicas = 0),
                    min(received_at) FILTER (WHERE created_at >= first_seen - INTERVAL 1 SECOND
                                               AND replicas > 0)) AS started_at
    FROM (SELECT *, lag(replicas) OVER (PARTITION BY rs_uid ORDER BY rv) AS prev_replicas,
                 min(received_at) OVER (PARTITION BY rs_uid) AS first_seen FROM rs)
    GROUP BY deploy_uid, rs_uid),
deploy AS (
    SELECT r.uid AS deploy_uid, r.received_at, r.generation, w.observed_generation,
           w.replicas, w.status_replicas,
           w.updated_replicas, w.available_replicas, w.ready_replicas, w.max_surge,
           w.max_unavailable
    FROM workloads w JOIN raw_events r USING (event_id) WHERE w.kind = 'Deployment'),
windows AS (
    SELECT v.*, (SELECT min(d.received_at) FROM deploy d
                 WHERE d.deploy_uid = v.deploy_uid AND d.received_at >= v.started_at
                   AND d.observed_generation >= d.generation
                   AND d.updated_replicas = d.replicas AND d.available_replicas = d.replicas
                   AND d.status_replicas = d.replicas) AS completed_at
    FROM revisions v WHERE v.started_at IS NOT NULL),
pod_rs AS (
    SELECT DISTINCT o.uid AS pod_uid, o.owner_uid AS rs_uid
    FROM owner_refs o WHERE o.owner_kind = 'ReplicaSet' AND o.controller)
SELECT w.cluster, w.namespace, w.deployment, w.revision, w.replicaset, w.started_at,
       w.completed_at,
       epoch(w.completed_at - w.started_at) AS duration_s,
       (SELECT arg_max(d.replicas, d.received_at) FROM deploy d
        WHERE d.deploy_uid = w.deploy_uid AND d.received_at <= coalesce(w.completed_at, w.started_at + INTERVAL 1 DAY))
           AS desired,
       (SELECT any_value(d.max_surge) FROM deploy d WHERE d.deploy_uid = w.deploy_uid) AS max_surge,
       (SELECT any_value(d.max_unavailable) FROM deploy d WHERE d.deploy_uid = w.deploy_uid)
           AS max_unavailable,
       (SELECT max(d.status_replicas - d.replicas) FROM deploy d
        WHERE d.deploy_uid = w.deploy_uid AND d.received_at BETWEEN w.started_at
              AND coalesce(w.completed_at, 'infinity'::TIMESTAMP)) AS surge_observed,
       (SELECT min(d.available_replicas) FROM deploy d
        WHERE d.deploy_uid = w.deploy_uid AND d.received_at BETWEEN w.started_at
              AND coalesce(w.completed_at, 'infinity'::TIMESTAMP)) AS min_available,
       (SELECT count(*) FROM pod_lifecycle l JOIN pod_rs p ON p.pod_uid = l.uid
        JOIN revisions o ON o.rs_uid = p.rs_uid AND o.deploy_uid = w.deploy_uid
        WHERE o.rs_uid <> w.rs_uid AND l.deletion_requested_at BETWEEN w.started_at
              AND coalesce(w.completed_at, 'infinity'::TIMESTAMP)) AS old_pods_terminating,
       (SELECT count(*) FROM pod_lifecycle l JOIN pod_rs p ON p.pod_uid = l.uid
        WHERE p.rs_uid = w.rs_uid AND l.ready_at BETWEEN w.started_at
              AND coalesce(w.completed_at, 'infinity'::TIMESTAMP)) AS new_pods_ready,
       (SELECT count(*) FROM capacity_dips c
        WHERE c.cluster = w.cluster AND c.namespace = w.namespace
          AND c.deployment = w.deployment
          AND c.start_at BETWEEN w.started_at AND coalesce(w.completed_at, 'infinity'::TIMESTAMP))
           AS capacity_dips
FROM windows w
