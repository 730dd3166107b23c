-- The load batch's objects, parsed once: `batch` is the batch's envelope rows (registered
-- by the loader), `parsed` holds each object's JSON text and its object_shape() structure.
-- Bytes that are not UTF-8 JSON parse to NULL here, and the loader reports them.
CREATE OR REPLACE TEMP TABLE parsed AS
SELECT event_id, kind, uid, namespace, name, object, o
FROM (SELECT event_id, kind, uid, namespace, name, object,
             try(from_json(object, object_shape())) AS o
      FROM (SELECT event_id, kind, uid, namespace, name, try(decode(object)) AS object
            FROM batch WHERE object IS NOT NULL))
WHERE o IS NOT NULL;
