-- model: macro(tbl)
-- The first rowid of the rows a keyed table model's refresh appended (projections.py sets it
-- before the refresh deletes and inserts the rows of the objects in projection_scope), 0
-- outside a refresh. Every row of a scope object is at or after it, so a model refreshed
-- after that table reads its scope rows from there (row groups pruned by rowid) instead of
-- probing the whole key column: ~0.1 CPU-s per million versions on every catch-up.
coalesce(getvariable('ktrace_refreshed_from_' || tbl), 0)
