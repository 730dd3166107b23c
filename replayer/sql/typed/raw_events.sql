-- raw_events: one row per record as stored (the envelope) and the object metadata every
-- analysis needs. `object` is the object JSON where the source was loaded with
-- --store-objects all (and for kubectl imports), else NULL: replayer/objects.py fetches it
-- from the source by (source_id, topic, partition, offset).
SELECT b.* EXCLUDE (object, marker),
       CASE WHEN getvariable('ktrace_store_objects') AND p.o IS NOT NULL
            THEN b.object END AS object,
       p.o.metadata.creationTimestamp AS created_at,
       p.o.metadata.deletionTimestamp AS deletion_at,
       p.o.metadata.deletionGracePeriodSeconds AS deletion_grace_s,
       p.o.metadata.generation AS generation,
       CASE WHEN b.uid IS NOT NULL THEN coalesce(p.o.metadata.finalizers, []) END AS finalizers,
       p.o.metadata.labels AS labels
FROM batch b LEFT JOIN parsed p USING (event_id)
