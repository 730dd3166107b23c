-- owner_refs: one row per ownerReference of every object version.
-- (Lists are unnested in the select list: a lateral unnest would copy the whole parsed
-- object into every row.)
SELECT event_id, uid, r.kind AS owner_kind, r.name AS owner_name, r.uid AS owner_uid,
       coalesce(r.controller, false) AS controller,
       coalesce(r.blockOwnerDeletion, false) AS block_owner_deletion
FROM (SELECT event_id, uid, unnest(o.metadata.ownerReferences) AS r FROM parsed)
