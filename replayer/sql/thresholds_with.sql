-- model: macro(override_names, override_seconds); depends: gap_thresholds
-- The thresholds, some overridden for one query (override_names[i] → override_seconds[i]):
-- analyses open the database read-only, so an override never writes.
SELECT t.name,
       coalesce(list_extract(override_seconds, list_position(override_names, t.name))::DOUBLE,
                t.seconds) AS seconds,
       t.meaning, t.from_step, t.to_step
FROM gap_thresholds t
