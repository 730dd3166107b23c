-- model: macro(kind, managed)
-- creator(kind, managedFields): who created an object first seen mid-life (listed, or
-- imported), from its managedFields. Kubernetes records no creator: an entry's time is the
-- last time its manager changed its fields (ManagedFieldsEntry.time), entries are sorted
-- by operation, time and name (apimachinery managedfields.sortEncodedManagedFields), and
-- a create writes the main resource, never a subresource. So: the manager of the earliest
-- main-resource entry (1 s times) — and where several share that second, the one that can
-- have created it: a Node's kubelet first (it registers its node,
-- pkg/kubelet/kubelet_node_status.go), kubectl's verbs that only change an object last
-- (patch, label, annotate, taint, edit, set, scale, rollout). NULL without managedFields.
list_sort([{'time': m.time,
            'rank': CASE WHEN kind = 'Node' AND m.manager = 'kubelet' THEN 0
                         WHEN m.manager IN ('kubectl-patch', 'kubectl-label', 'kubectl-annotate',
                                            'kubectl-taint', 'kubectl-edit', 'kubectl-set',
                                            'kubectl-scale', 'kubectl-rollout') THEN 2
                         ELSE 1 END,
            'manager': m.manager}
           FOR m IN coalesce(managed, []) IF m.subresource IS NULL])[1].manager
