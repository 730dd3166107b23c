-- volumes: one row per PersistentVolumeClaim, PersistentVolume or VolumeAttachment version
-- (a PV's reclaim policy and the status reason/message its phase Failed carries).
SELECT p.event_id, p.uid, p.kind, p.o.status.phase AS phase, p.o.spec.volumeName AS volume_name,
       p.o.spec.storageClassName AS storage_class, p.o.spec.claimRef.namespace AS claim_namespace,
       p.o.spec.claimRef.name AS claim_name, p.o.spec.attacher AS attacher,
       CASE WHEN p.kind = 'VolumeAttachment' THEN p.o.spec.nodeName END AS node_name,
       p.o.spec.source.persistentVolumeName AS pv_name, p.o.status.attached AS attached,
       p.o.status.attachError.message AS attach_error,
       p.o.status.detachError.message AS detach_error,
       p.o.spec.persistentVolumeReclaimPolicy AS reclaim_policy,
       p.o.status.reason AS status_reason, p.o.status.message AS status_message
FROM parsed p
WHERE p.kind IN ('PersistentVolumeClaim', 'PersistentVolume', 'VolumeAttachment')
