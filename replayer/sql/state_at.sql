-- model: macro(ts); depends: versions_at
-- Every object as it was at ``ts``: its version current at ts, unless that version says it
-- was deleted (without the object JSON: join raw_events by event_id for it).
SELECT * EXCLUDE (version_no, next_received_at, is_live, first_seen_at, seen_from_start,
                  superseded_at)
FROM versions_at(ts)
WHERE type NOT IN ('DELETED', 'INFERRED_DELETED')
