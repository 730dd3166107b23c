-- model: table; key: uid; depends: owner_refs, pod_transitions, pod_versions_in_scope, pods, projection_scope, pulled_seconds, raw_events, refreshed_from
-- pod_lifecycle: one row per pod uid — every step's time and the durations between them.
-- Startup phases follow clusterloader2's pod startup latency: create (creationTimestamp) →
-- schedule (PodScheduled transition) → run (container start, kubelet clock) → watch (the
-- moment the watch saw it running); run_at is the first container start known (a restarted
-- container's previous run counts). run → watch splits at status_written_at, when the API
-- server applied the status write the watch showed running (its managedFields time; known
-- when that version was seen live): run_to_api_s is the cluster's part, api_to_watch_s the
-- recording's (a recorder that was down, behind, or reading old history). Deletion phases
-- use observed times: request → endpoint not ready → kill → containers stopped → deleted. derived_steps lists the steps that
-- happened before the pod was first seen (their times come from the object). Durations
-- are seconds (DOUBLE).
WITH steps AS (
    SELECT uid, any_value(namespace) AS namespace, any_value(pod) AS pod,
           any_value(time) FILTER (WHERE step = 'created') AS created_seen_at,
           any_value(server_at) FILTER (WHERE step = 'created') AS created_at,
           any_value(time) FILTER (WHERE step = 'scheduled') AS scheduled_seen_at,
           any_value(server_at) FILTER (WHERE step = 'scheduled') AS scheduled_server_at,
           any_value(detail) FILTER (WHERE step = 'scheduled') AS node,
           any_value(server_at) FILTER (WHERE step = 'running') AS run_at,
           any_value(time) FILTER (WHERE step = 'running') AS watch_running_at,
           any_value(evidence_event_id) FILTER (WHERE step = 'running' AND NOT derived
                                                AND evidence_type IN ('ADDED', 'MODIFIED'))
               AS running_event_id,
           any_value(time) FILTER (WHERE step = 'ready') AS ready_at,
           any_value(time) FILTER (WHERE step = 'in_endpoints') AS in_endpoints_at,
           any_value(time) FILTER (WHERE step = 'deletion_requested') AS deletion_requested_at,
           any_value(time) FILTER (WHERE step = 'endpoint_not_ready') AS endpoint_not_ready_at,
           any_value(time) FILTER (WHERE step = 'killing') AS kill_at,
           any_value(time) FILTER (WHERE step = 'containers_stopped') AS containers_stopped_at,
           any_value(server_at) FILTER (WHERE step = 'containers_stopped')
               AS containers_finished_at,
           any_value(time) FILTER (WHERE step = 'terminal') AS terminal_at,
           -- who stopped a pod that was never deleted: the kubelet's path on its terminal step
           any_value(nullif(regexp_extract(detail, ' — (kubelet \(.*\))$', 1), ''))
               FILTER (WHERE step = 'terminal') AS stopped_by,
           any_value(time) FILTER (WHERE step = 'endpoint_removed') AS endpoint_removed_at,
           any_value(time) FILTER (WHERE step = 'deleted') AS deleted_at,
           any_value(time) FILTER (WHERE step = 'pulling') AS pulling_at,
           any_value(time) FILTER (WHERE step = 'pulled') AS pulled_at,
           any_value(pulled_seconds(detail)) FILTER (WHERE step = 'pulled') AS pulled_in_s,
           any_value(time) FILTER (WHERE step = 'first_seen') AS first_seen_at,
           list(step ORDER BY step) FILTER (WHERE derived) AS derived_steps,
           count(*) FILTER (WHERE step = 'restarted') AS restart_steps,
           count(*) AS steps
    FROM pod_transitions WHERE rowid >= refreshed_from('pod_transitions')
      AND uid IN (SELECT uid FROM projection_scope) GROUP BY uid),
-- how the containers stopped, against the deletion deadline (deletionTimestamp)
stops AS (
    SELECT uid, arg_min(deletion_at, version_no) FILTER (WHERE deletion_at IS NOT NULL)
               AS deadline_at,
           arg_min(exit_codes, version_no) FILTER (WHERE containers > 0
                                                   AND containers_terminated = containers)
               AS exit_codes,
           arg_min(containers_finished_at, version_no)
               FILTER (WHERE containers > 0 AND containers_terminated = containers)
               AS finished_at,
           arg_min(exit_reasons, version_no) FILTER (WHERE containers > 0
                                                     AND containers_terminated = containers)
               AS exit_reasons,
           max(restarts) AS restarts, max(containers_ran) AS ran, max(grace_s) AS grace_s,
           max(containers_waiting) AS waited
    FROM pod_versions_in_scope GROUP BY uid),
owners AS (
    SELECT o.uid, any_value(o.owner_kind || '/' || o.owner_name) AS owner
    FROM owner_refs o JOIN raw_events r USING (event_id)
    WHERE r.kind = 'Pod' AND o.controller AND o.uid IN (SELECT uid FROM projection_scope) GROUP BY o.uid)
SELECT s.uid, s.namespace, s.pod, o.owner, s.node, s.steps,
       s.created_at, coalesce(s.scheduled_server_at, s.scheduled_seen_at) AS scheduled_at,
       s.run_at, w.status_written_at, s.watch_running_at, s.ready_at, s.in_endpoints_at,
       s.deletion_requested_at, s.endpoint_not_ready_at, s.kill_at, s.containers_stopped_at,
       s.containers_finished_at, s.terminal_at, s.endpoint_removed_at, s.deleted_at,
       epoch(coalesce(s.scheduled_server_at, s.scheduled_seen_at) - s.created_at)
           AS create_to_schedule_s,
       epoch(s.run_at - coalesce(s.scheduled_server_at, s.scheduled_seen_at)) AS schedule_to_run_s,
       epoch(s.watch_running_at - s.run_at) AS run_to_watch_s,
       epoch(w.status_written_at - s.run_at) AS run_to_api_s,
       epoch(s.watch_running_at - w.status_written_at) AS api_to_watch_s,
       epoch(s.watch_running_at - coalesce(s.scheduled_server_at, s.scheduled_seen_at))
           AS schedule_to_watch_s,
       epoch(s.watch_running_at - s.created_at) AS startup_s,
       epoch(s.in_endpoints_at - s.ready_at) AS ready_to_endpoints_s,
       epoch(s.endpoint_not_ready_at - s.deletion_requested_at) AS request_to_endpoint_not_ready_s,
       epoch(s.kill_at - s.deletion_requested_at) AS request_to_kill_s,
       epoch(s.containers_stopped_at - s.deletion_requested_at) AS request_to_stopped_s,
       epoch(s.containers_stopped_at - s.kill_at) AS kill_to_stopped_s,
       epoch(s.deleted_at - s.containers_stopped_at) AS stopped_to_deleted_s,
       epoch(s.deleted_at - s.deletion_requested_at) AS request_to_deleted_s,
       s.pulling_at, s.pulled_at,
       coalesce(s.pulled_in_s, epoch(s.pulled_at - s.pulling_at)) AS pull_s,
       s.first_seen_at, coalesce(s.derived_steps, []) AS derived_steps,
       coalesce(t.restarts, 0) AS restarts, t.deadline_at, t.exit_codes,
       CASE WHEN t.exit_codes IS NULL THEN NULL
            -- a pod deleted before any container ran (an image never pulled): its
            -- terminated states are the kubelet's stand-ins, not exits
            WHEN t.ran = 0 AND t.waited > 0
                THEN 'never started (seen waiting, never running)'
            -- ContainerStatusUnknown's 137 is the kubelet's stand-in for a container it lost
            WHEN list_distinct(t.exit_reasons) = ['ContainerStatusUnknown']
                THEN 'ended unseen (ContainerStatusUnknown: the kubelet could not locate them)'
            WHEN list_contains(t.exit_codes, 137) AND t.finished_at >= t.deadline_at - INTERVAL 1 SECOND
                THEN 'did not exit on SIGTERM; killed at the deadline'
            WHEN list_contains(t.exit_codes, 137) AND t.deadline_at IS NOT NULL
                THEN 'killed (SIGKILL, exit 137) before the deadline'
            -- never deleted: the kubelet stopped the pod itself (critical-pod preemption,
            -- node-pressure eviction, node shutdown) with the pod's own grace period, counted
            -- from its Killing Event (pkg/kubelet/pod_workers.go killPodNow)
            WHEN list_contains(t.exit_codes, 137) AND s.stopped_by IS NOT NULL
                 AND t.finished_at >= s.kill_at + to_seconds(coalesce(t.grace_s, 30)) - INTERVAL 1 SECOND
                THEN 'did not exit on SIGTERM; killed when its grace period ('
                     || coalesce(t.grace_s, 30) || 's) ran out after ' || s.stopped_by
                     || ' stopped it (no deletion)'
            WHEN list_contains(t.exit_codes, 137) AND s.stopped_by IS NOT NULL
                THEN 'killed (SIGKILL, exit 137) by ' || s.stopped_by || ' (no deletion)'
            WHEN list_contains(t.exit_codes, 137) THEN 'killed (SIGKILL, exit 137) without a deletion'
            WHEN list_distinct(t.exit_codes) = [143] THEN 'exited on SIGTERM'
            -- exit 0 on the kubelet's own SIGTERM (a node shutdown): stopped, not finished
            WHEN list_distinct(t.exit_codes) = [0] AND s.stopped_by IS NOT NULL
                THEN 'exited 0 on the SIGTERM of ' || s.stopped_by || ': stopped, not finished (no deletion)'
            WHEN list_distinct(t.exit_codes) = [0] THEN 'exited cleanly'
            ELSE 'exited with ' || array_to_string(t.exit_codes, ',') END AS stop_verdict
FROM steps s LEFT JOIN owners o USING (uid) LEFT JOIN stops t USING (uid)
LEFT JOIN pods w ON w.event_id = s.running_event_id
