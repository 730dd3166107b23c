-- model: macro(stuck, ts); depends: k8s_events, raw_events
-- The Events about each stuck object received by ts, per reason: their records and the
-- newest message.
SELECT e.regarding_uid AS uid, e.reason, list(r.event_id ORDER BY r.event_id) AS ids,
       arg_max(e.message, r.event_id) AS message
FROM (SELECT * FROM k8s_events
      WHERE regarding_uid IN (SELECT uid FROM query_table(stuck))) e
JOIN raw_events r USING (event_id)
WHERE r.received_at <= ts GROUP BY ALL
