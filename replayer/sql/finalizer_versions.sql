-- model: table; key: uid; depends: object_versions, projection_scope, refreshed_from
-- The versions that carry finalizers: where stuck_finalizers looks for the first version
-- with each finalizer of a stuck object, without reading every version of the recording
-- (most objects never carry one). Materialized after object_versions, per uid.
SELECT uid, event_id, version_no, received_at, finalizers FROM object_versions
WHERE len(finalizers) > 0 AND rowid >= refreshed_from('object_versions')
  AND uid IN (SELECT uid FROM projection_scope)
