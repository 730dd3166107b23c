-- model: macro(ts, threshold_s := 60); depends: node_health_at, node_problem, node_shutdowns_at, raw_events
-- node_findings_at(ts, threshold_s := 60): each Node's own finding at ts, in
-- object_findings_at's shape: `node_not_ready` — its Ready condition False or Unknown (the
-- kubelet's KubeletNotReady with the runtime's or CNI's message, the node controller's
-- NodeStatusUnknown "Kubelet stopped posting node status.") or its Lease not renewed
-- (node_health_at), the condition's message quoted (node_problem), after its sub-reason:
-- `node_shutdown` (Ready=False "node is shutting down": the kubelet's graceful node shutdown,
-- its Shutdown Event quoted and cited — node_shutdowns_at), `kubelet_not_ready` (Ready=False
-- otherwise: the kubelet's own report) or `unreachable` (Ready=Unknown or a stale Lease: the
-- control plane no longer hears the kubelet). A node without a Ready condition is not judged
-- (a stub says nothing of its health). `since`: the condition's lastTransitionTime, else the
-- Lease's last renewal; stuck once that lasted threshold_s (a node just registered is
-- NotReady until its kubelet and network are up).
WITH announced AS (
    SELECT s.cluster, s.node AS name,
           arg_max({'message': s.message, 'at': s.at, 'event_id': s.event_id}, s.at) AS shutdown
    FROM node_shutdowns_at(ts) s GROUP BY s.cluster, s.node),
judged AS (
    SELECT n.*, a.shutdown,
           -- the kubelet's Ready message: nodeshutdown's ShutdownStatus error, among others'
           n.ready = 'False' AND contains(n.ready_message, 'node is shutting down') AS shutting_down
    FROM node_health_at(ts) n LEFT JOIN announced a USING (cluster, name)
    WHERE n.not_ready AND (n.ready IS NOT NULL OR n.lease_stale))
SELECT 'Node' AS kind, NULL::VARCHAR AS namespace, n.name, r.uid, 'node_not_ready' AS state,
       'node_not_ready' AS cause,
       coalesce(CASE WHEN n.ready IS DISTINCT FROM 'True' THEN n.ready_since END,
                n.lease_renewed_at, r.received_at) AS since,
       CASE WHEN n.shutting_down THEN 'node_shutdown'
            WHEN n.ready = 'False' THEN 'kubelet_not_ready' ELSE 'unreachable' END
           || ' — ' || concat_ws('; ', node_problem(n.name, n),
               CASE WHEN n.shutting_down THEN 'the kubelet''s Shutdown Event "' || n.shutdown.message
                    || '" at ' || strftime(n.shutdown.at, '%Y-%m-%dT%H:%M:%SZ') END) AS detail,
       [x FOR x IN [n.event_id, n.lease_event_id, CASE WHEN n.shutting_down THEN n.shutdown.event_id END]
        IF x IS NOT NULL] AS evidence, n.event_id,
       since <= ts - to_seconds(threshold_s) AS stuck
FROM judged n JOIN raw_events r USING (event_id)
