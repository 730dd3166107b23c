-- model: seed
-- The reasons the kubelet writes into status.reason when it rejects a pod at admission
-- (phase Failed), from pkg/kubelet/lifecycle/predicate.go (OutOf<resource>, the scheduler
-- plugins' names as predicate failures, InvalidNodeInfo, UnexpectedAdmissionError…),
-- lifecycle/handlers.go, cm/admission, cm/topologymanager, sysctl and nodeshutdown.
-- (Evicted at admission — "The node had condition: [X]" — is the evicted cause.)
-- `sub` is the admission finding's sub-reason where its advice is not admission's own
-- (cause_sub_advice); NULL where it is.
(reason VARCHAR PRIMARY KEY, meaning VARCHAR, sub VARCHAR)
VALUES
    ('OutOfcpu', 'the node''s allocatable cpu is taken by the pods already on it', NULL),
    ('OutOfmemory', 'the node''s allocatable memory is taken', NULL),
    ('OutOfephemeral-storage', 'the node''s allocatable ephemeral storage is taken', NULL),
    ('OutOfpods', 'the node already runs its maximum number of pods', NULL),
    ('NodeAffinity', 'the pod''s nodeSelector/affinity does not match the node it was bound to', NULL),
    ('NodeName', 'the pod names another node', NULL),
    ('NodePorts', 'a hostPort the pod asks for is in use on the node', NULL),
    ('TaintToleration', 'the pod does not tolerate a NoExecute taint of the node (the kubelet ignores NoSchedule ones)', NULL),
    ('InvalidNodeInfo', 'the kubelet could not read its own node', NULL),
    ('PodOSSelectorNodeLabelDoesNotMatch', 'the pod''s own kubernetes.io/os label (not its nodeSelector) names another OS than the node''s', NULL),
    ('PodOSNotSupported', 'the pod''s spec.os does not match the node', NULL),
    ('SupplementalGroupsPolicyNotSupported', 'the node does not support the pod''s supplementalGroupsPolicy', NULL),
    ('UnexpectedAdmissionError', 'a device plugin or resource manager failed to allocate for the pod', NULL),
    ('UnexpectedPredicateFailureType', 'the kubelet''s predicates failed in an unexpected way', NULL),
    ('TopologyAffinityError', 'the topology manager found no NUMA alignment for the pod''s resources', NULL),
    ('EmptyPodSharedPoolError', 'the cpu manager has no shared cpus left for the pod', NULL),
    ('SysctlForbidden', 'the pod asks for a sysctl the kubelet does not allow', NULL),
    ('AppArmor', 'the pod''s AppArmor profile cannot be enforced on the node', NULL),
    ('PodFeatureUnsupported', 'the node''s kubelet does not support a feature the pod uses', NULL),
    ('PodLevelResourcesNotSupported', 'the node does not support pod-level resources', NULL),
    ('NodeShutdown', 'the node was shutting down', 'node_shutdown')
