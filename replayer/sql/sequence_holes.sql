-- model: table; depends: duplicate_sequence, projected_through, raw_events, sequence_ends, sequence_rescan, window_start_state
-- Holes in each session's sequence numbers per topic (duplicates re-sent by a restarted
-- recorder were delivered, not lost). A refresh recomputes each (session, topic) with new
-- records (or duplicates) from the last record before the lowest new sequence number on
-- (sequence_rescan: after_seq); the holes that end at or before it stay. A pair whose new
-- records all follow its last before them (appended) reads that record from sequence_ends
-- and its new records by load position, not its history. Records loaded as the state at a window's
-- start are no part of the sequence (window_start_state).
(session VARCHAR, topic VARCHAR, prev_seq BIGINT, seq BIGINT, prev_at TIMESTAMP,
 received_at TIMESTAMP, event_id BIGINT)
WITH sequenced AS (
    SELECT u.session, u.topic, u.seq, u.received_at, u.event_id,
           lag(u.seq) OVER w AS prev_seq, lag(u.received_at IGNORE NULLS) OVER w AS prev_at
    FROM (SELECT r.session, r.topic, r.seq, r.received_at, r.event_id
          FROM raw_events r JOIN sequence_rescan s
            ON s.session = r.session AND s.topic = r.topic AND r.seq >= s.after_seq
          WHERE NOT s.appended AND NOT window_start_state(r.source_id, r.received_at)
          UNION ALL
          SELECT r.session, r.topic, r.seq, r.received_at, r.event_id
          FROM raw_events r JOIN sequence_rescan s USING (session, topic)
          WHERE s.appended AND r.event_id > projected_through()
            AND NOT window_start_state(r.source_id, r.received_at)
          UNION ALL  -- (the last record before: a hole ending at it was found already)
          SELECT e.session, e.topic, e.before_seq, e.before_at, NULL
          FROM sequence_ends e JOIN sequence_rescan s USING (session, topic)
          WHERE s.appended
          UNION ALL
          SELECT d.session, d.topic, d.seq, NULL, NULL
          FROM duplicate_sequence d JOIN sequence_rescan s
            ON s.session = d.session AND s.topic = d.topic AND d.seq >= s.after_seq) u
    WINDOW w AS (PARTITION BY u.session, u.topic ORDER BY u.seq))
SELECT h.* FROM sequence_holes h
WHERE NOT EXISTS (SELECT 1 FROM sequence_rescan s
                  WHERE s.session = h.session AND s.topic = h.topic AND h.seq > s.after_seq)
UNION ALL
SELECT session, topic, prev_seq, seq, prev_at, received_at, event_id
FROM sequenced WHERE seq - prev_seq > 1 AND event_id IS NOT NULL
