-- namespaces: one row per Namespace version (its conditions are in `conditions`).
SELECT p.event_id, p.uid, p.name, p.o.status.phase AS phase,
       coalesce(p.o.spec.finalizers, []) AS spec_finalizers
FROM parsed p WHERE p.kind = 'Namespace'
