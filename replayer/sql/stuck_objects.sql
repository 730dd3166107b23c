-- model: macro(ts, margin_s); depends: pods, state_at
-- The objects stuck in deletion at ts: their deletion deadline (deletionTimestamp — for a
-- pod, request time + grace) plus margin_s had passed while no DELETED was seen; a pod's
-- node, preStop hook, claims and phase beside it. What every stuck_<cause> model judges.
SELECT l.*, p.node_name, p.has_prestop, p.claim_names, p.phase
FROM (SELECT kind, cluster, namespace, name, uid, event_id, topic, received_at, created_at,
             deletion_at, deletion_grace_s, finalizers
      FROM state_at(ts)) l
LEFT JOIN pods p USING (event_id)
WHERE l.deletion_at IS NOT NULL AND l.kind <> 'Event'
  AND l.deletion_at + to_microseconds((margin_s * 1e6)::BIGINT) < ts
