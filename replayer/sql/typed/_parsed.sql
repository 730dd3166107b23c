-- The load batch's objects, parsed once: `batch` is the batch's envelope rows (registered
-- by the loader), `parsed` holds each object as validated JSON and as object_shape().
-- Bytes that are not UTF-8 JSON become NULL here, and the loader reports them.
CREATE OR REPLACE TEMP TABLE parsed AS
SELECT event_id, kind, uid, namespace, name, object, from_json(object, object_shape()) AS o
FROM (SELECT event_id, kind, uid, namespace, name,
             try_cast(try(decode(object)) AS JSON) AS object
      FROM batch WHERE object IS NOT NULL)
WHERE object IS NOT NULL;
