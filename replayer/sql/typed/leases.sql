-- leases: one row per Lease version (node heartbeats live in kube-node-lease).
SELECT p.event_id, p.uid, p.namespace, p.name, p.o.spec.holderIdentity AS holder,
       p.o.spec.leaseDurationSeconds::INTEGER AS duration_s, p.o.spec.renewTime AS renew_time
FROM parsed p WHERE p.kind = 'Lease'
