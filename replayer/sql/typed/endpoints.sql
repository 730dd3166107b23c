-- endpoints: one row per endpoint of every EndpointSlice version.
SELECT event_id, slice_uid, service, address_type, coalesce(e.addresses, []) AS addresses,
       e.conditions.ready, e.conditions.serving, e.conditions.terminating,
       e.nodeName AS node_name, e.targetRef.kind AS target_kind,
       e.targetRef.name AS target_name, e.targetRef.uid AS target_uid
FROM (SELECT event_id, uid AS slice_uid,
             o.metadata.labels['kubernetes.io/service-name'] AS service,
             o.addressType AS address_type, unnest(o.endpoints) AS e
      FROM parsed WHERE kind = 'EndpointSlice')
