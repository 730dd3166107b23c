-- model: macro(ts, threshold_s := 60); depends: conditions, containers, failed_create_sub, k8s_events, node_findings_at, owner_refs, pods, raw_events, readiness_failures_at, service_findings_at, state_at, versions_at, volumes, workloads
-- object_findings_at(ts, threshold_s := 60): what each workload and storage object is at
-- ts, one row per finding, the decisive message in `detail` and the records that show it in
-- `evidence`. `stuck` is true where the object cannot get on by itself (what problems_at
-- lists); false for a finished or waiting state — a Job that failed or completed, a
-- suspended Job, a claim waiting for its first consumer, a released volume — which is never
-- stuck but explained all the same. Findings (cause, from cause_scores; `state` names it
-- where no cause applies):
--   not_created: a ReplicaSet, Job, StatefulSet or DaemonSet with fewer pods than desired
--     whose controller reports FailedCreate Events (quota, admission webhook, Pod Security,
--     a missing ServiceAccount: the sub-reason failed_create_sub reads from the message
--     leads the detail) or a ReplicaFailure condition — unless a later
--     SuccessfulCreate of a pod resolved it or the Job has finished (then it is history);
--     a Deployment by the ReplicaFailure condition its controller copies from its new
--     ReplicaSet's;
--   rollout_stalled: a Deployment whose Progressing condition is False with reason
--     ProgressDeadlineExceeded;
--   job_failed: a Job's Failed condition (or the job-controller's Warning Event of the same
--     reason): BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy,
--     MaxFailedIndexesExceeded, FailedIndexes — with the pods it created (its SuccessfulCreate
--     Events, counted) and that failed (status.failed), its last failed pod, exit code and
--     message; state `complete` for a Complete condition (or the Completed Event);
--   job_suspended: a Job with Suspended=True (or spec.suspend);
--   statefulset_update_held: a StatefulSet whose updateRevision is not its currentRevision,
--     not every pod updated, a pod of it not Ready (with its readiness probe failure), and
--     no status change for threshold_s (the controller updates one pod at a time and waits
--     for each to be Running and Ready); since the first version naming the revision;
--   daemonset_pods_missing: a DaemonSet with fewer pods available than desired (one per
--     eligible node) for threshold_s (since its first version short of them, however often
--     the controller rewrote its status meanwhile), with the controller's latest Warning
--     (FailedCreate, FailedDaemonPod — counted: each is a failed pod it killed and
--     recreated) and a missing pod's reason (the
--     kubelet's rejection of a Failed one), named with the node it is for (its node, or the
--     one its node affinity pins it to);
--   storage_class_missing / provisioning_failed / external_provisioning /
--     waiting_for_consumer: a Pending PersistentVolumeClaim, by the PV controller's latest
--     Event about it (ProvisioningFailed naming a StorageClass not found — where the
--     recording holds StorageClasses, the claim's class absent from their list at ts,
--     the list named — / other ProvisioningFailed, FailedBinding or VolumeMismatch (the
--     volume it names does not fit it) / ExternalProvisioning /
--     WaitForFirstConsumer or WaitForPodScheduled);
--   volume_missing: a claim in phase Bound whose volume is not there at ts (never
--     recorded, or deleted: when, with its record's attribution), where the recording watched PersistentVolumes,
--     with the pods waiting on it (not running; each with its PodScheduled=False message);
--   volume_misbound: a claim, Pending or Bound, whose volume's spec.claimRef names another
--     claim (before the PV controller marks a bound one Lost with ClaimMisbound; or refused
--     with FailedBinding "already bound to a different claim." for good), with that Event
--     and the pods waiting on it;
--   pvc_lost: a claim in phase Lost (ClaimLost), naming its volume; pv_released: a volume
--     Released by its claim (reclaim policy Retain: an administrator must act — stuck only
--     with policy Delete, past threshold_s: its deleter has not removed it); pv_failed: a
--     volume in phase Failed (VolumeFailedDelete, VolumeFailedRecycle);
--   no_ready_endpoints: a Service whose selector matches no Ready pod (service_findings_at);
--   node_not_ready: a Node whose Ready condition is not True or whose Lease is not renewed,
--     with the condition's message (node_findings_at).
-- `since` is the earliest evidence of the state: the condition's lastTransitionTime, the
-- deciding Event's first time, the current status's first receipt.
-- Documented in docs/projections.md.
WITH live AS MATERIALIZED (
    SELECT l.kind, l.namespace, l.name, l.uid, l.event_id, l.received_at, l.created_at,
           w.replicas, w.status_replicas, w.updated_replicas, w.ready_replicas,
           w.available_replicas, w.suspend, w.failed_pods, w.backoff_limit,
           w.backoff_limit_per_index, w.max_failed_indexes, w.failed_indexes, w.completed_indexes,
           w.current_revision, w.update_revision
    FROM state_at(ts) l JOIN workloads w USING (event_id)
    -- (the kinds judged below, filtered in the scan: most live objects are Events)
    WHERE l.kind IN ('ReplicaSet', 'Job', 'StatefulSet', 'DaemonSet', 'Deployment')),
conds AS (
    SELECT c.uid, c.type, c.status, c.reason, c.message, c.last_transition
    FROM conditions c WHERE c.event_id IN (SELECT event_id FROM live)),
-- the workloads whose Events a finding reads: Jobs, and controllers short of pods (one
-- with all its pods can be neither not_created nor pods_missing: the Events of a long
-- recording's healthy workloads, most of its Events, are not read)
judged AS (
    SELECT uid FROM live
    WHERE kind = 'Job'
       OR (kind IN ('ReplicaSet', 'StatefulSet', 'DaemonSet')
           AND coalesce(status_replicas, 0) < coalesce(replicas, 1))
       OR (kind = 'DaemonSet' AND coalesce(available_replicas, 0) < replicas)),
-- Events about the objects judged and the claims and volumes, received by ts: per object
-- and reason, the latest message, the first and last time and how often it was reported
object_events AS MATERIALIZED (
    SELECT e.regarding_uid AS uid, e.reason, any_value(e.type) AS event_type,
           arg_max(e.message, coalesce(e.last_time, e.received_at)) AS message,
           min(coalesce(e.first_time, e.received_at)) AS first_at,
           max(coalesce(e.last_time, e.first_time, e.received_at)) AS last_at,
           sum(e.count) FILTER (WHERE e.is_last) AS count,
           list(e.event_id ORDER BY e.event_id DESC)[1:3] AS ids
    -- (two disjoint reads, not one with OR: an OR around the IN made it a mark join over
    -- every workload Event of the recording, 125,340 rows at the bench's 1M end)
    FROM (SELECT e.*, r.received_at,
                 row_number() OVER (PARTITION BY e.uid ORDER BY e.event_id DESC) = 1 AS is_last
          FROM (FROM k8s_events WHERE regarding_kind = 'PersistentVolumeClaim'
                UNION ALL
                FROM k8s_events WHERE regarding_kind = 'PersistentVolume'
                UNION ALL
                FROM k8s_events WHERE regarding_kind IN ('ReplicaSet', 'Job', 'StatefulSet', 'DaemonSet')
                                  AND regarding_uid IN (SELECT uid FROM judged)) e
          JOIN raw_events r USING (event_id)
          WHERE r.received_at <= ts) e
    GROUP BY ALL),
-- a pod created after the FailedCreate: the controller got past what blocked it
created_pod AS (
    SELECT uid, max(last_at) AS last_at FROM object_events
    WHERE reason = 'SuccessfulCreate'
      AND (message LIKE 'Created pod: %' OR message LIKE 'create Pod % successful')
    GROUP BY uid),
finished AS (
    SELECT uid, arg_max({'type': type, 'reason': reason, 'message': message,
                         'at': last_transition}, last_transition) AS c
    FROM conds WHERE type IN ('Complete', 'Failed') AND status = 'True' GROUP BY uid),
-- a Job's end from the job-controller's Event when no status says it (a pasted stub)
job_end_events AS (
    SELECT e.uid, arg_max(e, e.last_at) AS e FROM object_events e
    WHERE e.reason IN ('BackoffLimitExceeded', 'DeadlineExceeded', 'PodFailurePolicy',
                       'MaxFailedIndexesExceeded', 'FailedIndexes', 'Completed')
    GROUP BY e.uid),
not_created AS (
    SELECT l.kind, l.namespace, l.name, l.uid, 'not_created' AS state, 'not_created' AS cause,
           coalesce(f.first_at, c.last_transition) AS since,
           -- what refused the pods (the admission error the message quotes) leads the detail
           concat_ws(' — ', failed_create_sub(coalesce(f.message, c.message)),
                     coalesce(l.status_replicas, 0) || ' of ' || l.replicas || ' pods',
                     coalesce(f.message || CASE WHEN f.count > 1
                                                THEN ' (×' || f.count || ')' ELSE '' END,
                              c.reason || ': ' || c.message)) AS detail,
           [l.event_id] || coalesce(f.ids, []) AS evidence, l.event_id, true AS stuck
    FROM live l
    LEFT JOIN object_events f ON f.uid = l.uid AND f.reason = 'FailedCreate'
    LEFT JOIN created_pod p ON p.uid = l.uid
    LEFT JOIN conds c ON c.uid = l.uid AND c.type = 'ReplicaFailure' AND c.status = 'True'
    WHERE l.kind IN ('ReplicaSet', 'Job', 'StatefulSet', 'DaemonSet', 'Deployment')
      AND ((f.uid IS NOT NULL AND (p.last_at IS NULL OR p.last_at < f.last_at))
           OR c.uid IS NOT NULL)
      AND l.uid NOT IN (SELECT uid FROM finished)
      AND l.uid NOT IN (SELECT uid FROM job_end_events)
      AND coalesce(l.status_replicas, 0) < coalesce(l.replicas, 1)),
stalled AS (
    SELECT l.kind, l.namespace, l.name, l.uid, 'rollout_stalled' AS state,
           'rollout_stalled' AS cause, c.last_transition AS since,
           c.reason || ': ' || c.message AS detail, [l.event_id] AS evidence, l.event_id,
           true AS stuck
    FROM live l JOIN conds c ON c.uid = l.uid AND c.type = 'Progressing'
         AND c.status = 'False' AND c.reason = 'ProgressDeadlineExceeded'
    WHERE l.kind = 'Deployment'),
-- the Job's pods that failed (deleted ones too), the last one first
job_pods AS (
    SELECT o.owner_uid AS job_uid, v.name, v.event_id, v.received_at,
           row_number() OVER (PARTITION BY o.owner_uid ORDER BY v.received_at DESC) AS n
    FROM versions_at(ts) v JOIN pods p USING (event_id)
    JOIN owner_refs o ON o.event_id = v.event_id AND o.owner_kind = 'Job' AND o.controller
    WHERE v.kind = 'Pod' AND p.phase = 'Failed'
      AND o.owner_uid IN (SELECT uid FROM live WHERE kind = 'Job')),
last_failed AS (
    SELECT j.job_uid, j.name, j.event_id,
           arg_min({'name': k.name, 'exit_code': k.exit_code, 'reason': k.reason,
                    'message': k.message}, k.init) AS container
    FROM job_pods j LEFT JOIN containers k
      ON k.event_id = j.event_id AND k.state = 'terminated' AND k.exit_code <> 0
    WHERE j.n = 1 GROUP BY ALL),
-- the pods a Job made (its SuccessfulCreate Events, counted) and lost (status.failed)
job_pods_made AS (
    SELECT l.uid, m.ids,
           CASE WHEN m.count IS NULL THEN l.failed_pods || ' failed pods'
                ELSE m.count || CASE m.count WHEN 1 THEN ' pod' ELSE ' pods' END || ' created'
                     || coalesce(', ' || l.failed_pods || ' failed', '') END AS phrase
    FROM live l LEFT JOIN object_events m ON m.uid = l.uid AND m.reason = 'SuccessfulCreate'
    WHERE l.kind = 'Job'),
job_end AS (
    SELECT l.kind, l.namespace, l.name, l.uid,
           CASE WHEN coalesce(f.c.type, CASE WHEN e.e.reason = 'Completed' THEN 'Complete'
                                             ELSE 'Failed' END) = 'Complete'
                THEN 'complete' ELSE 'failed' END AS state,
           CASE WHEN state = 'failed' THEN 'job_failed' END AS cause,
           coalesce(f.c.at, e.e.first_at) AS since,
           concat_ws('; ', coalesce(f.c.reason || ': ' || f.c.message,
                                    e.e.reason || ': ' || e.e.message, f.c.type),
                     CASE WHEN state = 'complete' THEN l.ready_replicas || ' succeeded' END,
                     -- per index (backoffLimit is then MaxInt32, not the limit that applied)
                     CASE WHEN state = 'failed' AND l.backoff_limit_per_index IS NOT NULL THEN
                         'failed indexes ' || coalesce(l.failed_indexes, 'none')
                         || ' (backoffLimitPerIndex ' || l.backoff_limit_per_index
                         || coalesce(', maxFailedIndexes ' || l.max_failed_indexes, '') || ')'
                         || coalesce(', completed ' || l.completed_indexes, '')
                         || coalesce('; ' || m.phrase, '')
                          WHEN state = 'failed' THEN
                         nullif(concat_ws(' ', m.phrase,
                                          '(backoffLimit ' || l.backoff_limit || ')'), '') END,
                     CASE WHEN state = 'failed' THEN coalesce(
                         'last failed pod ' || p.name || coalesce(
                             ': container ' || p.container.name || ' exit '
                             || p.container.exit_code
                             || coalesce(' (' || p.container.reason || ')', '')
                             || coalesce(' — ' || p.container.message, ''), ''),
                         'its pods were not recorded') END) AS detail,
           [l.event_id] || coalesce(e.e.ids, [])
               || CASE WHEN p.event_id IS NOT NULL THEN [p.event_id] ELSE [] END
               || CASE WHEN state = 'failed' THEN coalesce(m.ids, []) ELSE [] END AS evidence,
           l.event_id, false AS stuck
    FROM live l LEFT JOIN finished f USING (uid) LEFT JOIN job_end_events e USING (uid)
    LEFT JOIN last_failed p ON p.job_uid = l.uid
    LEFT JOIN job_pods_made m USING (uid)
    WHERE l.kind = 'Job' AND (f.uid IS NOT NULL OR e.uid IS NOT NULL)),
suspended AS (
    SELECT l.kind, l.namespace, l.name, l.uid, 'suspended' AS state, 'job_suspended' AS cause,
           coalesce(c.last_transition, l.received_at) AS since,
           coalesce(c.reason || ': ' || c.message, 'spec.suspend: true')
               || ' — ' || coalesce(l.status_replicas, 0) || ' pods active' AS detail,
           [l.event_id] AS evidence, l.event_id, false AS stuck
    FROM live l LEFT JOIN conds c ON c.uid = l.uid AND c.type = 'Suspended'
    WHERE l.kind = 'Job' AND (c.status = 'True' OR (c.uid IS NULL AND l.suspend))
      AND l.uid NOT IN (SELECT uid FROM finished)),
-- the workload's pods at ts that are not Ready (for a held update, the one it waits on)
unready_pods AS (
    -- (a pod not scheduled: the scheduler's message; else its Ready condition)
    SELECT o.owner_uid, arg_max({'name': s.name, 'event_id': s.event_id,
                                 -- a pod the kubelet refused: its status says why
                                 'why': coalesce(CASE WHEN p.phase = 'Failed' THEN 'Failed, '
                                                      || p.status_reason || coalesce(': '
                                                      || p.status_message, '') END,
                                                 p.phase || ', ' || sc.reason
                                                     || coalesce(': ' || sc.message, ''),
                                                 concat_ws('; ', c.reason || coalesce(': ' || c.message, ''),
                                                           f.line),
                                                 p.phase),
                                 'probe_event_id': f.event_id,
                                 'for_node': coalesce(p.node_name, p.affinity_node)}, s.name) AS pod
    FROM state_at(ts) s JOIN pods p USING (event_id)
    JOIN owner_refs o ON o.event_id = s.event_id AND o.controller
         AND o.owner_kind IN ('StatefulSet', 'DaemonSet')
    LEFT JOIN conditions c ON c.event_id = s.event_id AND c.type = 'Ready'
    LEFT JOIN conditions sc ON sc.event_id = s.event_id AND sc.type = 'PodScheduled'
         AND sc.status = 'False'
    LEFT JOIN readiness_failures_at(ts) f ON f.uid = s.uid
    WHERE s.kind = 'Pod' AND coalesce(c.status, 'False') <> 'True'
      AND o.owner_uid IN (SELECT uid FROM live WHERE kind IN ('StatefulSet', 'DaemonSet'))
    GROUP BY o.owner_uid),
held AS (
    SELECT l.kind, l.namespace, l.name, l.uid, 'update_held' AS state,
           'statefulset_update_held' AS cause,
           -- since the update began: the first version naming its revision
           (SELECT min(v.received_at) FROM raw_events v JOIN workloads r USING (event_id)
            WHERE v.uid = l.uid AND v.received_at <= ts
              AND r.update_revision = l.update_revision) AS since,
           'update to revision ' || l.update_revision || ' held at '
               || coalesce(l.updated_replicas, 0) || ' of ' || l.replicas || ' pods ('
               || coalesce(l.ready_replicas, 0) || ' Ready): pod ' || u.pod.name
               || ' is not Ready (' || u.pod.why || ')' AS detail,
           list_filter([l.event_id, u.pod.event_id, u.pod.probe_event_id],
                       lambda x: x IS NOT NULL) AS evidence,
           l.event_id, true AS stuck
    FROM live l JOIN unready_pods u ON u.owner_uid = l.uid
    WHERE l.kind = 'StatefulSet' AND l.update_revision <> l.current_revision
      AND coalesce(l.updated_replicas, 0) < l.replicas
      AND l.received_at <= ts - to_seconds(threshold_s)),
-- since when a DaemonSet has had fewer pods available than desired: its first version after
-- the last one that had them all (a controller that kills and recreates a failed pod writes
-- a new status each round, and is stuck all the same)
missing_since AS (
    SELECT l.uid, min(r.received_at) AS since
    FROM live l JOIN raw_events r ON r.uid = l.uid AND r.received_at <= ts
    JOIN workloads w ON w.event_id = r.event_id
    WHERE l.kind = 'DaemonSet' AND coalesce(l.available_replicas, 0) < l.replicas
      AND r.received_at > coalesce((
          SELECT max(h.received_at) FROM raw_events h JOIN workloads hw ON hw.event_id = h.event_id
          WHERE h.uid = l.uid AND h.received_at <= ts
            AND coalesce(hw.available_replicas, 0) >= coalesce(hw.replicas, 0)), '-infinity'::TIMESTAMP)
    GROUP BY l.uid),
missing AS (
    SELECT l.kind, l.namespace, l.name, l.uid, 'pods_missing' AS state,
           'daemonset_pods_missing' AS cause,
           -- a Warning of this stretch may be older than its first recorded version
           least(m.since, CASE WHEN lw.w.last_at >= m.since THEN lw.w.first_at END) AS since,
           concat_ws(' — ', coalesce(l.available_replicas, 0) || ' of ' || l.replicas
                                || ' pods available (' || coalesce(l.status_replicas, 0)
                                || ' scheduled, ' || coalesce(l.ready_replicas, 0) || ' Ready)',
                     lw.w.reason || ': ' || lw.w.message
                         -- each FailedDaemonPod is a failed pod the controller killed to recreate
                         || CASE WHEN lw.w.reason = 'FailedDaemonPod' AND lw.w.count > 1
                                 THEN ' (×' || lw.w.count || ' since '
                                      || strftime(lw.w.first_at, '%Y-%m-%dT%H:%M:%SZ')
                                      || ': ' || lw.w.count || ' failed pods killed and recreated)'
                                 ELSE '' END,
                     'pod ' || u.pod.name || coalesce(' for node ' || u.pod.for_node, '')
                         || ' not Ready (' || u.pod.why || ')') AS detail,
           [l.event_id] || coalesce(lw.w.ids, []) || list_filter(
               [u.pod.event_id, u.pod.probe_event_id], lambda x: x IS NOT NULL) AS evidence,
           l.event_id, true AS stuck
    FROM live l JOIN missing_since m USING (uid) LEFT JOIN unready_pods u ON u.owner_uid = l.uid
    LEFT JOIN (SELECT uid, arg_max(e, e.last_at) AS w FROM object_events e
               WHERE e.event_type = 'Warning' GROUP BY uid) lw USING (uid)
    WHERE m.since <= ts - to_seconds(threshold_s)),
-- claims and volumes
storage AS MATERIALIZED (
    SELECT l.kind, l.cluster, l.namespace, l.name, l.uid, l.event_id, l.received_at, v.phase,
           v.storage_class, v.reclaim_policy, v.claim_namespace, v.claim_name,
           v.volume_name, v.status_reason, v.status_message
    FROM state_at(ts) l JOIN volumes v USING (event_id)
    WHERE l.kind IN ('PersistentVolumeClaim', 'PersistentVolume')),
claim_events AS (
    SELECT uid, arg_max(e, e.last_at) AS e FROM object_events e
    WHERE e.reason IN ('ProvisioningFailed', 'FailedBinding', 'VolumeMismatch',
                       'ExternalProvisioning', 'WaitForFirstConsumer', 'WaitForPodScheduled')
    GROUP BY uid),
-- the StorageClasses of each cluster at ts, where the recording watched them (a cluster
-- with a StorageClass record): the PV controller's "storageclass … not found" may be older
-- than the class, the list says whether it exists now
classes AS (
    SELECT r.cluster, list(l.name ORDER BY l.name) FILTER (WHERE l.name IS NOT NULL) AS names
    FROM (SELECT DISTINCT cluster FROM raw_events WHERE kind = 'StorageClass'
          AND received_at <= ts) r
    LEFT JOIN state_at(ts) l ON l.kind = 'StorageClass' AND l.cluster = r.cluster
    GROUP BY r.cluster),
-- a claim, Pending or Bound, naming a volume whose spec.claimRef names another claim: the
-- PV controller (pkg/controller/volume/persistentvolume/pv_controller.go) marks a bound one
-- Lost with ClaimMisbound (syncBoundClaim) and refuses an unbound one with FailedBinding
-- "volume %q already bound to a different claim." at every resync (syncUnboundClaim) —
-- neither frees the volume; since the claim's first version naming it
misbound_claims AS (
    SELECT c.kind, c.namespace, c.name, c.uid, c.event_id, coalesce(c.phase, 'Pending') AS phase,
           c.volume_name, v.claim_namespace || '/' || v.claim_name AS owner,
           v.event_id AS volume_event_id,
           (SELECT min(r.received_at) FROM raw_events r JOIN volumes x USING (event_id)
            WHERE r.uid = c.uid AND r.received_at <= ts AND x.volume_name = c.volume_name)
               AS named_at
    FROM storage c JOIN storage v ON v.kind = 'PersistentVolume' AND v.cluster = c.cluster
                                 AND v.name = c.volume_name
    WHERE c.kind = 'PersistentVolumeClaim' AND coalesce(c.phase, 'Pending') IN ('Pending', 'Bound')
      AND c.volume_name <> '' AND v.claim_name <> ''
      AND (v.claim_namespace IS DISTINCT FROM c.namespace OR v.claim_name <> c.name)),
pending_claims AS (
    SELECT s.kind, s.namespace, s.name, s.uid, c.e.reason AS reason, c.e.message AS message,
           c.e.first_at AS first_at, c.e.count AS count, c.e.ids AS ids, s.event_id,
           CASE WHEN k.cluster IS NULL
                THEN regexp_extract(c.e.message,
                                    '(?i)storageclass(?:\.storage\.k8s\.io)? "([^"]+)" not found', 1)
                -- only provisioning needs the class to exist: a claim binding a
                -- pre-provisioned volume may name a class no StorageClass defines
                WHEN c.e.reason = 'ProvisioningFailed' AND s.storage_class <> ''
                     AND NOT list_contains(coalesce(k.names, []), s.storage_class)
                THEN s.storage_class ELSE '' END AS missing_class,
           k.names AS classes
    FROM storage s JOIN claim_events c USING (uid)
    LEFT JOIN classes k ON k.cluster = s.cluster
    WHERE s.kind = 'PersistentVolumeClaim' AND coalesce(s.phase, 'Pending') = 'Pending'
      AND s.uid NOT IN (SELECT uid FROM misbound_claims)),
claim_findings AS (
    SELECT kind, namespace, name, uid,
           CASE WHEN reason IN ('WaitForFirstConsumer', 'WaitForPodScheduled')
                THEN 'claim_waiting' ELSE 'claim_pending' END AS state,
           CASE WHEN missing_class <> '' THEN 'storage_class_missing'
                WHEN reason IN ('ProvisioningFailed', 'FailedBinding', 'VolumeMismatch')
                    THEN 'provisioning_failed'
                WHEN reason = 'ExternalProvisioning' THEN 'external_provisioning'
                ELSE 'waiting_for_consumer' END AS cause,
           first_at AS since,
           CASE WHEN missing_class <> '' THEN 'StorageClass "' || missing_class
                    || '" does not exist' || coalesce(' (the StorageClasses: '
                        || nullif(array_to_string(classes, ', '), '') || ')', '')
                    || ' — ' ELSE '' END
               || reason || ': ' || message
               || CASE WHEN count > 1 THEN ' (×' || count || ')' ELSE '' END AS detail,
           [event_id] || ids AS evidence, event_id,
           -- a claim waiting for its first consumer waits by design
           state = 'claim_pending' AS stuck
    FROM pending_claims
    -- an external provisioner is given threshold_s before it counts as stuck
    WHERE reason <> 'ExternalProvisioning' OR first_at <= ts - to_seconds(threshold_s)),
-- a claim Bound to a volume absent at ts, where the recording watched PersistentVolumes (a
-- record of the kind in its cluster): the PV controller would mark it Lost; while it has not
-- (or does not run), the claim says Bound and the scheduler refuses every pod using it
unbacked_claims AS (
    SELECT s.kind, s.namespace, s.name, s.uid, s.event_id, s.volume_name,
           (SELECT min(r.received_at) FROM raw_events r JOIN volumes v USING (event_id)
            WHERE r.uid = s.uid AND r.received_at <= ts AND v.phase = 'Bound'
              AND v.volume_name = s.volume_name) AS bound_at,
           (SELECT arg_max({'event_id': d.event_id, 'at': d.received_at,
                            'by': concat_ws(': ', d.component, d.attribution)}, d.received_at)
            FROM versions_at(ts) d
            WHERE d.kind = 'PersistentVolume' AND d.cluster = s.cluster
              AND d.name = s.volume_name
              AND d.type IN ('DELETED', 'INFERRED_DELETED')) AS deleted
    FROM storage s
    WHERE s.kind = 'PersistentVolumeClaim' AND s.phase = 'Bound' AND s.volume_name <> ''
      AND EXISTS (SELECT 1 FROM raw_events r WHERE r.kind = 'PersistentVolume'
                  AND r.cluster = s.cluster AND r.received_at <= ts)
      AND NOT EXISTS (SELECT 1 FROM storage v WHERE v.kind = 'PersistentVolume'
                      AND v.cluster = s.cluster AND v.name = s.volume_name)),
-- the pods at ts that use such a claim (or a misbound one) and do not run, with the
-- scheduler's word on each
claim_waiters AS (
    SELECT c.uid, list(p.name || ' (' || coalesce(k.phase, 'phase unknown')
                       || coalesce(', ' || sc.reason || coalesce(': ' || sc.message, ''), '')
                       || ')' ORDER BY p.name) AS pods,
           list(p.event_id ORDER BY p.name) AS ids
    FROM (SELECT uid, namespace, name FROM unbacked_claims
          UNION ALL SELECT uid, namespace, name FROM misbound_claims) c
    JOIN state_at(ts) p ON p.kind = 'Pod' AND p.namespace = c.namespace
    JOIN pods k ON k.event_id = p.event_id AND list_contains(k.claim_names, c.name)
    LEFT JOIN conditions sc ON sc.event_id = p.event_id AND sc.type = 'PodScheduled'
         AND sc.status = 'False'
    WHERE coalesce(k.phase, 'Pending') = 'Pending'
    GROUP BY c.uid),
volume_missing AS (
    SELECT c.kind, c.namespace, c.name, c.uid, 'volume_missing' AS state,
           'volume_missing' AS cause,
           greatest(c.bound_at, c.deleted.at) AS since,
           concat_ws(' — ', 'phase Bound, its volume ' || c.volume_name,
                     CASE WHEN c.deleted IS NULL
                          THEN 'no PersistentVolume of that name was recorded'
                          ELSE 'PersistentVolume ' || c.volume_name || ' deleted at '
                               || strftime(c.deleted.at, '%Y-%m-%dT%H:%M:%SZ')
                               || coalesce(' (' || nullif(c.deleted.by, '') || ')', '') END,
                     'pods waiting on it: ' || array_to_string(w.pods, '; ')) AS detail,
           [c.event_id] || CASE WHEN c.deleted IS NULL THEN [] ELSE [c.deleted.event_id] END
               || coalesce(w.ids, []) AS evidence,
           c.event_id, true AS stuck
    FROM unbacked_claims c LEFT JOIN claim_waiters w USING (uid)),
volume_misbound AS (
    SELECT c.kind, c.namespace, c.name, c.uid, 'volume_misbound' AS state,
           'volume_misbound' AS cause, least(c.named_at, e.e.first_at) AS since,
           concat_ws(' — ', 'phase ' || c.phase || ', its volume ' || c.volume_name
                            || ' is bound to claim ' || c.owner || ' (its spec.claimRef)',
                     e.e.reason || CASE WHEN e.e.count > 1 THEN ' ×' || e.e.count ELSE '' END
                         || ': ' || e.e.message,
                     'pods waiting on it: ' || array_to_string(w.pods, '; ')) AS detail,
           [c.event_id, c.volume_event_id] || coalesce(e.e.ids, []) || coalesce(w.ids, [])
               AS evidence,
           c.event_id, true AS stuck
    FROM misbound_claims c
    LEFT JOIN (SELECT uid, arg_max(e, e.last_at) AS e FROM object_events e
               WHERE e.reason = 'ClaimMisbound'
                  OR (e.reason = 'FailedBinding' AND e.message LIKE '%already bound to a different claim%')
               GROUP BY uid) e USING (uid)
    LEFT JOIN claim_waiters w USING (uid)),
phases AS (
    SELECT s.kind, s.namespace, s.name, s.uid,
           CASE s.phase WHEN 'Lost' THEN 'lost' WHEN 'Released' THEN 'released'
                        ELSE 'failed' END AS state,
           CASE s.phase WHEN 'Lost' THEN 'pvc_lost' WHEN 'Released' THEN 'pv_released'
                        ELSE 'pv_failed' END AS cause,
           coalesce(e.e.first_at, s.received_at) AS since,
           concat_ws(' — ', 'phase ' || s.phase,
                     CASE WHEN s.kind = 'PersistentVolume' THEN
                         coalesce('claim ' || s.claim_namespace || '/' || s.claim_name, '')
                         || coalesce(', reclaim policy ' || s.reclaim_policy, '')
                          -- the volume a Lost claim was bound to (gone, or bound elsewhere)
                          ELSE 'its volume ' || s.volume_name END,
                     coalesce(e.e.reason || ': ' || e.e.message,
                              s.status_reason || coalesce(': ' || s.status_message, ''))) AS detail,
           [s.event_id] || coalesce(e.e.ids, []) AS evidence, s.event_id,
           -- Released is where a Retain volume rests; a Delete volume should be gone
           s.phase <> 'Released' OR (s.reclaim_policy = 'Delete'
                                     AND s.received_at <= ts - to_seconds(threshold_s)) AS stuck
    FROM storage s
    LEFT JOIN (SELECT uid, arg_max(e, e.last_at) AS e FROM object_events e
               WHERE e.reason IN ('ClaimLost', 'ClaimMisbound', 'VolumeFailedDelete',
                                  'VolumeFailedRecycle')
               GROUP BY uid) e USING (uid)
    WHERE (s.kind = 'PersistentVolumeClaim' AND s.phase = 'Lost')
       OR (s.kind = 'PersistentVolume' AND s.phase IN ('Released', 'Failed')))
SELECT * FROM not_created UNION ALL SELECT * FROM stalled UNION ALL SELECT * FROM job_end
UNION ALL SELECT * FROM suspended UNION ALL SELECT * FROM held
UNION ALL SELECT * FROM missing UNION ALL SELECT * FROM claim_findings
UNION ALL SELECT * FROM volume_missing UNION ALL SELECT * FROM volume_misbound
UNION ALL SELECT * FROM phases
UNION ALL SELECT * FROM service_findings_at(ts, threshold_s := threshold_s)
UNION ALL SELECT * FROM node_findings_at(ts, threshold_s := threshold_s)
