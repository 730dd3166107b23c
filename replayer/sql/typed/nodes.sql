-- nodes: one row per Node version: its Ready condition's status and cordon.
SELECT p.event_id, p.uid, p.name,
       list_filter(p.o.status.conditions, lambda c: c.type = 'Ready')[1].status AS ready,
       coalesce(p.o.spec.unschedulable, false) AS unschedulable
FROM parsed p WHERE p.kind = 'Node'
