-- conditions: status conditions of every object version (pods, nodes, workloads,
-- namespaces, claims…).
SELECT event_id, uid, kind, c.type, c.status, c.reason, clean_message(c.message) AS message,
       c.lastTransitionTime AS last_transition, c.lastHeartbeatTime AS last_heartbeat
FROM (SELECT event_id, uid, kind, unnest(o.status.conditions) AS c FROM parsed)
