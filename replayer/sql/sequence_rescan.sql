-- model: view; depends: duplicate_sequence, duplicates_projected, projected_through, raw_events, sequence_ends, window_start_state
-- The (session, topic) pairs with records (or duplicates skipped) since the last refresh,
-- and the sequence number sequence_holes recomputes them from: the last record's before
-- the lowest new one. ``appended``: every new one comes after the pair's last record
-- before them (sequence_ends: before_seq), which is then that record, known without
-- reading the history; else (records out of order, a new pair) the history is searched.
-- (Read during a refresh, after sequence_ends' and before sequence_holes'.)
WITH new AS (
    SELECT session, topic, min(seq) AS lo
    FROM (SELECT session, topic, seq FROM raw_events WHERE event_id > projected_through()
                AND NOT window_start_state(source_id, received_at)
          UNION ALL SELECT session, topic, seq FROM duplicate_sequence
          WHERE rowid >= duplicates_projected())
    WHERE NOT starts_with(session, 'import:') GROUP BY ALL),
ended AS (
    SELECT n.*, e.before_seq < n.lo AS appended, e.before_seq
    FROM new n LEFT JOIN sequence_ends e USING (session, topic)),
searched AS (
    SELECT n.session, n.topic, max(r.seq) AS before_lo
    FROM ended n JOIN raw_events r
      ON r.session = n.session AND r.topic = n.topic AND r.seq < n.lo
    WHERE NOT coalesce(n.appended, false) AND NOT window_start_state(r.source_id, r.received_at)
    GROUP BY ALL)
SELECT n.session, n.topic, coalesce(n.appended, false) AS appended,
       CASE WHEN n.appended THEN n.before_seq ELSE coalesce(s.before_lo, n.lo) END AS after_seq
FROM ended n LEFT JOIN searched s USING (session, topic)
