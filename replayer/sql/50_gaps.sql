-- gaps: what went slowly (category 'slow': a pod_lifecycle duration over its threshold)
-- and what the recording did not see (category 'unseen': GAP records, the time between a
-- session's end or loss and the next session, holes in a session's sequence numbers, and
-- 'damaged': a byte range of the source that could not be read, from the last record read
-- before it in its topic to the first one after it, or the end of the data).
-- Documented in docs/projections.md.

CREATE TABLE IF NOT EXISTS gap_thresholds (
    name VARCHAR PRIMARY KEY, seconds DOUBLE, meaning VARCHAR, from_step VARCHAR,
    to_step VARCHAR);
INSERT OR IGNORE INTO gap_thresholds VALUES
    ('create_to_schedule_s', 5, 'pod waited for the scheduler', 'created', 'scheduled'),
    ('schedule_to_run_s', 30, 'kubelet took long to start the containers (image pulls, volumes)',
     'scheduled', 'running'),
    ('run_to_api_s', 5, 'status reached the API server late', 'running', 'running'),
    ('run_to_watch_s', 5, 'status reached the API server or the recorder late', 'running',
     'running'),
    ('ready_to_endpoints_s', 5, 'endpointslice controller added the ready pod late', 'ready',
     'in_endpoints'),
    ('request_to_endpoint_not_ready_s', 5, 'endpoint kept receiving traffic after deletion',
     'deletion_requested', 'endpoint_not_ready'),
    ('stopped_to_deleted_s', 10, 'pod object lingered after its containers stopped',
     'containers_stopped', 'deleted'),
    ('request_to_deleted_s', 60, 'deletion took long overall', 'deletion_requested', 'deleted');

-- The thresholds, some overridden for one query (override_names[i] → override_seconds[i]):
-- analyses open the database read-only, so an override never writes.
CREATE OR REPLACE MACRO thresholds_with(override_names, override_seconds) AS TABLE
SELECT t.name,
       coalesce(list_extract(override_seconds, list_position(override_names, t.name))::DOUBLE,
                t.seconds) AS seconds,
       t.meaning, t.from_step, t.to_step
FROM gap_thresholds t;

-- How long before the end of the data a topic's last session may have stopped (or written
-- its last record) and still count as the end of that topic's recording, not as an unseen
-- stretch: shards stopped one after the other end together, and a live recorder writes a
-- BOOKMARK marker per watch about once a minute (when the API server sends bookmarks).
CREATE TABLE IF NOT EXISTS session_thresholds (name VARCHAR PRIMARY KEY, seconds DOUBLE,
                                               meaning VARCHAR);
INSERT OR IGNORE INTO session_thresholds VALUES
    ('silent_session_s', 180, 'a topic no session recorded during the last this many seconds '
     'of the data is unseen from its last record on');

-- What each recorder session watched, and when: one row per (session, topic) with the
-- namespace scopes of its watches on that topic (from its SESSION_START marker's watch keys
-- resource.group.scope; '_all' is every namespace, and a session whose start was not loaded
-- counts as '_all'). A session is one process watching all its topics for its whole life:
-- it covers them from its first record (of any topic) to its last.
-- How far the position-tracked projections below reach: the event_id the last refresh
-- projected (replayer/projections.py), 0 before the first; rows after it are new.
CREATE OR REPLACE MACRO projected_through() AS
    (SELECT coalesce(max(value::BIGINT), 0) FROM ktrace_meta WHERE key = 'projected_through');

-- Each recorder session's records per topic: first and last receive time, whether it
-- ended, its last record. Materialized: each refresh merges the new records' aggregates
-- into the table (session_topics_computed is the table and the new rows, merged).
CREATE OR REPLACE TABLE session_topics (
    cluster VARCHAR, session VARCHAR, topic VARCHAR, first_at TIMESTAMP, last_at TIMESTAMP,
    ended BOOLEAN, last_event_id BIGINT);

CREATE OR REPLACE VIEW session_topics_computed AS
SELECT cluster, session, topic, min(first_at) AS first_at, max(last_at) AS last_at,
       bool_or(ended) AS ended, arg_max(last_event_id, last_at) AS last_event_id
FROM (SELECT * FROM session_topics
      UNION ALL
      SELECT cluster, session, topic, min(received_at), max(received_at),
             bool_or(type = 'SESSION_END'), arg_max(event_id, received_at)
      FROM raw_events WHERE event_id > projected_through() AND NOT starts_with(session, 'import:')
      GROUP BY ALL)
GROUP BY ALL;

