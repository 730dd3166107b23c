-- model: table; depends: duplicate_sequence, raw_events, sequence_rescan, window_start_state
-- Holes in each session's sequence numbers per topic (duplicates re-sent by a restarted
-- recorder were delivered, not lost). A refresh recomputes each (session, topic) with new
-- records (or duplicates) from the last record before the lowest new sequence number on
-- (sequence_rescan: after_seq); the holes that end at or before it stay. Records loaded as
-- the state at a window's start are no part of the sequence (window_start_state).
(session VARCHAR, topic VARCHAR, prev_seq BIGINT, seq BIGINT, prev_at TIMESTAMP,
 received_at TIMESTAMP, event_id BIGINT)
WITH sequenced AS (
    SELECT u.session, u.topic, u.seq, u.received_at, u.event_id,
           lag(u.seq) OVER w AS prev_seq, lag(u.received_at IGNORE NULLS) OVER w AS prev_at
    FROM (SELECT session, topic, seq, received_at, event_id FROM raw_events
          WHERE NOT window_start_state(source_id, received_at)
          UNION ALL
          SELECT session, topic, seq, NULL, NULL FROM duplicate_sequence) u
    JOIN sequence_rescan s ON s.session = u.session AND s.topic = u.topic
    WHERE u.seq >= s.after_seq
    WINDOW w AS (PARTITION BY u.session, u.topic ORDER BY u.seq))
SELECT h.* FROM sequence_holes h
WHERE NOT EXISTS (SELECT 1 FROM sequence_rescan s
                  WHERE s.session = h.session AND s.topic = h.topic AND h.seq > s.after_seq)
UNION ALL
SELECT session, topic, prev_seq, seq, prev_at, received_at, event_id
FROM sequenced WHERE seq - prev_seq > 1 AND event_id IS NOT NULL
