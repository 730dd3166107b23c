-- model: macro(stuck, running, events); depends: cause_score
-- containers_not_exiting: containers still running past the grace period; scored lower
-- without the kubelet's ExceededGracePeriod or FailedKillPod Events.
SELECT s.uid, 'containers_not_exiting' AS cause,
       cause_score('containers_not_exiting', e.uid IS NULL) AS score,
       'containers still running past the grace period: ' || array_to_string(r.names, ', ')
           || coalesce('; ' || e.message, '') AS detail,
       [s.event_id] || coalesce(e.ids, []) AS evidence
FROM query_table(stuck) s JOIN query_table(running) r USING (uid)
LEFT JOIN (SELECT uid, flatten(list(ids ORDER BY reason)) AS ids,
                  string_agg(reason || ': ' || message, '; ' ORDER BY reason) AS message
           FROM query_table(events)
           WHERE reason IN ('ExceededGracePeriod', 'FailedKillPod')
           GROUP BY uid) e ON e.uid = s.uid
