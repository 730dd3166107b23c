-- raw_events: one row per record as stored (the envelope), with the object JSON and the
-- object metadata every analysis needs.
SELECT b.* EXCLUDE (object, marker), p.object,
       p.o.metadata.creationTimestamp AS created_at,
       p.o.metadata.deletionTimestamp AS deletion_at,
       p.o.metadata.deletionGracePeriodSeconds AS deletion_grace_s,
       p.o.metadata.generation AS generation,
       CASE WHEN b.uid IS NOT NULL THEN coalesce(p.o.metadata.finalizers, []) END AS finalizers,
       p.o.metadata.labels AS labels
FROM batch b LEFT JOIN parsed p USING (event_id)
