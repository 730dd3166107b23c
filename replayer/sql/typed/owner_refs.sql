-- owner_refs: one row per ownerReference of every object version.
SELECT p.event_id, p.uid, r.kind AS owner_kind, r.name AS owner_name, r.uid AS owner_uid,
       coalesce(r.controller, false) AS controller,
       coalesce(r.blockOwnerDeletion, false) AS block_owner_deletion
FROM parsed p, unnest(p.o.metadata.ownerReferences) AS u(r)
