-- model: macro(node, n)
-- node_problem(n): the sentence a node's health gives a pod on it, with the Ready
-- condition's own message (the node controller's or the kubelet's: what decides it).
concat_ws('; ',
    CASE WHEN n.ready IS DISTINCT FROM 'True' THEN 'node ' || node || ' Ready='
         || coalesce(n.ready, '?') || coalesce(' since ' || strftime(n.ready_since, '%Y-%m-%dT%H:%M:%SZ'), '')
         || coalesce(' (' || n.ready_reason || coalesce(': ' || nullif(n.ready_message, ''), '') || ')', '') END,
    CASE WHEN n.lease_stale THEN 'Lease last renewed ' || strftime(n.lease_renewed_at, '%Y-%m-%dT%H:%M:%SZ') END)