-- Holes in each session's sequence numbers per topic (duplicates re-sent by a restarted
-- recorder were delivered, not lost). Materialized: a refresh recomputes each (session,
-- topic) with new records (or duplicates) from the last record before the lowest new
-- sequence number on (sequence_rescan: after_seq); the holes that end at or before it stay.
CREATE OR REPLACE VIEW sequence_rescan AS
WITH new AS (
    SELECT session, topic, min(seq) AS lo
    FROM (SELECT session, topic, seq FROM raw_events WHERE event_id > projected_through()
          UNION ALL SELECT session, topic, seq FROM duplicate_sequence)
    WHERE NOT starts_with(session, 'import:') GROUP BY ALL)
SELECT n.session, n.topic,
       coalesce((SELECT max(r.seq) FROM raw_events r WHERE r.session = n.session
                 AND r.topic = n.topic AND r.seq < n.lo), n.lo) AS after_seq
FROM new n;

CREATE OR REPLACE VIEW sequence_holes_computed AS
WITH sequenced AS (
    SELECT u.session, u.topic, u.seq, u.received_at, u.event_id,
           lag(u.seq) OVER w AS prev_seq, lag(u.received_at IGNORE NULLS) OVER w AS prev_at
    FROM (SELECT session, topic, seq, received_at, event_id FROM raw_events
          UNION ALL
          SELECT session, topic, seq, NULL, NULL FROM duplicate_sequence) u
    JOIN sequence_rescan s ON s.session = u.session AND s.topic = u.topic
    WHERE u.seq >= s.after_seq
    WINDOW w AS (PARTITION BY u.session, u.topic ORDER BY u.seq))
SELECT session, topic, prev_seq, seq, prev_at, received_at, event_id
FROM sequenced WHERE seq - prev_seq > 1 AND event_id IS NOT NULL;

CREATE OR REPLACE TABLE sequence_holes AS FROM sequence_holes_computed LIMIT 0;

CREATE OR REPLACE VIEW session_coverage AS
WITH per_topic AS (SELECT * FROM session_topics),
scopes AS (
    SELECT session, topic, list(DISTINCT regexp_extract(watch, '[^.]*$') ORDER BY 1) AS scopes
    FROM (SELECT session, topic, unnest(kinds) AS watch FROM markers
          WHERE type = 'SESSION_START') GROUP BY ALL)
SELECT cluster, session, topic, coalesce(s.scopes, ['_all']) AS scopes,
       min(first_at) OVER w AS first_at, max(last_at) OVER w AS last_at,
       bool_or(ended) OVER w AS ended, arg_max(last_event_id, last_at) OVER w AS last_event_id
FROM per_topic LEFT JOIN scopes s USING (session, topic)
WINDOW w AS (PARTITION BY cluster, session);

-- The stretches no session watched, per (cluster, topic, namespace scope): a unit is
-- covered by every session watching its scope or all namespaces, and is unseen between the
-- end of all its coverage so far and the next session's start (sessions that overlap in
-- time — shards, a rolling update of the recorder — leave no stretch), and after its last
-- session until the end of the cluster's data if that was long (session_thresholds: a
-- shard that stopped or died while others recorded on). Before a unit's first session is
-- not a stretch: its recording starts there. A stretch that every unit of the cluster
-- shares is one row of the whole recording (topic NULL).
CREATE OR REPLACE VIEW session_stretches AS
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
FROM shared;

CREATE OR REPLACE VIEW unseen_stretches AS
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
SELECT s.*, c.cluster FROM stretches s LEFT JOIN session_clusters c USING (session);

-- A duration over its threshold is `slow` only when ktrace saw both of its ends happen: a
-- step from before the pod's first sighting (derived) makes no verdict, and a duration
-- that overlaps an unseen stretch of the pods topic (or of the whole recording) is
-- `unknown` — the delay may be the recording's, not the cluster's. run_to_watch is judged
-- only when the status write's time is unknown: else run_to_api is the cluster's part of
-- it, and the rest is the recording's delay.
CREATE OR REPLACE MACRO slow_steps_with(override_names, override_seconds) AS TABLE
WITH durations AS (
    UNPIVOT (SELECT uid, namespace, pod, derived_steps, create_to_schedule_s, schedule_to_run_s,
                    run_to_api_s, run_to_watch_s, status_written_at IS NOT NULL AS split,
                    ready_to_endpoints_s, request_to_endpoint_not_ready_s,
                    stopped_to_deleted_s, request_to_deleted_s,
                    created_at, scheduled_at, run_at, ready_at, deletion_requested_at,
                    containers_stopped_at
             FROM pod_lifecycle)
    ON create_to_schedule_s, schedule_to_run_s, run_to_api_s, run_to_watch_s,
       ready_to_endpoints_s, request_to_endpoint_not_ready_s, stopped_to_deleted_s, request_to_deleted_s
    INTO NAME step VALUE seconds),
