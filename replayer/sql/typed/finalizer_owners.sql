-- finalizer_owners: which managedFields manager owns each finalizer of an object version
-- (the `v:"<finalizer>"` keys under f:metadata.f:finalizers), so analyses can say who
-- added a finalizer without reading the object.
SELECT p.event_id, p.uid, m.manager, m.operation, m.time,
       substr(k, 4, length(k) - 4) AS finalizer
FROM parsed p, unnest(p.o.metadata.managedFields) AS u(m),
     unnest(json_keys(m.fieldsV1, '$."f:metadata"."f:finalizers"')) AS f(k)
WHERE len(p.o.metadata.finalizers) > 0 AND starts_with(k, 'v:"')
