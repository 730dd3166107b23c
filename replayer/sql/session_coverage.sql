-- model: view; depends: markers, session_topics
-- What each recorder session watched, and when: one row per (session, topic) with the
-- namespace scopes of its watches on that topic (from its SESSION_START marker's watch keys
-- resource.group.scope; '_all' is every namespace, and a session whose start was not loaded
-- counts as '_all'). A session is one process watching all its topics for its whole life:
-- it covers them from its first record (of any topic) to its last.
-- How far the position-tracked projections below reach: the event_id the last refresh
WITH per_topic AS (SELECT * FROM session_topics),
scopes AS (
    SELECT session, topic, list(DISTINCT regexp_extract(watch, '[^.]*$') ORDER BY 1) AS scopes
    FROM (SELECT session, topic, unnest(kinds) AS watch FROM markers
          WHERE type = 'SESSION_START') GROUP BY ALL)
SELECT cluster, session, topic, coalesce(s.scopes, ['_all']) AS scopes,
       min(first_at) OVER w AS first_at, max(last_at) OVER w AS last_at,
       bool_or(ended) OVER w AS ended, arg_max(last_event_id, last_at) OVER w AS last_event_id
FROM per_topic LEFT JOIN scopes s USING (session, topic)
WINDOW w AS (PARTITION BY cluster, session)
