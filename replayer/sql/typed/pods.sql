-- pods: one row per Pod record: placement, phase and the spec facts the analyses need
-- (a record without an object, like an INFERRED_DELETED, still has its row).
SELECT b.event_id, b.uid, p.o.status.phase AS phase, p.o.spec.nodeName AS node_name,
       p.o.status.podIP AS pod_ip, p.o.status.startTime AS start_time,
       p.o.spec.terminationGracePeriodSeconds AS grace_s,
       coalesce(len(list_filter(p.o.spec.containers, lambda c: c.lifecycle.preStop IS NOT NULL)) > 0,
                false) AS has_prestop,
       [c.name FOR c IN coalesce(p.o.spec.containers, []) IF c.lifecycle.postStart IS NOT NULL]
           AS post_start_containers,
       coalesce([v.persistentVolumeClaim.claimName FOR v IN p.o.spec.volumes
                 IF v.persistentVolumeClaim IS NOT NULL], []) AS claim_names,
       p.o.spec.schedulerName AS scheduler_name,
       p.o.status.nominatedNodeName AS nominated_node,
       p.o.status.reason AS status_reason, clean_message(p.o.status.message) AS status_message,
       -- the manager of the oldest main-resource managedFields entry: who created the pod
       list_sort([{'time': m.time, 'manager': m.manager} FOR m IN p.o.metadata.managedFields
                  IF m.subresource IS NULL])[1].manager AS creator,
       -- the latest writer of the status subresource: a status change is its write, even
       -- when another manager's entry carries the same second (1 s managedFields times)
       list_sort([{'time': m.time, 'manager': m.manager} FOR m IN p.o.metadata.managedFields
                  IF m.subresource = 'status'], 'DESC')[1].manager AS status_manager,
       -- when the API server applied the latest status write (its clock, 1 s precision)
       list_max([m.time FOR m IN p.o.metadata.managedFields IF m.subresource = 'status'])
           AS status_written_at,
       [g.name FOR g IN coalesce(p.o.spec.schedulingGates, [])] AS scheduling_gates,
       p.o.spec.runtimeClassName AS runtime_class,
       -- the one node a required node affinity names by field (metadata.name In [NODE]): how
       -- the DaemonSet controller pins each of its pods to its node, bound or not yet
       -- (pkg/controller/daemon/util: ReplaceDaemonSetPodNodeNameNodeAffinity)
       flatten([[f."values"[1] FOR f IN coalesce(t.matchFields, [])
                 IF f."key" = 'metadata.name' AND f.operator = 'In' AND len(f."values") = 1]
                FOR t IN coalesce(p.o.spec.affinity.nodeAffinity
                                      .requiredDuringSchedulingIgnoredDuringExecution
                                      .nodeSelectorTerms, [])])[1] AS affinity_node,
       len(p.o.spec.containers) AS spec_containers,
       len(p.o.spec.initContainers) AS spec_init_containers
FROM batch b LEFT JOIN parsed p USING (event_id) WHERE b.kind = 'Pod' AND b.uid IS NOT NULL
