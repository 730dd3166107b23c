-- model: macro(reason, message, count, first_at, last_at); depends: span_label
-- One Event (or several with the same reason and message) as a detail states it:
-- "Failed ×4, 2026-12-01T09:57:04Z – 09:57:40Z: Failed to pull image …".
reason || CASE WHEN count > 1 THEN ' ×' || count ELSE '' END
    || coalesce(', ' || span_label(first_at, last_at), '') || ': ' || message
