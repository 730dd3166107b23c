-- model: macro(ts); depends: conditions, versions_at
-- node_pressure_at(ts): the nodes that, at ts, report a pressure condition True
-- (MemoryPressure, DiskPressure, PIDPressure; NetworkUnavailable) — one row per node, the
-- conditions with their reason, message and since, and the node version that says so.
WITH latest AS (
    SELECT cluster, name, event_id FROM versions_at(ts)
    WHERE kind = 'Node' AND type NOT IN ('DELETED', 'INFERRED_DELETED')
    QUALIFY row_number() OVER (PARTITION BY cluster, name ORDER BY rv DESC, event_id DESC) = 1)
SELECT l.cluster, l.name, l.event_id,
       list(c.type ORDER BY c.type) AS conditions, min(c.last_transition) AS since,
       string_agg(concat_ws(' ', c.type || '=True',
                            CASE WHEN c.last_transition IS NOT NULL
                                 THEN 'since ' || strftime(c.last_transition, '%Y-%m-%dT%H:%M:%SZ') END,
                            '(' || c.reason || coalesce(': ' || c.message, '') || ')'),
                  '; ' ORDER BY c.type) AS detail
FROM latest l JOIN conditions c USING (event_id)
WHERE c.type IN ('MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable')
  AND c.status = 'True'
GROUP BY l.cluster, l.name, l.event_id
