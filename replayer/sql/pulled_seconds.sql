-- model: macro(msg)
-- The kubelet's Pulled message: "Successfully pulled image "x" in 5.87s (5.87s including
-- waiting). Image size: 12 bytes." (1.29+), older "… in 5.869224588s" or "in 1m2.5s":
-- the pull time in seconds, NULL when absent.
(
    SELECT CASE WHEN d = '' THEN NULL
                ELSE coalesce(try_cast(nullif(regexp_extract(d, '(\d+)h', 1), '') AS DOUBLE) * 3600, 0)
                     + coalesce(try_cast(nullif(regexp_extract(d, '(\d+)m(?:[^s]|$)', 1), '') AS DOUBLE) * 60, 0)
                     + coalesce(try_cast(nullif(regexp_extract(d, '([\d.]+)s$', 1), '') AS DOUBLE), 0)
                     + coalesce(try_cast(nullif(regexp_extract(d, '([\d.]+)ms$', 1), '') AS DOUBLE) / 1000, 0)
           END
    FROM (SELECT regexp_extract(msg, 'Successfully pulled image .* in ([0-9hms.]+)', 1) AS d))
