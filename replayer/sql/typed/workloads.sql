-- workloads: one row per ReplicaSet, Deployment, StatefulSet, DaemonSet or Job version,
-- the replica counts mapped onto one set of columns (DaemonSet: scheduled/ready/available
-- numbers; Job: parallelism, active, succeeded, failed), what says whether the object
-- is done or held (a Job's completions, backoffLimit (per index too), suspend and
-- completionTime, a
-- StatefulSet's current and update revisions), and template_memory_limits: the pod
-- template's limits.memory per container name (init containers too), as written.
WITH w AS (SELECT p.event_id, p.uid, p.kind, p.o.spec AS spec, p.o.status AS status,
                  p.o.metadata AS md,
                  coalesce(p.o.spec.strategy, p.o.spec.updateStrategy) AS strategy
           FROM parsed p
           WHERE p.kind IN ('ReplicaSet', 'Deployment', 'StatefulSet', 'DaemonSet', 'Job'))
SELECT event_id, uid, kind,
       CASE kind WHEN 'DaemonSet' THEN status.desiredNumberScheduled
                 WHEN 'Job' THEN spec.parallelism ELSE spec.replicas END::INTEGER AS replicas,
       CASE kind WHEN 'DaemonSet' THEN status.currentNumberScheduled
                 WHEN 'Job' THEN status.active ELSE status.replicas END AS status_replicas,
       CASE kind WHEN 'DaemonSet' THEN status.updatedNumberScheduled
                 WHEN 'Job' THEN NULL ELSE status.updatedReplicas END AS updated_replicas,
       CASE kind WHEN 'DaemonSet' THEN status.numberReady
                 WHEN 'Job' THEN status.succeeded ELSE status.readyReplicas END AS ready_replicas,
       CASE kind WHEN 'DaemonSet' THEN status.numberAvailable
                 WHEN 'Job' THEN NULL ELSE status.availableReplicas END AS available_replicas,
       CASE kind WHEN 'DaemonSet' THEN status.numberUnavailable
                 WHEN 'Job' THEN status.failed ELSE status.unavailableReplicas END
           AS unavailable_replicas,
       status.observedGeneration AS observed_generation,
       md.annotations."deployment.kubernetes.io/revision" AS revision,
       md.labels['pod-template-hash'] AS pod_template_hash,
       strategy.type AS strategy,
       strategy.rollingUpdate.maxSurge->>'$' AS max_surge,
       strategy.rollingUpdate.maxUnavailable->>'$' AS max_unavailable,
       spec.progressDeadlineSeconds AS progress_deadline_s,
       map_from_entries([{'k': c.name, 'v': c.resources.limits.memory}
                         FOR c IN coalesce(spec.template.spec.containers, [])
                                  || coalesce(spec.template.spec.initContainers, [])])
           AS template_memory_limits,
       spec.completions AS completions, spec.backoffLimit AS backoff_limit,
       spec.suspend AS suspend, status.failed AS failed_pods,
       -- an Indexed Job's limits per index and which indexes ended how ("1,3-5")
       spec.backoffLimitPerIndex AS backoff_limit_per_index,
       spec.maxFailedIndexes AS max_failed_indexes,
       status.failedIndexes AS failed_indexes, status.completedIndexes AS completed_indexes,
       status.completionTime AS completion_time,
       status.currentRevision AS current_revision, status.updateRevision AS update_revision
FROM w
