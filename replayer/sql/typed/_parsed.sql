-- The load batch's objects, parsed once: `batch` is the batch's envelope rows (registered
-- by the loader); the loader stores this in a table the models read as `parsed`: each
-- object's object_shape() structure (the JSON text stays in `batch`: copying it here cost
-- ~20 % of the parse). Objects that are not UTF-8 JSON would fail the statement: the loader
-- lists them in `ktrace_unparsable` and parses again without them (try() on every row costs
-- ~15 % of the parse), then reports them.
SELECT event_id, kind, uid, namespace, name,
       from_json(object, object_shape()) AS o
FROM batch
WHERE object IS NOT NULL AND NOT list_contains(getvariable('ktrace_unparsable'), event_id)
