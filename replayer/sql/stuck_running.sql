-- model: macro(stuck); depends: containers
-- The app containers of each stuck pod that are not terminated, by name (`stuck`: the name
-- of a relation of stuck_objects' rows, as stuck_at passes it).
SELECT s.uid, list(k.name ORDER BY k.name) AS names
FROM query_table(stuck) s JOIN containers k USING (event_id)
WHERE NOT k.init AND k.state IS DISTINCT FROM 'terminated' GROUP BY s.uid
