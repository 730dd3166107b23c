-- model: table; key: uid; depends: projection_scope, raw_events
-- Every version of every object, ordered by resourceVersion within the object (design §4).
-- version_no counts from 1; is_live is false for LISTED/inferred records, whose receive
-- time says when we looked, not when the change happened. seen_from_start: the object's
-- first record is a live ADDED received within 5 s of its creationTimestamp (1 s precision
-- plus clock skew) — else it was first seen mid-life (listed when the recording started,
-- created while the recorder was down, or already there when a capture began) and what
-- happened before its first sighting is known only from its own timestamps.
-- superseded_at: when a newer version (by resourceVersion, as state_at orders them) was
-- first received, NULL for the newest — the version is the object's state from its
-- received_at until then. Materialized: computed for the objects in projection_scope.
-- (the windows sort only the columns they read; the rest joins back by event_id: sorting
-- every column of every version costs twice as much)
WITH numbered AS (
    SELECT r.event_id,
           row_number() OVER w AS version_no,
           lead(r.received_at) OVER w AS next_received_at,
           min(r.received_at) OVER (PARTITION BY r.uid) AS first_seen_at,
           first_value(coalesce(r.type = 'ADDED' AND NOT r.inferred
                                AND r.received_at <= r.created_at + INTERVAL 5 SECOND, false))
               OVER w AS seen_from_start,
           min(r.received_at) OVER (PARTITION BY r.uid ORDER BY r.rv DESC NULLS LAST,
                                    r.event_id DESC ROWS BETWEEN UNBOUNDED PRECEDING
                                    AND 1 PRECEDING) AS superseded_at
    FROM raw_events r
    WHERE r.uid IS NOT NULL AND r.type NOT IN ('BOOKMARK')
      AND r.uid IN (SELECT uid FROM projection_scope)
    WINDOW w AS (PARTITION BY r.uid ORDER BY r.rv NULLS LAST, r.event_id))
SELECT r.* EXCLUDE (object), n.version_no, n.next_received_at,
       r.type IN ('ADDED', 'MODIFIED', 'DELETED') AND NOT r.inferred AS is_live,
       n.first_seen_at, n.seen_from_start, n.superseded_at
FROM raw_events r JOIN numbered n USING (event_id)
