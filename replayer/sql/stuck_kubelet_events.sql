-- model: macro(stuck, ts); depends: k8s_events, raw_events
-- The Events about each stuck object received by ts, per reason: their records and the
-- newest message. An Event whose reference has no uid (an import's; the taint-eviction
-- controller's) is the stuck object's of its cluster, kind, namespace and name — if it was
-- last seen in that object's lifetime: one last seen before its creationTimestamp (1 s
-- times, both) was about an earlier object of the name.
WITH about AS (
    SELECT regarding_uid AS uid, event_id FROM k8s_events
    WHERE regarding_uid IN (SELECT uid FROM query_table(stuck))
    UNION ALL
    SELECT s.uid, e.event_id
    FROM k8s_events e JOIN raw_events r USING (event_id)
    JOIN query_table(stuck) s
      ON s.cluster = r.cluster AND s.kind = e.regarding_kind AND s.name = e.regarding_name
     AND s.namespace IS NOT DISTINCT FROM e.regarding_namespace
    WHERE coalesce(e.regarding_uid, '') = ''
      AND (s.created_at IS NULL
           OR coalesce(e.last_time, e.first_time, r.received_at) >= date_trunc('second', s.created_at)))
SELECT a.uid, e.reason, list(r.event_id ORDER BY r.event_id) AS ids,
       arg_max(e.message, r.event_id) AS message
FROM about a JOIN k8s_events e USING (event_id) JOIN raw_events r USING (event_id)
WHERE r.received_at <= ts GROUP BY ALL
