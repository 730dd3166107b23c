-- model: view; depends: conditions, containers, object_versions, pods, projection_scope, ran_to_end, refreshed_from
-- The versions of the pods in projection_scope (what a refresh recomputes) with their typed
-- facts and the conditions and container counts the lifecycle needs (non-init containers
-- only): the containers and conditions of those versions alone are aggregated, not every
-- version's of the whole recording.
WITH v AS (
    SELECT * FROM object_versions
    WHERE kind = 'Pod' AND rowid >= refreshed_from('object_versions')
      AND uid IN (SELECT uid FROM projection_scope)),
cs AS (
    SELECT event_id, count(*) AS containers,
           count(*) FILTER (WHERE state = 'running') AS containers_running,
           count(*) FILTER (WHERE state = 'terminated') AS containers_terminated,
           count(*) FILTER (WHERE state = 'waiting') AS containers_waiting,
           min(started_at) AS containers_started_at, max(finished_at) AS containers_finished_at,
           min(last_started_at) AS containers_last_started_at,
           -- containers that ran at all: one running, or a run that ended (now or last
           -- time). A runtime that could not start one (exit 127/128, ContainerCannotRun,
           -- StartError) still reports a start time; a container the kubelet never found
           -- (ContainerStatusUnknown) and one still waiting (image pull, config) never ran
           count(*) FILTER (WHERE state = 'running'
                            OR (state = 'terminated' AND ran_to_end(reason, exit_code))
                            OR (last_reason IS NOT NULL AND ran_to_end(last_reason, last_exit_code))
                            -- the kubelet's own word that it ran before it lost it
                            OR last_message LIKE '%The container used to be Running%')
               AS containers_ran,
           sum(restart_count)::INTEGER AS restarts,
           list(exit_code ORDER BY name) FILTER (WHERE state = 'terminated') AS exit_codes,
           list(reason ORDER BY name) FILTER (WHERE state = 'terminated') AS exit_reasons
    FROM containers WHERE NOT init AND event_id IN (SELECT event_id FROM v) GROUP BY event_id),
cond AS (
    SELECT event_id,
           any_value(status) FILTER (WHERE type = 'Ready') AS ready_status,
           any_value(last_transition) FILTER (WHERE type = 'Ready') AS ready_transition,
           any_value(last_transition) FILTER (WHERE type = 'PodScheduled' AND status = 'True')
               AS scheduled_transition,
           any_value(reason) FILTER (WHERE type = 'DisruptionTarget' AND status = 'True')
               AS disruption_reason,
           any_value(message) FILTER (WHERE type = 'DisruptionTarget' AND status = 'True')
               AS disruption_message
    FROM conditions WHERE kind = 'Pod' AND event_id IN (SELECT event_id FROM v)
    GROUP BY event_id)
SELECT v.*, p.phase, p.node_name, p.pod_ip, p.start_time, p.grace_s, p.has_prestop,
       p.claim_names, p.status_reason, p.status_message, p.creator, p.status_manager, cond.ready_status, cond.ready_transition,
       cond.scheduled_transition, cond.disruption_reason, cond.disruption_message,
       coalesce(cs.containers, 0) AS containers,
       coalesce(cs.containers_running, 0) AS containers_running,
       coalesce(cs.containers_terminated, 0) AS containers_terminated,
       coalesce(cs.containers_waiting, 0) AS containers_waiting,
       cs.containers_started_at, cs.containers_finished_at, cs.containers_last_started_at,
       coalesce(cs.containers_ran, 0) AS containers_ran,
       coalesce(cs.restarts, 0) AS restarts, cs.exit_codes, cs.exit_reasons
FROM v JOIN pods p USING (event_id)
LEFT JOIN cs USING (event_id) LEFT JOIN cond USING (event_id)
