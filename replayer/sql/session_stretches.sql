-- model: view; depends: session_coverage, session_thresholds
-- The stretches no session watched, per (cluster, topic, namespace scope): a unit is
-- covered by every session watching its scope or all namespaces, and is unseen between the
-- end of all its coverage so far and the next session's start (sessions that overlap in
-- time — shards, a rolling update of the recorder — leave no stretch), and after its last
-- session until the end of the cluster's data if that was long (session_thresholds: a
-- shard that stopped or died while others recorded on). Before a unit's first session is
-- not a stretch: its recording starts there. A stretch that every unit of the cluster
-- shares is one row of the whole recording (topic NULL).
WITH coverage AS MATERIALIZED (SELECT * FROM session_coverage),  -- one scan of raw_events
units AS MATERIALIZED (
    SELECT DISTINCT cluster, topic, unnest(scopes) AS scope FROM coverage),
unit_counts AS (SELECT cluster, count(*) AS units FROM units GROUP BY cluster),
covering AS (
    SELECT u.cluster, u.topic, u.scope, c.session, c.first_at, c.last_at,
           {'session': c.session, 'ended': c.ended, 'event_id': c.last_event_id} AS ending
    FROM units u JOIN coverage c USING (cluster, topic)
    WHERE list_contains(c.scopes, u.scope) OR list_contains(c.scopes, '_all')),
before AS (
    SELECT *, max(last_at) OVER w AS covered_until, arg_max(ending, last_at) OVER w AS ended_by
    FROM covering
    WINDOW w AS (PARTITION BY cluster, topic, scope ORDER BY first_at, session
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)),
data_ends AS (SELECT cluster, max(last_at) AS data_end FROM coverage GROUP BY cluster),
last_cover AS (
    SELECT cluster, topic, scope, max(last_at) AS last_at, arg_max(ending, last_at) AS ended_by
    FROM covering GROUP BY ALL),
holes AS (
    SELECT cluster, topic, scope, ended_by, covered_until AS start_at, first_at AS end_at,
           session AS next_session
    FROM before WHERE first_at > covered_until
    UNION ALL
    SELECT l.cluster, l.topic, l.scope, l.ended_by, l.last_at, e.data_end, NULL
    FROM last_cover l JOIN data_ends e USING (cluster)
    WHERE e.data_end - l.last_at > to_microseconds(
        (SELECT (seconds * 1e6)::BIGINT FROM session_thresholds WHERE name = 'silent_session_s'))),
shared AS (
    SELECT h.*, count(*) OVER (PARTITION BY cluster, ended_by.session, start_at, end_at)
               = n.units AS whole
    FROM holes h JOIN unit_counts n USING (cluster))
SELECT DISTINCT CASE WHEN ended_by.ended THEN 'session_gap' ELSE 'session_lost' END AS type,
       ended_by.session AS session,
       CASE WHEN NOT whole THEN topic END AS topic,
       CASE WHEN NOT whole AND scope <> '_all' THEN scope END AS namespace,
       start_at, end_at,
       CASE WHEN ended_by.ended THEN 'recorder stopped'
            ELSE 'recorder session ended without SESSION_END' END
           || coalesce('; next session ' || next_session,
                       '; no session watched ' || CASE WHEN whole THEN 'the cluster'
                           ELSE topic || CASE WHEN scope = '_all' THEN ''
                                              ELSE ' in namespace ' || scope END END
                       || ' afterwards') AS detail,
       ended_by.event_id AS evidence_event_id
FROM shared
