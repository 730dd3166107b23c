-- model: macro(stuck, ts); depends: cause_score, owner_refs, state_at
-- foreground_dependents: a foreground deletion, its blocking dependents walked down to the
-- deepest one.
WITH RECURSIVE foreground AS MATERIALIZED (
    FROM query_table(stuck) WHERE list_contains(finalizers, 'foregroundDeletion')),
edges AS MATERIALIZED (
    SELECT o.owner_uid AS parent, l.uid AS child, l.kind || '/' || l.name AS label,
           l.event_id, l.finalizers
    FROM state_at(ts) l JOIN owner_refs o ON o.event_id = l.event_id
    WHERE o.block_owner_deletion
      -- (no walk, no edges: most recordings hold no foreground deletion; counted once — an
      -- EXISTS here was planned as a join per edge, half of stuck_at's time at 1M events)
      AND (SELECT count(*) FROM foreground) > 0),
walk(root, uid, depth, path, event_id, finalizers) AS (
    SELECT uid, uid, 0, [kind || '/' || name], event_id, finalizers FROM foreground
    UNION ALL
    SELECT w.root, e.child, w.depth + 1, list_append(w.path, e.label), e.event_id, e.finalizers
    FROM walk w JOIN edges e ON e.parent = w.uid WHERE w.depth < 16)
SELECT root AS uid, 'foreground_dependents' AS cause,
       cause_score('foreground_dependents', false) AS score,
       CASE WHEN max(depth) = 0 THEN 'foreground deletion: no blocking dependents left'
            ELSE 'foreground deletion waits on ' || array_to_string(arg_max(path, depth), ' → ')
                 || coalesce(' (finalizers ' || nullif(array_to_string(
                        arg_max(finalizers, depth), ', '), '') || ')', '') END AS detail,
       list(event_id ORDER BY depth) AS evidence
FROM walk GROUP BY root
