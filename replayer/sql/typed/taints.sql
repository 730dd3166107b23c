-- taints: one row per taint of every Node version.
SELECT event_id, uid, t.key, t.value, t.effect, t.timeAdded AS time_added
FROM (SELECT event_id, uid, unnest(o.spec.taints) AS t FROM parsed WHERE kind = 'Node')
