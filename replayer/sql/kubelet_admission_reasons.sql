-- model: seed
-- The reasons the kubelet writes into status.reason when it rejects a pod at admission
-- (phase Failed), from pkg/kubelet/lifecycle/predicate.go (OutOf<resource>, the scheduler
-- plugins' names as predicate failures, InvalidNodeInfo, UnexpectedAdmissionError…),
-- lifecycle/handlers.go, cm/admission, cm/topologymanager, sysctl and nodeshutdown.
-- (Evicted at admission — "The node had condition: [X]" — is the evicted cause.)
(reason VARCHAR PRIMARY KEY,
                                                      meaning VARCHAR)
VALUES
    ('OutOfcpu', 'the node''s allocatable cpu is taken by the pods already on it'),
    ('OutOfmemory', 'the node''s allocatable memory is taken'),
    ('OutOfephemeral-storage', 'the node''s allocatable ephemeral storage is taken'),
    ('OutOfpods', 'the node already runs its maximum number of pods'),
    ('NodeAffinity', 'the pod''s nodeSelector/affinity does not match the node it was bound to'),
    ('NodeName', 'the pod names another node'),
    ('NodePorts', 'a hostPort the pod asks for is in use on the node'),
    ('TaintToleration', 'the pod does not tolerate a NoExecute taint of the node (the kubelet ignores NoSchedule ones)'),
    ('InvalidNodeInfo', 'the kubelet could not read its own node'),
    ('PodOSSelectorNodeLabelDoesNotMatch', 'the pod''s own kubernetes.io/os label (not its nodeSelector) names another OS than the node''s'),
    ('PodOSNotSupported', 'the pod''s spec.os does not match the node'),
    ('SupplementalGroupsPolicyNotSupported', 'the node does not support the pod''s supplementalGroupsPolicy'),
    ('UnexpectedAdmissionError', 'a device plugin or resource manager failed to allocate for the pod'),
    ('UnexpectedPredicateFailureType', 'the kubelet''s predicates failed in an unexpected way'),
    ('TopologyAffinityError', 'the topology manager found no NUMA alignment for the pod''s resources'),
    ('EmptyPodSharedPoolError', 'the cpu manager has no shared cpus left for the pod'),
    ('SysctlForbidden', 'the pod asks for a sysctl the kubelet does not allow'),
    ('AppArmor', 'the pod''s AppArmor profile cannot be enforced on the node'),
    ('PodFeatureUnsupported', 'the node''s kubelet does not support a feature the pod uses'),
    ('PodLevelResourcesNotSupported', 'the node does not support pod-level resources'),
    ('NodeShutdown', 'the node was shutting down')
