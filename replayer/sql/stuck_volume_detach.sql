-- model: macro(stuck, events, ts); depends: cause_score, state_at, volumes
-- volume_detach: unmount/detach failures, or an attachment of the pod's claims still
-- attached to its node (scored lower from the attached VolumeAttachment alone).
WITH stuck AS MATERIALIZED (FROM query_table(stuck)),
live AS NOT MATERIALIZED (
    SELECT kind, cluster, namespace, name, uid, event_id FROM state_at(ts)),
claim_attachments AS (
    SELECT s.uid, list(va.event_id ORDER BY va.event_id) AS ids,
           string_agg(va.name || ' (' || vv.pv_name || ')', ', ' ORDER BY va.name)
               AS names
    FROM stuck s, unnest(s.claim_names) AS c(claim)
    JOIN live pvc ON pvc.kind = 'PersistentVolumeClaim' AND pvc.cluster = s.cluster
                 AND pvc.namespace = s.namespace AND pvc.name = c.claim
    JOIN volumes pv ON pv.event_id = pvc.event_id
    JOIN live va ON va.kind = 'VolumeAttachment' AND va.cluster = s.cluster
    JOIN volumes vv ON vv.event_id = va.event_id AND vv.pv_name = pv.volume_name
                   AND vv.node_name = s.node_name AND vv.attached
    GROUP BY s.uid)
SELECT s.uid, 'volume_detach' AS cause, cause_score('volume_detach', e.uid IS NULL) AS score,
       concat_ws('; ', e.message, 'still attached: ' || a.names) AS detail,
       coalesce(e.ids, []) || coalesce(a.ids, []) AS evidence
FROM stuck s
LEFT JOIN (SELECT uid, flatten(list(ids ORDER BY reason)) AS ids,
                  string_agg(reason || ': ' || message, '; ' ORDER BY reason) AS message
           FROM query_table(events)
           WHERE reason IN ('FailedUnMount', 'FailedDetachVolume', 'FailedMapVolume')
           GROUP BY uid) e ON e.uid = s.uid
LEFT JOIN claim_attachments a ON a.uid = s.uid
WHERE e.uid IS NOT NULL OR a.uid IS NOT NULL
