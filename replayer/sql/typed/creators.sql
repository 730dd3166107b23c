-- creators: who created each object other than a Pod (pods.creator says a pod's) at the
-- records that may be its first sighting mid-life — a list, an import — from its
-- managedFields (creator): what `explain` names for a `created` step it did not see.
SELECT p.event_id, p.uid, creator(p.kind, p.o.metadata.managedFields) AS creator
FROM parsed p JOIN batch b USING (event_id)
WHERE p.kind <> 'Pod' AND (b.type = 'LISTED' OR b.time_source <> 'received')
