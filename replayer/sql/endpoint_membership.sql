-- model: table; key: slice_uid; depends: endpoints, projection_scope, raw_events
-- One row per stretch of time a pod (targetRef uid) had one state in one EndpointSlice:
-- state is ready, serving (ready=false, serving=true: terminating but still serving),
-- not_ready, or absent (left the slice, or the slice was deleted). until_at is NULL for
-- the stretch still open at the end of the data. Materialized per slice (slice_uid in
-- projection_scope).
WITH slice_versions AS (
    SELECT event_id, uid AS slice_uid, cluster, namespace, type, rv, received_at,
           labels['kubernetes.io/service-name'] AS service
    FROM raw_events WHERE kind = 'EndpointSlice' AND uid IS NOT NULL
      AND uid IN (SELECT uid FROM projection_scope)),
targets AS (
    SELECT e.slice_uid, e.target_uid, any_value(e.target_name) AS pod
    FROM endpoints e WHERE e.target_uid IS NOT NULL
      AND e.slice_uid IN (SELECT uid FROM projection_scope) GROUP BY ALL),
grid AS (
    SELECT v.*, t.target_uid, t.pod, e.addresses, e.ready, e.serving, e.terminating,
           CASE WHEN e.event_id IS NULL OR v.type IN ('DELETED', 'INFERRED_DELETED')
                THEN 'absent'
                WHEN e.ready IS NOT FALSE THEN 'ready'
                WHEN e.serving THEN 'serving'
                ELSE 'not_ready' END AS state
    FROM slice_versions v JOIN targets t USING (slice_uid)
    LEFT JOIN endpoints e ON e.event_id = v.event_id AND e.target_uid = t.target_uid),
ordered AS (
    SELECT *, sum(CASE WHEN state = 'absent' THEN 0 ELSE 1 END)
                  OVER (PARTITION BY slice_uid, target_uid ORDER BY rv, event_id) AS seen,
              lag(state) OVER (PARTITION BY slice_uid, target_uid ORDER BY rv, event_id)
                  AS prev_state
    FROM grid),
islands AS (
    SELECT *, sum(CASE WHEN prev_state IS DISTINCT FROM state THEN 1 ELSE 0 END)
                  OVER (PARTITION BY slice_uid, target_uid ORDER BY rv, event_id) AS island
    FROM ordered WHERE seen > 0)
SELECT slice_uid, any_value(cluster) AS cluster, any_value(service) AS service,
       any_value(namespace) AS namespace, target_uid AS pod_uid, any_value(pod) AS pod, state,
       arg_min(ready, rv) AS ready, arg_min(serving, rv) AS serving,
       arg_min(terminating, rv) AS terminating, arg_min(addresses, rv) AS addresses,
       min(received_at) AS since_at,
       lead(min(received_at)) OVER (PARTITION BY slice_uid, target_uid ORDER BY island)
           AS until_at,
       arg_min(event_id, rv) AS since_event_id
FROM islands
GROUP BY slice_uid, target_uid, island, state
