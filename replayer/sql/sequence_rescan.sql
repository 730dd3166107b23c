-- model: view; depends: duplicate_sequence, projected_through, raw_events, window_start_state
-- The (session, topic) pairs with records (or duplicates) after projected_through, and
-- the sequence number sequence_holes recomputes them from: the last record's before the
-- lowest new one.
WITH new AS (
    SELECT session, topic, min(seq) AS lo
    FROM (SELECT session, topic, seq FROM raw_events WHERE event_id > projected_through()
                AND NOT window_start_state(source_id, received_at)
          UNION ALL SELECT session, topic, seq FROM duplicate_sequence)
    WHERE NOT starts_with(session, 'import:') GROUP BY ALL)
SELECT n.session, n.topic,
       coalesce((SELECT max(r.seq) FROM raw_events r WHERE r.session = n.session
                 AND r.topic = n.topic AND r.seq < n.lo
                 AND NOT window_start_state(r.source_id, r.received_at)), n.lo) AS after_seq
FROM new n
