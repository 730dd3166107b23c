-- model: macro(node, n)
-- node_problem(n): the sentence a node's health gives a pod on it.
concat_ws('; ',
    CASE WHEN n.ready IS DISTINCT FROM 'True' THEN 'node ' || node || ' Ready='
         || coalesce(n.ready, '?') || coalesce(' since ' || n.ready_since, '')
         || coalesce(' (' || n.ready_reason || ')', '') END,
    CASE WHEN n.lease_stale THEN 'Lease last renewed ' || n.lease_renewed_at END)
