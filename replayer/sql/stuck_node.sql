-- model: macro(stuck, events, ts); depends: cause_score, node_health_at, node_problem
-- node_deleted: the pod's node was deleted; node_not_ready: it is not Ready or its Lease
-- is not renewed (nothing on it can confirm the pod stopped: cause_scores' variant score
-- for a deletion), with the NodeNotReady and TaintManagerEviction Events about the pod.
-- (the node's health read once for both: inlined twice it cost a third of stuck_at at 1M)
WITH stuck AS MATERIALIZED (FROM query_table(stuck) WHERE node_name IS NOT NULL),
node AS MATERIALIZED (
    SELECT s.uid, s.node_name, n.*
    FROM stuck s JOIN node_health_at(ts) n ON n.cluster = s.cluster AND n.name = s.node_name)
SELECT uid, 'node_deleted' AS cause, cause_score('node_deleted', false) AS score,
       'node ' || node_name || ' was deleted' AS detail, [event_id] AS evidence
FROM node WHERE deleted
UNION ALL
SELECT n.uid, 'node_not_ready', cause_score('node_not_ready', true),
       node_problem(n.node_name, n),
       [x FOR x IN [n.event_id, n.lease_event_id] IF x IS NOT NULL] || coalesce(e.ids, [])
FROM node n
LEFT JOIN (SELECT uid, flatten(list(ids ORDER BY reason)) AS ids
           FROM query_table(events)
           WHERE reason IN ('NodeNotReady', 'TaintManagerEviction') GROUP BY uid) e
       ON e.uid = n.uid
WHERE n.not_ready
