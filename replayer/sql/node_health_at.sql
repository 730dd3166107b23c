-- model: macro(ts); depends: conditions, leases, nodes, raw_events, versions_at
-- node_health_at(ts): every Node as it was at ts — deleted or not, its Ready condition,
-- and whether its Lease was renewed. A Lease is stale when other Leases were seen renewed
-- after it should have been: not seeing a renewal during a recording gap proves nothing.
-- Used by the stuck and not-running analyses. Documented in docs/projections.md.
-- (the newest version of a name at ts is the newest of its objects' versions current at
-- ts: versions_at spares numbering every version)
-- (each kind by equality: an IN of the two is only a hint to the scan, which then
-- passed every live object on, 230,256 at the bench's 1M end)
WITH nodes_now AS (
    SELECT cluster, name, type, event_id, rv FROM versions_at(ts) WHERE kind = 'Node'),
leases_now AS (
    SELECT cluster, event_id, rv FROM versions_at(ts) WHERE kind = 'Lease'),
latest AS (
    SELECT r.cluster, r.name, r.type, r.event_id, n.ready
    FROM nodes_now r LEFT JOIN nodes n USING (event_id)
    QUALIFY row_number() OVER (PARTITION BY r.cluster, r.name
                               ORDER BY r.rv DESC, r.event_id DESC) = 1),
ready_since AS (
    SELECT l.cluster, l.name, c.reason, c.message, c.last_transition
    FROM latest l JOIN conditions c ON c.event_id = l.event_id AND c.type = 'Ready'),
lease_seen AS (
    SELECT cluster, max(received_at) AS last_at FROM raw_events
    WHERE kind = 'Lease' AND received_at <= ts GROUP BY cluster),
lease AS (
    SELECT r.cluster, l.name, l.renew_time, l.event_id,
           l.renew_time + to_seconds(coalesce(l.duration_s, 40)) < s.last_at AS stale
    FROM leases l JOIN leases_now r USING (event_id) JOIN lease_seen s ON s.cluster = r.cluster
    WHERE l.namespace = 'kube-node-lease'
    QUALIFY row_number() OVER (PARTITION BY r.cluster, l.name
                               ORDER BY r.rv DESC, r.event_id DESC) = 1)
SELECT l.cluster, l.name, l.type IN ('DELETED', 'INFERRED_DELETED') AS deleted, l.ready,
       rs.reason AS ready_reason, rs.message AS ready_message, rs.last_transition AS ready_since,
       l.event_id,
       le.renew_time AS lease_renewed_at, coalesce(le.stale, false) AS lease_stale,
       le.event_id AS lease_event_id,
       l.type NOT IN ('DELETED', 'INFERRED_DELETED')
           AND (l.ready IS DISTINCT FROM 'True' OR coalesce(le.stale, false)) AS not_ready
FROM latest l LEFT JOIN ready_since rs USING (cluster, name)
LEFT JOIN lease le USING (cluster, name)
