-- The load batch's objects, parsed once: `batch` is the batch's envelope rows (registered
-- by the loader), `parsed` holds each object's object_shape() structure (the JSON text
-- stays in `batch`: copying it here cost ~20 % of the parse). Bytes that are not UTF-8
-- JSON parse to NULL here, and the loader reports them.
CREATE OR REPLACE TEMP TABLE parsed AS
SELECT event_id, kind, uid, namespace, name, o
FROM (SELECT event_id, kind, uid, namespace, name,
             try(from_json(decode(object), object_shape())) AS o
      FROM batch WHERE object IS NOT NULL)
WHERE o IS NOT NULL;
