-- model: macro(reason, message); depends: kubelet_termination
-- Who asked for a pod's deletion (the update that sets deletionTimestamp carries no
-- managedFields change): the DisruptionTarget condition's reason (and for the kubelet's,
-- its message: which of its paths), else an Event naming the requester (the owner's
-- SuccessfulDelete "Deleted pod: NAME", TaintManagerEviction, Evicted, Preempted), else the
-- API server handling a DELETE from an unknown client.
CASE reason
    WHEN 'DeletionByTaintManager' THEN 'taint-eviction-controller'
    WHEN 'PreemptionByScheduler' THEN 'kube-scheduler (preemption)'
    WHEN 'PreemptionByKubeScheduler' THEN 'kube-scheduler (preemption)'
    WHEN 'DeletionByPodGC' THEN 'pod-garbage-collector'
    WHEN 'EvictionByEvictionAPI' THEN 'eviction API'
    WHEN 'TerminationByKubelet' THEN 'kubelet' || coalesce(' (' || kubelet_termination(message) || ')', '') END
