-- model: macro(ts); depends: latest_versions, object_versions
-- Each object's version current at ``ts``, deletions included: the version received at or
-- before ts not superseded by then — the newest one, or an older one superseded after ts
-- (none at the end of the data: the zonemaps of superseded_at skip every row group).
SELECT * FROM latest_versions WHERE received_at <= ts
UNION ALL
SELECT * FROM object_versions WHERE received_at <= ts AND superseded_at > ts
