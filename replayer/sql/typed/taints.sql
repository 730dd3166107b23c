-- taints: one row per taint of every Node version.
SELECT p.event_id, p.uid, t.key, t.value, t.effect, t.timeAdded AS time_added
FROM parsed p, unnest(p.o.spec.taints) AS u(t)
WHERE p.kind = 'Node'
