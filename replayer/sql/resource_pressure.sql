-- model: macro(resource)
-- The node condition a resource's shortage raises (signalToNodeCondition in
-- pkg/kubelet/eviction/helpers.go).
CASE
    WHEN resource = 'memory' THEN 'MemoryPressure'
    WHEN resource IN ('ephemeral-storage', 'nodefs', 'imagefs', 'inodes') THEN 'DiskPressure'
    WHEN resource = 'pids' THEN 'PIDPressure' END