judged AS (
    SELECT d.uid, d.namespace, d.pod, d.step, d.seconds, t.seconds AS threshold_s, t.meaning,
           t.to_step,
           CASE d.step WHEN 'create_to_schedule_s' THEN d.created_at
                       WHEN 'schedule_to_run_s' THEN d.scheduled_at
                       WHEN 'run_to_api_s' THEN d.run_at  -- both from the container start
                       WHEN 'run_to_watch_s' THEN d.run_at
                       WHEN 'ready_to_endpoints_s' THEN d.ready_at
                       WHEN 'stopped_to_deleted_s' THEN d.containers_stopped_at
                       ELSE d.deletion_requested_at END AS start_at
    FROM durations d JOIN thresholds_with(override_names, override_seconds) t ON t.name = d.step
    WHERE d.seconds > t.seconds AND NOT (d.step = 'run_to_watch_s' AND d.split)
      AND NOT list_contains(d.derived_steps, t.from_step)
      AND NOT list_contains(d.derived_steps, t.to_step)),
-- the durations an unseen stretch overlaps at all, and only their pods' topics
overlapping AS MATERIALIZED (
    SELECT j.* FROM judged j
    WHERE EXISTS (SELECT 1 FROM unseen_stretches u
                  WHERE u.start_at < j.start_at + to_microseconds((j.seconds * 1e6)::BIGINT)
                    AND u.end_at > j.start_at)),
pods_topics AS (SELECT DISTINCT uid, topic FROM raw_events
                WHERE kind = 'Pod' AND uid IN (SELECT uid FROM overlapping))
SELECT j.* EXCLUDE (to_step), g.detail AS unseen, g.evidence_event_id AS unseen_event_id,
       -- the record that shows the late step
       (SELECT arg_min(p.evidence_event_id, p.step_no) FROM pod_transitions p
        WHERE p.uid = j.uid AND p.step = j.to_step) AS step_event_id
FROM judged j
LEFT JOIN (SELECT j2.uid, j2.step, arg_min(u.detail, u.start_at) AS detail,
                  arg_min(u.evidence_event_id, u.start_at) AS evidence_event_id
           FROM overlapping j2 JOIN unseen_stretches u
             ON u.start_at < j2.start_at + to_microseconds((j2.seconds * 1e6)::BIGINT)
            AND u.end_at > j2.start_at
            AND (u.topic IS NULL OR u.topic IN (SELECT topic FROM pods_topics p
                                                WHERE p.uid = j2.uid))
            AND (u.namespace IS NULL OR u.namespace = j2.namespace)
           GROUP BY j2.uid, j2.step) g USING (uid, step);
CREATE OR REPLACE VIEW slow_steps AS SELECT * FROM slow_steps_with([]::VARCHAR[], []::DOUBLE[]);

CREATE OR REPLACE MACRO gaps_with(override_names, override_seconds) AS TABLE
SELECT 'unseen' AS category, type, session, topic, namespace,
       NULL::VARCHAR AS name, NULL::VARCHAR AS uid, start_at, end_at,
       epoch(end_at - start_at) AS seconds, NULL::DOUBLE AS threshold_s, detail,
       evidence_event_id
FROM unseen_stretches
UNION ALL
SELECT CASE WHEN unseen IS NULL THEN 'slow' ELSE 'unknown' END,
       regexp_replace(step, '_s$', ''), NULL, NULL, namespace, pod, uid, start_at,
       start_at + to_microseconds((seconds * 1e6)::BIGINT), seconds, threshold_s,
       CASE WHEN unseen IS NULL THEN meaning
            ELSE 'unknown (recording gap): the recording did not see ' || unseen END,
       CASE WHEN unseen IS NULL THEN step_event_id ELSE unseen_event_id END
FROM slow_steps_with(override_names, override_seconds);

CREATE OR REPLACE VIEW gaps AS SELECT * FROM gaps_with([]::VARCHAR[], []::DOUBLE[]);

-- Whether unseen stretch `gap` hides what happened to object version `obj` (its cluster,
-- namespace and topic, last read at its received_at), judged at `ts`: the stretch is of
-- the object's cluster, namespace scope and topic (or of all of them), and it covers ts,
-- or it is damage after the object's last record (nothing re-lists after damage). Used by
-- the stuck and not-running analyses' recording_gap cause, with gap_label for its detail.
CREATE OR REPLACE MACRO gap_hides(gap, obj, ts) AS
    (gap.cluster IS NULL OR gap.cluster = obj.cluster)
    AND (gap.namespace IS NULL OR gap.namespace = obj.namespace)
    AND (gap.topic IS NULL OR gap.topic = obj.topic) AND gap.start_at <= ts
    AND (gap.end_at > ts OR (gap.type = 'damaged' AND gap.end_at > obj.received_at));

CREATE OR REPLACE MACRO gap_label(gap_type, gap_start, gap_end) AS
    gap_type || ' ' || gap_start || ' – ' || gap_end;
