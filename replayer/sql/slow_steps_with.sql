-- model: macro(override_names, override_seconds); depends: pod_lifecycle, pod_transitions, raw_events, thresholds_with, unseen_stretches
-- A duration over its threshold is `slow` only when ktrace saw both of its ends happen: a
-- step from before the pod's first sighting (derived) makes no verdict, and a duration
-- that overlaps an unseen stretch of the pods topic (or of the whole recording) is
-- `unknown` — the delay may be the recording's, not the cluster's. run_to_watch is judged
-- only when the status write's time is unknown: else run_to_api is the cluster's part of
-- it, and the rest is the recording's delay.
WITH durations AS (
    UNPIVOT (SELECT uid, namespace, pod, derived_steps, create_to_schedule_s, schedule_to_run_s,
                    run_to_api_s, run_to_watch_s, status_written_at IS NOT NULL AS split,
                    ready_to_endpoints_s, request_to_endpoint_not_ready_s,
                    stopped_to_deleted_s, request_to_deleted_s,
                    created_at, scheduled_at, run_at, ready_at, deletion_requested_at,
                    containers_stopped_at
             FROM pod_lifecycle)
    ON create_to_schedule_s, schedule_to_run_s, run_to_api_s, run_to_watch_s,
       ready_to_endpoints_s, request_to_endpoint_not_ready_s, stopped_to_deleted_s, request_to_deleted_s
    INTO NAME step VALUE seconds),
judged AS (
    SELECT d.uid, d.namespace, d.pod, d.step, d.seconds, t.seconds AS threshold_s, t.meaning,
           t.to_step,
           CASE d.step WHEN 'create_to_schedule_s' THEN d.created_at
                       WHEN 'schedule_to_run_s' THEN d.scheduled_at
                       WHEN 'run_to_api_s' THEN d.run_at  -- both from the container start
                       WHEN 'run_to_watch_s' THEN d.run_at
                       WHEN 'ready_to_endpoints_s' THEN d.ready_at
                       WHEN 'stopped_to_deleted_s' THEN d.containers_stopped_at
                       ELSE d.deletion_requested_at END AS start_at
    FROM durations d JOIN thresholds_with(override_names, override_seconds) t ON t.name = d.step
    WHERE d.seconds > t.seconds AND NOT (d.step = 'run_to_watch_s' AND d.split)
      AND NOT list_contains(d.derived_steps, t.from_step)
      AND NOT list_contains(d.derived_steps, t.to_step)),
-- the durations an unseen stretch overlaps at all, and only their pods' topics
overlapping AS MATERIALIZED (
    SELECT j.* FROM judged j
    WHERE EXISTS (SELECT 1 FROM unseen_stretches u
                  WHERE u.start_at < j.start_at + to_microseconds((j.seconds * 1e6)::BIGINT)
                    AND u.end_at > j.start_at)),
pods_topics AS (SELECT DISTINCT uid, topic FROM raw_events
                WHERE kind = 'Pod' AND uid IN (SELECT uid FROM overlapping))
SELECT j.* EXCLUDE (to_step), g.detail AS unseen, g.evidence_event_id AS unseen_event_id,
       -- the record that shows the late step
       (SELECT arg_min(p.evidence_event_id, p.step_no) FROM pod_transitions p
        WHERE p.uid = j.uid AND p.step = j.to_step) AS step_event_id
FROM judged j
LEFT JOIN (SELECT j2.uid, j2.step, arg_min(u.detail, u.start_at) AS detail,
                  arg_min(u.evidence_event_id, u.start_at) AS evidence_event_id
           FROM overlapping j2 JOIN unseen_stretches u
             ON u.start_at < j2.start_at + to_microseconds((j2.seconds * 1e6)::BIGINT)
            AND u.end_at > j2.start_at
            AND (u.topic IS NULL OR u.topic IN (SELECT topic FROM pods_topics p
                                                WHERE p.uid = j2.uid))
            AND (u.namespace IS NULL OR u.namespace = j2.namespace)
           GROUP BY j2.uid, j2.step) g USING (uid, step)
