-- model: view; depends: data_end, ktrace_meta, markers, raw_events, sequence_holes, session_stretches, session_topics, unreadable_ranges
-- Every stretch the recording did not see: GAP markers, session_stretches, holes in a
-- session's sequence numbers and damaged byte ranges of the source, each with its cluster.
WITH sequenced AS (
    SELECT * FROM sequence_holes
    WHERE NOT EXISTS (SELECT 1 FROM ktrace_meta
                      WHERE key = 'load_filter' AND value NOT LIKE 'namespace=* %')),
damaged AS (
    SELECT u.*,
           (SELECT arg_max(r.event_id, r."offset") FROM raw_events r
            WHERE r.source_id = u.source_id AND r.topic = u.topic
              AND r."partition" = u."partition" AND r."offset" < u.from_offset) AS before_id,
           (SELECT arg_min(r.event_id, r."offset") FROM raw_events r
            WHERE r.source_id = u.source_id AND r.topic = u.topic
              AND r."partition" = u."partition" AND r."offset" >= u.to_offset) AS after_id
    FROM unreadable_ranges u),
-- a session's cluster (NULL for a name two clusters share: kubectl imports of files of one
-- name), so a stretch hides only its own cluster's objects
session_clusters AS (
    SELECT session, CASE WHEN count(DISTINCT cluster) = 1 THEN any_value(cluster) END AS cluster
    FROM session_topics GROUP BY session),
stretches AS (
SELECT CASE m.cause WHEN 'dead_lettered' THEN 'dead_lettered' ELSE 'gap_marker' END AS type,
       m.session, m.topic, NULL::VARCHAR AS namespace,
       coalesce(m.from_time, r.received_at) AS start_at,
       coalesce(m.to_time, r.received_at) AS end_at,
       concat_ws(': ', m.cause, m.detail) ||
           coalesce(' (resourceVersion ' || m.from_rv || ' → ' || m.to_rv || ')', '') AS detail,
       m.event_id AS evidence_event_id
FROM markers m JOIN raw_events r USING (event_id) WHERE m.type = 'GAP'
UNION ALL
SELECT * FROM session_stretches
UNION ALL
SELECT 'sequence_hole', session, topic, NULL, prev_at, received_at,
       (seq - prev_seq - 1) || ' records missing (seq ' || (prev_seq + 1) || '..' || (seq - 1) || ')',
       event_id
FROM sequenced
UNION ALL
SELECT CASE WHEN starts_with(d.cause, 'retention:') THEN 'retention' ELSE 'damaged' END,
       b.session, d.topic, NULL,
       coalesce(b.received_at, (SELECT min(received_at) FROM raw_events)),
       coalesce(a.received_at, data_end()),
       d.cause || ' (' || coalesce(d.bytes || ' bytes', 'size unknown') || ' at offset '
           || d.from_offset || ' of partition ' || d."partition" || ')',
       coalesce(d.before_id, d.after_id)
FROM damaged d
-- (only the records named: a join with every record costs more than the rest of the view)
LEFT JOIN (SELECT event_id, session, received_at FROM raw_events
           WHERE event_id IN (SELECT before_id FROM damaged)) b ON b.event_id = d.before_id
LEFT JOIN (SELECT event_id, received_at FROM raw_events
           WHERE event_id IN (SELECT after_id FROM damaged)) a ON a.event_id = d.after_id)
SELECT s.*, c.cluster FROM stretches s LEFT JOIN session_clusters c USING (session)
