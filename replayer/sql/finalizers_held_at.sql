-- model: macro(ts); depends: finalizer_removers, finalizer_versions, owner_refs, raw_events, state_at
-- finalizers_held_at(ts): the objects being deleted at ts (deletionTimestamp set, still
-- there) that finalizers hold, one row per finalizer: who removes it (finalizer_removers;
-- NULL for a finalizer of another controller) and the object's controller owner (the Job a
-- job-tracking finalizer waits on). Not a verdict: a deletion in progress holds until its
-- finalizers go; stuck_finalizers judges the ones past their deadline.
SELECT s.uid, s.kind, s.event_id, r.deletion_at, r.deletion_grace_s, f.finalizer,
       m.remover, o.owner_kind, o.owner_name
FROM state_at(ts) s JOIN raw_events r USING (event_id)
JOIN (SELECT event_id, unnest(finalizers) AS finalizer FROM finalizer_versions) f USING (event_id)
LEFT JOIN finalizer_removers m USING (finalizer)
LEFT JOIN owner_refs o ON o.event_id = s.event_id AND o.controller
WHERE r.deletion_at IS NOT NULL
