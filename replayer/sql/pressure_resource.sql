-- model: macro(condition)
-- The resource a kubelet eviction names (pkg/kubelet/eviction/helpers.go, 1.27–1.37):
--   "The node was low on resource: memory. Threshold quantity: 100Mi, available: 52Mi. …"
--   → memory (also ephemeral-storage, pids, inodes); 1.6's "… resource: [MemoryPressure]."
--   and the admission-time "The node had condition: [DiskPressure]. " → the condition's
--   resource; "Container x exceeded its local ephemeral storage limit …", "Pod ephemeral
--   local storage usage exceeds …", "Usage of EmptyDir volume … exceeds the limit …" →
--   ephemeral-storage. NULL when the message names none.
CASE condition
    WHEN 'MemoryPressure' THEN 'memory' WHEN 'DiskPressure' THEN 'ephemeral-storage'
    WHEN 'PIDPressure' THEN 'pids' END
