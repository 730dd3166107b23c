-- model: macro(ts); depends: k8s_events, raw_events
-- node_shutdowns_at(ts): each node's graceful shutdown as its kubelet announced it, received
-- by ts: the kubelet's Normal Event `Shutdown` "Shutdown manager detected shutdown event"
-- about the Node (named, not uid'd), sent when systemd-logind's PrepareForShutdown(true)
-- reaches its node shutdown manager (pkg/kubelet/nodeshutdown, Kubernetes v1.37.2). One row
-- per node and announcement: cluster, node, at (the Event's first time), message, event_id.
SELECT r.cluster, e.regarding_name AS node, coalesce(e.first_time, r.received_at) AS at,
       e.message, e.event_id
FROM k8s_events e JOIN raw_events r USING (event_id)
WHERE e.reason = 'Shutdown' AND e.regarding_kind = 'Node'
  AND e.message = 'Shutdown manager detected shutdown event' AND r.received_at <= ts
