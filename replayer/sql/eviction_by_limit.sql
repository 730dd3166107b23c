-- model: macro(msg)
-- Whether a kubelet eviction message names a limit of the pod's own — a container's
-- ephemeral-storage limit, the pod's total, an emptyDir sizeLimit (localStorageEviction in
-- pkg/kubelet/eviction/eviction_manager.go) — rather than a shortage of the node.
msg ILIKE '%exceeded its local ephemeral storage limit%'
    OR msg ILIKE '%ephemeral local storage usage exceeds%'
    OR msg ILIKE 'Usage of EmptyDir volume%'
