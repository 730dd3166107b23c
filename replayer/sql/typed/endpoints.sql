-- endpoints: one row per endpoint of every EndpointSlice version.
SELECT p.event_id, p.uid AS slice_uid,
       p.o.metadata.labels['kubernetes.io/service-name'] AS service,
       p.o.addressType AS address_type, coalesce(e.addresses, []) AS addresses,
       e.conditions.ready, e.conditions.serving, e.conditions.terminating,
       e.nodeName AS node_name, e.targetRef.kind AS target_kind,
       e.targetRef.name AS target_name, e.targetRef.uid AS target_uid
FROM parsed p, unnest(p.o.endpoints) AS u(e)
WHERE p.kind = 'EndpointSlice'
