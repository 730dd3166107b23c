-- model: macro(first_at, last_at)
-- A time span for a detail: "2026-12-01T09:57:04Z" or "… – 09:57:40Z" (the date once
-- when both ends share it).
CASE
    WHEN first_at IS NULL AND last_at IS NULL THEN NULL
    WHEN last_at IS NULL OR first_at IS NULL OR first_at = last_at
        THEN strftime(coalesce(first_at, last_at), '%Y-%m-%dT%H:%M:%SZ')
    WHEN first_at::DATE = last_at::DATE
        THEN strftime(first_at, '%Y-%m-%dT%H:%M:%SZ') || ' – ' || strftime(last_at, '%H:%M:%SZ')
    ELSE strftime(first_at, '%Y-%m-%dT%H:%M:%SZ') || ' – '
         || strftime(last_at, '%Y-%m-%dT%H:%M:%SZ') END
