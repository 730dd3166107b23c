-- storage_classes: one row per StorageClass version: its provisioner, when its volumes are
-- bound (volumeBindingMode: Immediate, WaitForFirstConsumer), the reclaim policy of the
-- volumes it makes, and whether it is the default class (the storageclass.kubernetes.io/
-- is-default-class annotation).
SELECT p.event_id, p.uid, p.o.provisioner AS provisioner,
       p.o.volumeBindingMode AS binding_mode, p.o.reclaimPolicy AS reclaim_policy,
       coalesce(p.o.metadata.annotations."storageclass.kubernetes.io/is-default-class" = 'true',
                false) AS is_default
FROM parsed p
WHERE p.kind = 'StorageClass'
