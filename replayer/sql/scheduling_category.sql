-- model: macro(reason)
-- The category of one FailedScheduling reason (resources, taints, affinity, volumes…).
CASE
    WHEN reason ILIKE 'Insufficient %'
        THEN 'insufficient_' || lower(regexp_extract(reason, '^Insufficient (\S+)', 1))
    WHEN reason ILIKE '%Too many pods%' THEN 'insufficient_pods'
    WHEN reason ILIKE '%untolerated taint%' OR reason ILIKE '%that the pod didn''t tolerate%'
         OR reason = 'PodToleratesNodeTaints' THEN 'untolerated_taint'
    WHEN reason ILIKE '%were unschedulable%' OR reason = 'NodeUnschedulable'
        THEN 'node_unschedulable'
    WHEN reason ILIKE '%didn''t match Pod''s node affinity%'
         OR reason ILIKE '%didn''t match node selector%'
         OR reason ILIKE '%didn''t match node affinity%'
         OR reason IN ('MatchNodeSelector', 'NodeAffinity')
         -- the nodes a PreFilter's node set left out (schedule_one.go: "node(s) didn't satisfy
         -- plugin(s) [P]"; framework.go, sets that do not meet: "…plugin P", "…[P Q]
         -- simultaneously"): in-tree only NodeAffinity (required terms' matchFields on
         -- metadata.name) and NodeName (spec.nodeName) return node sets — both pin the pod
         OR (reason ILIKE '%didn''t satisfy plugin%'
             AND regexp_matches(reason, '\bNode(Affinity|Name)\b'))
        THEN 'node_selector_mismatch'
    WHEN reason ILIKE '%pod affinity%' OR reason ILIKE '%anti-affinity%'
         OR reason IN ('MatchInterPodAffinity', 'InterPodAffinity') THEN 'pod_affinity'
    WHEN reason ILIKE '%topology spread%' THEN 'topology_spread'
    -- a claim bound to a volume that does not exist: Lost (volume_binding.go), still Bound
    -- (binder.go ErrReasonPVNotExist), or VolumeZone's PreFilter's lookup of it (not found)
    WHEN reason ILIKE '%bound to non-existent persistentvolume%'
         OR reason ILIKE '%bound to non-existent pv(s)%'
         OR reason ILIKE 'persistentvolume "%" not found%' THEN 'pv_missing'
    WHEN reason ILIKE '%unbound immediate PersistentVolumeClaims%'
         OR reason ILIKE '%persistentvolumeclaim % not found%'
         OR reason ILIKE '%didn''t find available persistent volumes%'
         OR reason ILIKE '%waiting for first consumer%' THEN 'unbound_pvc'
    WHEN reason ILIKE '%volume node affinity conflict%' OR reason = 'NoVolumeZoneConflict'
         -- the VolumeZone plugin's wording of the same (volume_zone.go ErrReasonConflict)
         OR reason ILIKE '%had no available volume zone%'
         -- the v1.37 wording (binder.go ErrReasonNodeConflict)
         OR reason ILIKE '%didn''t match PersistentVolume''s node affinity%'
        THEN 'volume_node_affinity'
    WHEN reason ILIKE '%free ports%' OR reason = 'PodFitsHostPorts' THEN 'host_ports'
    WHEN reason ILIKE '%max volume count%' OR reason ILIKE 'MaxVolumeCount%'
         OR reason ILIKE '%volume count%' THEN 'volume_limits'
    -- NodeDeclaredFeatures (1.35+): the pod needs a feature the node's kubelet does not declare
    WHEN reason ILIKE '%didn''t match Pod''s required features%' THEN 'node_features'
    -- the scheduler's own failure (PodScheduled=False SchedulerError), not the nodes': its
    -- framework wraps a plugin's error as `running Bind plugin "…": …` (framework.go)
    WHEN reason ILIKE 'running % plugin %' OR reason ILIKE 'running "%" filter plugin%'
        THEN 'scheduler_error'
    WHEN reason ILIKE '%preemption%' THEN 'preemption'
    ELSE 'other' END
