-- conditions: status conditions of every object version (pods, nodes, workloads,
-- namespaces, claims…).
SELECT p.event_id, p.uid, p.kind, c.type, c.status, c.reason, c.message,
       c.lastTransitionTime AS last_transition, c.lastHeartbeatTime AS last_heartbeat
FROM parsed p, unnest(p.o.status.conditions) AS u(c)
