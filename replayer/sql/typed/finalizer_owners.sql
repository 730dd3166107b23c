-- finalizer_owners: which managedFields manager owns each finalizer of an object version
-- (the `v:"<finalizer>"` keys under f:metadata.f:finalizers), so analyses can say who
-- added a finalizer without reading the object.
SELECT event_id, uid, manager, operation, time, substr(k, 4, length(k) - 4) AS finalizer
FROM (SELECT event_id, uid, m.manager, m.operation, m.time,
             unnest(json_keys(m.fieldsV1, '$."f:metadata"."f:finalizers"')) AS k
      FROM (SELECT p.event_id, p.uid,
                   unnest(from_json(json_extract(b.object, '$.metadata.managedFields'),
                                    '[{"manager": "VARCHAR", "operation": "VARCHAR",
                                       "time": "TIMESTAMP", "fieldsV1": "JSON"}]')) AS m
            FROM parsed p JOIN batch b USING (event_id)
            WHERE len(p.o.metadata.finalizers) > 0))
WHERE starts_with(k, 'v:"')
