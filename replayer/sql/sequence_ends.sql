-- model: table; depends: projected_through, raw_events, window_start_state
-- The last record of each session's sequence per topic (seq, received_at), and the last
-- before the records of the latest refresh (before_seq, before_at): when a catch-up's
-- records of a (session, topic) all come after that one, sequence_holes goes on from it
-- instead of reading the session's history again (sequence_rescan: appended). Each
-- refresh merges the records after projected_through into the table's rows. Records
-- loaded as the state at a window's start are no part of the sequence.
(session VARCHAR, topic VARCHAR, seq BIGINT, received_at TIMESTAMP, before_seq BIGINT,
 before_at TIMESTAMP)
WITH new AS (
    SELECT session, topic, max(seq) AS seq, arg_max(received_at, seq) AS received_at
    FROM raw_events
    WHERE event_id > projected_through() AND NOT starts_with(session, 'import:')
      AND NOT window_start_state(source_id, received_at)
    GROUP BY ALL)
SELECT session, topic,
       CASE WHEN n.seq > o.seq OR o.seq IS NULL THEN n.seq ELSE o.seq END AS seq,
       CASE WHEN n.seq > o.seq OR o.seq IS NULL THEN n.received_at ELSE o.received_at END
           AS received_at,
       o.seq AS before_seq, o.received_at AS before_at
FROM sequence_ends o FULL JOIN new n USING (session, topic)
