-- model: table; depends: projected_through, raw_events, window_start_state
-- Each recorder session's records per topic: first and last receive time, whether it
-- ended, its last record. Each refresh merges the aggregates of the records after
-- projected_through into the table's rows. Records loaded as the state at a window's start
-- cover nothing (window_start_state).
(cluster VARCHAR, session VARCHAR, topic VARCHAR, first_at TIMESTAMP, last_at TIMESTAMP,
    ended BOOLEAN, last_event_id BIGINT)
SELECT cluster, session, topic, min(first_at) AS first_at, max(last_at) AS last_at,
       bool_or(ended) AS ended, arg_max(last_event_id, last_at) AS last_event_id
FROM (SELECT * FROM session_topics
      UNION ALL
      SELECT cluster, session, topic, min(received_at), max(received_at),
             bool_or(type = 'SESSION_END'), arg_max(event_id, received_at)
      FROM raw_events WHERE event_id > projected_through() AND NOT starts_with(session, 'import:')
        AND NOT window_start_state(source_id, received_at)
      GROUP BY ALL)
GROUP BY ALL
