-- model: macro(ts, threshold_s := 60); depends: cause_scores, conditions, container_failure, container_line, containers, event_line, failure_covers, gap_hides, gap_label, image_pull_sub, k8s_events, kubelet_failure, node_health_at, node_pressure_at, node_problem, owner_refs, pods, raw_events, sandbox_sub, scheduling_reasons, span_label, state_at, unseen_stretches, workloads
-- not_running_at(ts, threshold_s := 60): pods that, at ts, were not Running and Ready —
-- `pending` (not scheduled or containers not started), `not_ready` (running but not
-- Ready) or `unknown` (no status recorded: reported only on evidence of a failure) — for
-- longer than threshold_s, or at once when the evidence shows a failure (a cause scored 50 or more: an image that cannot be pulled
-- does not need a minute to be conclusive). Each has ranked causes from cause_scores, each
-- with its evidence records and the message that decides it (a container's waiting
-- message, its last run's termination reason, exit code and message, the Events' text
-- deduplicated with their count and first/last time). Pods being deleted are stuck_at's;
-- finished pods (Succeeded, Failed — evicted, rejected at admission) are not stuck: they
-- are pod_outcomes_at's. Documented in docs/projections.md.
WITH live_pods AS MATERIALIZED (
    SELECT l.uid, l.cluster, l.namespace, l.name, l.event_id, l.topic, l.created_at, l.received_at,
           p.phase, p.node_name, p.claim_names, p.scheduling_gates,
           p.affinity_node
    FROM state_at(ts) l JOIN pods p USING (event_id)
    WHERE l.kind = 'Pod' AND l.deletion_at IS NULL
      AND coalesce(p.phase, 'Pending') NOT IN ('Succeeded', 'Failed')),
-- the pods not Ready: most live pods say Ready=True (at the bench's 1M end, all but one
-- of 17,550), so those are set aside by one anti-join and only the rest have their
-- conditions and containers aggregated
unready AS MATERIALIZED (
    SELECT * FROM live_pods l WHERE NOT EXISTS (
        SELECT 1 FROM conditions c
        WHERE c.event_id = l.event_id AND c.type = 'Ready' AND c.status = 'True')),
-- their conditions and container readiness, in one pass each
pod_conditions AS (
    SELECT c.event_id, any_value(c.status) FILTER (WHERE c.type = 'Ready') AS ready,
           any_value(c.last_transition) FILTER (WHERE c.type = 'Ready') AS ready_transition,
           any_value({'reason': c.reason, 'message': c.message}) FILTER (WHERE c.type = 'Ready')
               AS ready_why,
           -- (the fields read, not the whole row: every column of every condition
           -- row packed into a struct cost a third of not_running_at at 1M events)
           any_value({'status': c.status, 'reason': c.reason, 'message': c.message})
               FILTER (WHERE c.type = 'PodScheduled') AS scheduled,
           count(*) AS conditions
    FROM conditions c WHERE c.event_id IN (SELECT event_id FROM unready) GROUP BY c.event_id),
pod_containers AS (
    SELECT k.event_id, CASE WHEN bool_and(k.ready) THEN 'True' END AS all_ready
    FROM containers k WHERE NOT k.init AND k.event_id IN (SELECT event_id FROM unready)
    GROUP BY k.event_id),
pod AS (
    SELECT l.*,
           -- a capture without conditions: Ready when every container says ready
           coalesce(c.ready, k.all_ready) AS ready_status,
           c.ready_transition, c.ready_why, c.scheduled, coalesce(c.conditions, 0) AS conditions
    FROM unready l LEFT JOIN pod_conditions c USING (event_id)
    LEFT JOIN pod_containers k USING (event_id)),
stuck AS (
    SELECT *, coalesce(ready_transition, created_at, received_at) AS since,
           CASE WHEN phase = 'Running' AND ready_status = 'False' THEN 'not_ready'
                WHEN phase = 'Running' THEN 'unknown'
                WHEN phase = 'Pending' OR node_name IS NOT NULL OR conditions > 0 THEN 'pending'
                ELSE 'unknown' END AS problem
    FROM pod
    WHERE ready_status IS DISTINCT FROM 'True'),
events AS (
    SELECT s.uid, e.reason, e.message, e.type, e.event_id, e.count,
           e.regarding_field_path AS field_path,
           coalesce(e.first_time, e.last_time, r.received_at) AS first_at,
           coalesce(e.last_time, r.received_at) AS event_at,
           -- an Event object's count is cumulative: its latest version counts
           row_number() OVER (PARTITION BY coalesce(e.uid, e.event_id::VARCHAR)
                              ORDER BY r.received_at DESC, e.event_id DESC) = 1 AS latest
    FROM stuck s JOIN k8s_events e ON e.regarding_uid = s.uid
    JOIN raw_events r ON r.event_id = e.event_id
    WHERE r.received_at <= ts),
-- the earliest evidence of the stretch: a Warning about the pod still being reported when
-- the stretch began started its series earlier (a capture that begins late, a List import,
-- a pod first seen mid-life: the pod's own records start after the Events' first time)
earliest AS (
    SELECT s.uid, min(coalesce(e.first_time, e.last_time, r.received_at)) AS first_at
    FROM stuck s JOIN k8s_events e ON e.regarding_uid = s.uid
    JOIN raw_events r ON r.event_id = e.event_id
    WHERE r.received_at <= ts AND e.type = 'Warning'
      AND coalesce(e.last_time, r.received_at) >= s.since
    GROUP BY s.uid),
-- one group per (pod, reason, message): the text once, with its count and first/last
-- time, and the failure it names (classified once here, not at each place that compares it)
event_groups AS (
    SELECT *, kubelet_failure(reason, message) AS failure,
           -- "Error: ErrImagePull" only repeats a reason; the text beside it decides
           regexp_full_match(message, 'Error: \w+') AS bare,
           event_line(reason, message, count, first_at, last_at) AS line
    FROM (SELECT uid, reason, message, any_value(field_path) AS field_path, any_value(type) AS type,
                 sum(count) FILTER (WHERE latest)::INTEGER AS count,
                 min(first_at) AS first_at, max(event_at) AS last_at,
                 list(event_id ORDER BY event_at DESC, event_id DESC)[1:3] AS ids
          FROM events GROUP BY uid, reason, message)),
-- each reason's last Event
last_event AS (
    SELECT uid, reason, arg_max(message, last_at) AS message, min(first_at) AS first_at,
           max(last_at) AS last_at, sum(count)::INTEGER AS count,
           flatten(list(ids ORDER BY last_at DESC))[1:3] AS ids
    FROM event_groups GROUP BY uid, reason),
-- the Events naming each failure: their deduplicated lines (the decisive ones, not a
-- bare "Error: <reason>" when there is more) and every message, for sub-reasons
failure_events AS (
    SELECT uid, failure, bool_or(reason = 'FailedPostStartHook') AS post_start_hook,
           coalesce(list({'line': line, 'text': regexp_replace(message, '^Error: ', '')}
                         ORDER BY last_at DESC, reason, message) FILTER (WHERE NOT bare),
                    list({'line': line, 'text': regexp_replace(message, '^Error: ', '')}
                         ORDER BY last_at DESC, reason, message)) AS items,
           string_agg(message, ' ') AS messages,
           flatten(list(ids ORDER BY last_at DESC, reason, message)) AS ids
    FROM event_groups WHERE failure IS NOT NULL GROUP BY uid, failure),
box AS (
    SELECT s.uid, k.* EXCLUDE (event_id, uid)
    FROM stuck s JOIN containers k USING (event_id)),
c_unschedulable AS (
    SELECT s.uid, 'unschedulable' AS cause,
           concat_ws(' — ',
               array_to_string(list_distinct([x.category FOR x IN
                   scheduling_reasons(coalesce(e.message, s.scheduled.message)).reasons]), ', '),
               coalesce(e.message, s.scheduled.message))
           -- how long the scheduler has been saying so
           || coalesce('; FailedScheduling' || CASE WHEN e.count > 1 THEN ' ×' || e.count ELSE '' END
                       || ', ' || span_label(e.first_at, e.last_at), '')
           -- why a generic ephemeral volume's claim does not exist: the ephemeral volume
           -- controller's Warning on the pod (a quota, a webhook), which the scheduler's
           -- "waiting for ephemeral volume controller…" does not say
           || coalesce('; ' || event_line(b.reason, b.message, b.count, b.first_at, b.last_at), '')
           -- a DaemonSet's pod may go to one node only (its required node affinity on
           -- metadata.name): that node's refusal is the one that counts
           || coalesce('; pinned to node ' || s.affinity_node || ' by its required node affinity',
                       '') AS detail,
           [s.event_id] || coalesce(e.ids, []) || coalesce(b.ids, []) AS evidence
    FROM stuck s LEFT JOIN last_event e ON e.uid = s.uid AND e.reason = 'FailedScheduling'
    LEFT JOIN last_event b ON b.uid = s.uid AND b.reason = 'FailedBinding'
    WHERE s.node_name IS NULL AND s.scheduled.reason IS DISTINCT FROM 'SchedulingGated'
      AND (s.scheduled.status = 'False' OR e.uid IS NOT NULL)),
-- held on purpose (KEP-3521): not a failure, named with its gates
c_gated AS (
    SELECT s.uid, 'scheduling_gated' AS cause,
           concat_ws(' — ', 'waiting on scheduling gates '
                            || coalesce(nullif(array_to_string(s.scheduling_gates, ', '), ''),
                                        '(not recorded)'),
                     'PodScheduled=False SchedulingGated', s.scheduled.message) AS detail,
           [s.event_id] AS evidence
    FROM stuck s
    WHERE s.node_name IS NULL AND s.scheduled.reason = 'SchedulingGated'),
-- a container the kubelet killed because its postStart hook failed (kuberuntime
-- startContainer: the FailedPostStartHook Event, the kill, then the waiting reason
-- PostStartHookError with the hook's exit code and output, then CrashLoopBackOff): its last
-- run ended by the hook (the Event no older than the run), so its restarts are the hook's,
-- not a crash; with the hook's last PostStartHookError message, where recorded
hook_kills AS (
    SELECT b.uid, b.name,
           arg_max(k.message, r.received_at) FILTER (WHERE k.reason = 'PostStartHookError') AS message,
           arg_max(r.event_id, r.received_at) FILTER (WHERE k.reason = 'PostStartHookError') AS event_id
    FROM box b
    JOIN (SELECT uid, field_path, max(last_at) AS last_at FROM event_groups
          WHERE reason = 'FailedPostStartHook' GROUP BY uid, field_path) h
      ON h.uid = b.uid AND h.field_path = 'spec.containers{' || b.name || '}'
         AND h.last_at >= date_trunc('second', b.last_started_at)
    JOIN raw_events r ON r.uid = b.uid AND r.kind = 'Pod' AND r.received_at <= ts
    JOIN containers k ON k.event_id = r.event_id AND k.name = b.name
    GROUP BY b.uid, b.name),
c_waiting AS (
    SELECT b.uid, CASE WHEN f.cause = 'crash_loop' AND h.uid IS NOT NULL THEN 'run_container_error'
                       ELSE f.cause END AS cause,
           b.*, h.message AS hook_message, h.event_id AS hook_event_id
    FROM box b
    CROSS JOIN LATERAL (SELECT container_failure(b.state, b.reason, b.exit_code, b.last_reason,
                                                 b.last_exit_code, b.restart_count) AS cause) f
    LEFT JOIN hook_kills h ON h.uid = b.uid AND h.name = b.name
    WHERE NOT b.init OR b.sidecar),
-- the pull error a back-off follows: ImagePullBackOff's message only says "Back-off pulling
-- image" (pkg/kubelet/images/image_manager.go); the ErrImagePull before it carried the
-- runtime's error, the decisive text
pull_errors AS (
    SELECT r.uid, k.name, arg_max({'message': k.message, 'event_id': r.event_id}, r.received_at) AS last
    FROM raw_events r JOIN containers k USING (event_id)
    WHERE r.kind = 'Pod' AND r.received_at <= ts AND k.state = 'waiting'
      AND k.reason = 'ErrImagePull' AND k.message IS NOT NULL
      AND r.uid IN (SELECT uid FROM box WHERE reason = 'ImagePullBackOff')
    GROUP BY r.uid, k.name),
-- the memory limit of an OOM-killed container and what the owner's recorded template
-- versions say of it (the pod's controller, or that controller's: ReplicaSet → Deployment)
owner_chain AS (
    SELECT s.uid, o.owner_uid, o.owner_kind || '/' || o.owner_name AS owner, 1 AS depth
    FROM stuck s JOIN owner_refs o ON o.event_id = s.event_id AND o.controller
    WHERE s.uid IN (SELECT uid FROM c_waiting WHERE cause = 'oom_killed')),
owner_versions AS (
    SELECT c.uid, c.owner, c.depth, r.received_at, r.event_id, w.template_memory_limits
    FROM owner_chain c JOIN raw_events r ON r.uid = c.owner_uid AND r.received_at <= ts
    JOIN workloads w USING (event_id)
    UNION ALL
    SELECT c.uid, o.owner_kind || '/' || o.owner_name, 2, r.received_at, r.event_id,
           w.template_memory_limits
    FROM owner_chain c
    JOIN (SELECT uid, arg_max(event_id, received_at) AS event_id FROM raw_events
          WHERE received_at <= ts AND uid IN (SELECT owner_uid FROM owner_chain)
          GROUP BY uid) l ON l.uid = c.owner_uid
    JOIN owner_refs o ON o.event_id = l.event_id AND o.controller
    JOIN raw_events r ON r.uid = o.owner_uid AND r.received_at <= ts
    JOIN workloads w ON w.event_id = r.event_id),
oom_limits AS (
    SELECT w.uid, w.name,
           coalesce(any_value(w.memory_limit), CASE WHEN bool_or(w.in_spec) THEN 'none'
                                                    ELSE 'unknown (its spec was not recorded)' END)
               AS memory_limit,
           -- the top owner's template: its versions' limits for this container, in order
           arg_max(v.owner, v.depth) AS owner,
           list({'at': v.received_at, 'limit': v.template_memory_limits[w.name],
                 'id': v.event_id} ORDER BY v.received_at, v.event_id)
               FILTER (WHERE v.depth = (SELECT max(depth) FROM owner_versions x
                                        WHERE x.uid = w.uid)) AS history,
           any_value(s.created_at) AS created_at,
           EXISTS (SELECT 1 FROM owner_chain c WHERE c.uid = w.uid) AS has_owner
    FROM c_waiting w JOIN stuck s USING (uid) LEFT JOIN owner_versions v ON v.uid = w.uid
    WHERE w.cause = 'oom_killed' GROUP BY w.uid, w.name),
oom_notes AS (
    SELECT uid, name, 'memory limit ' || memory_limit || '; ' ||
           CASE WHEN NOT has_owner THEN 'no owner recorded: the pod''s own spec sets it'
                WHEN owner IS NULL THEN 'whether the owner''s template changed it: unknown '
                                        || '(the owner''s versions were not recorded)'
                WHEN len(list_distinct([h.limit FOR h IN history])) > 1
                     OR (list_distinct([h.limit FOR h IN history]) <> [memory_limit])
                    -- each change once (a rollout writes many versions of one template)
                    THEN owner || '''s template set it ' || array_to_string(
                        [coalesce(h.limit, 'none') || ' at ' || strftime(h.at, '%Y-%m-%dT%H:%M:%SZ')
                         FOR h, i IN history
                         IF i = 1 OR h.limit IS DISTINCT FROM history[i - 1].limit], ', then ')
                ELSE owner || '''s template unchanged in the recording since '
                     || strftime(history[1].at, '%Y-%m-%dT%H:%M:%SZ')
                     || CASE WHEN history[1].at > created_at
                             THEN '; before that (when the pod began) unknown' ELSE '' END
           END AS note,
           [h.id FOR h IN history][-1:] AS ids
    FROM oom_limits),
-- restarts the kubelet made for a failing liveness or startup probe (kuberuntime_manager:
-- Killing "Container x failed liveness probe, will be restarted"; prober: Unhealthy
-- "Liveness probe failed: …"): the container's exit 137 is the kubelet's kill, not a crash
probe_kills AS (
    SELECT uid, CASE WHEN bool_or(message ILIKE '%failed liveness probe%') THEN 'liveness_probe'
                     ELSE 'startup_probe' END AS sub,
           string_agg(line, '; ' ORDER BY reason, last_at DESC) AS lines,
           flatten(list(ids ORDER BY reason, last_at DESC)) AS ids
    FROM event_groups
    WHERE (reason = 'Killing' AND regexp_matches(message, '^Container \S+ failed (liveness|startup) probe'))
       OR (reason = 'Unhealthy' AND regexp_matches(message, '^(Liveness|Startup) probe'))
    GROUP BY uid HAVING bool_or(reason = 'Killing')),
-- each container cause's failure Events, all the failures it covers in one row (a postStart
-- hook's kills: FailedPostStartHook and the BackOff between them), its own failure first
covered_events AS (
    SELECT w.uid, w.cause, bool_or(f.post_start_hook) AS post_start_hook,
           flatten(list(f.items ORDER BY f.failure = w.cause DESC, f.failure)) AS items,
           string_agg(f.messages, ' ' ORDER BY f.failure = w.cause DESC, f.failure) AS messages,
           flatten(list(f.ids ORDER BY f.failure = w.cause DESC, f.failure)) AS ids
    FROM (SELECT DISTINCT uid, cause FROM c_waiting WHERE cause IS NOT NULL) w
    JOIN failure_events f ON f.uid = w.uid AND failure_covers(w.cause, f.failure)
    GROUP BY w.uid, w.cause),
c_containers AS (
    SELECT uid, cause,
           CASE cause WHEN 'image_pull' THEN image_pull_sub(reason, messages) || ' — '
                      WHEN 'crash_loop' THEN coalesce(probe_sub || ' — ', '')
                      -- the runtime could not create it: not a command to fix
                      WHEN 'run_container_error' THEN CASE
                          WHEN reason = 'CreateContainerError' THEN 'create — '
                          WHEN reason = 'PostStartHookError' OR post_start_hook
                              THEN 'post_start_hook — ' ELSE '' END
                ELSE '' END || detail || coalesce('; ' || probe_lines, '')
           -- the Events' lines that say more than the container status already does
           || coalesce('; ' || nullif(array_to_string([i.line FOR i IN coalesce(items, [])
                                                       IF NOT contains(detail, i.text)], '; '),
                                      ''), '') AS detail,
           evidence
    FROM (SELECT w.uid, w.cause, min(w.reason) AS reason,
                 concat_ws(' ', string_agg(w.message, ' '), string_agg(pe.last.message, ' '),
                           any_value(fe.messages)) AS messages,
                 string_agg(container_line(w)
                            || coalesce('; the pull before it: ErrImagePull, ' || pe.last.message, '')
                            || coalesce('; ' || o.note, '')
                            -- the hook's own failure, where the status now says CrashLoopBackOff
                            || CASE WHEN w.reason IS DISTINCT FROM 'PostStartHookError'
                                    THEN coalesce('; PostStartHookError: ' || w.hook_message, '')
                                    ELSE '' END, '; '
                            ORDER BY w.name) AS detail,
                 any_value(fe.items) AS items,
                 any_value(pk.sub) AS probe_sub, any_value(pk.lines) AS probe_lines,
                 coalesce(bool_or(fe.post_start_hook), false) AS post_start_hook,
                 [any_value(s.event_id)] || list_filter(list(w.hook_event_id), lambda x: x IS NOT NULL)
                     || coalesce(any_value(fe.ids), [])
                     || coalesce(flatten(list(o.ids)), []) || coalesce(any_value(pk.ids), [])
                     || list_filter(list(pe.last.event_id), lambda x: x IS NOT NULL)
                     AS evidence
          FROM c_waiting w JOIN stuck s USING (uid)
          LEFT JOIN covered_events fe ON fe.uid = w.uid AND fe.cause = w.cause
          LEFT JOIN oom_notes o ON o.uid = w.uid AND o.name = w.name
          LEFT JOIN probe_kills pk ON pk.uid = w.uid AND w.cause = 'crash_loop'
          LEFT JOIN pull_errors pe ON pe.uid = w.uid AND pe.name = w.name
               AND w.reason = 'ImagePullBackOff'
          WHERE w.cause IS NOT NULL GROUP BY w.uid, w.cause)),
-- an init container's Events: the kubelet names it in fieldPath or in the message
init_events AS (
    SELECT b.uid, b.name, string_agg(g.line, '; ' ORDER BY g.last_at DESC, g.reason) AS lines,
           flatten(list(g.ids ORDER BY g.last_at DESC, g.reason)) AS ids
    FROM box b JOIN event_groups g ON g.uid = b.uid
         AND (g.field_path = 'spec.initContainers{' || b.name || '}'
              OR contains(g.message, 'container ' || b.name || ' ')
              OR contains(g.message, 'container=' || b.name || ' '))
    WHERE b.init AND NOT b.sidecar AND g.type = 'Warning'
    GROUP BY b.uid, b.name),
-- the kubelet's Failed/BackOff Events name a cause the recorded status may not show
c_kubelet_events AS (
    SELECT e.uid, e.failure AS cause,
           CASE WHEN e.failure = 'image_pull' THEN image_pull_sub(NULL, e.messages) || ' — '
                WHEN e.post_start_hook THEN 'post_start_hook — '
                ELSE '' END || array_to_string([i.line FOR i IN e.items], '; ') AS detail,
           e.ids AS evidence
    FROM failure_events e
    WHERE NOT EXISTS (SELECT 1 FROM c_waiting w WHERE w.uid = e.uid
                      AND failure_covers(w.cause, e.failure))
      -- an init container's failures are the init_container cause
      AND NOT EXISTS (SELECT 1 FROM box b WHERE b.uid = e.uid AND b.init AND NOT b.sidecar
                      AND (contains(e.messages, 'container ' || b.name || ' ')
                           OR contains(e.messages, 'container=' || b.name || ' ')))),
c_init AS (
    SELECT b.uid, 'init_container' AS cause,
           string_agg(coalesce(container_failure(b.state, b.reason, b.exit_code, b.last_reason,
                                                 b.last_exit_code, b.restart_count),
                               CASE WHEN b.state = 'terminated' THEN 'failed'
                                    ELSE coalesce(b.state, 'waiting') END)
                      || ' — init container ' || container_line(b)
                      || coalesce('; ' || ie.lines, ''), '; ' ORDER BY b.name) AS detail,
           [any_value(s.event_id)] || coalesce(flatten(list(ie.ids)), []) AS evidence
    FROM box b JOIN stuck s USING (uid)
    LEFT JOIN init_events ie ON ie.uid = b.uid AND ie.name = b.name
    WHERE b.init AND NOT b.sidecar AND s.problem = 'pending'
      AND (b.state IS DISTINCT FROM 'terminated' OR b.exit_code IS DISTINCT FROM 0)
    GROUP BY b.uid),
c_events AS (
    SELECT e.uid,
           CASE WHEN e.reason IN ('FailedMount', 'FailedAttachVolume', 'FailedMapVolume')
                    THEN 'volume_mount'
                WHEN e.reason = 'FailedCreatePodSandBox' THEN 'sandbox'
                WHEN e.reason = 'Unhealthy' THEN 'readiness' END AS cause,
           CASE WHEN bool_or(e.reason = 'FailedCreatePodSandBox')
                THEN sandbox_sub(string_agg(e.message, ' ')) || ' — ' ELSE '' END
           || string_agg(e.line, '; ' ORDER BY e.reason, e.last_at DESC, e.message) AS detail,
           flatten(list(e.ids ORDER BY e.reason, e.last_at DESC, e.message)) AS evidence
    FROM event_groups e JOIN stuck s USING (uid)
    WHERE e.reason IN ('FailedMount', 'FailedAttachVolume', 'FailedMapVolume', 'Unhealthy',
                       'FailedCreatePodSandBox')
      -- a volume failure that a later success left behind is history: a container started
      -- after it (the kubelet starts containers only once every volume is mounted), or the
      -- same volume's attach or mount succeeded after it (a Multi-Attach that resolved)
      AND NOT EXISTS (
          SELECT 1 FROM event_groups r
          WHERE r.uid = e.uid AND r.last_at > e.last_at
            AND e.reason IN ('FailedMount', 'FailedAttachVolume', 'FailedMapVolume')
            AND (r.reason = 'Started'
                 OR (r.reason = CASE e.reason WHEN 'FailedAttachVolume' THEN 'SuccessfulAttachVolume'
                                              ELSE 'SuccessfulMountVolume' END
                     AND regexp_extract(r.message, 'volume "([^"]+)"', 1)
                         = regexp_extract(e.message, 'volume "([^"]+)"', 1))))
      -- liveness and startup probe failures restart the container (probe_kills), they are
      -- not why a running pod is not Ready
      AND NOT (e.reason = 'Unhealthy' AND regexp_matches(e.message, '^(Liveness|Startup) probe'))
    GROUP BY e.uid, 2),
-- the kubelet reports a started container only once its postStart hook has returned
-- (kuberuntime startContainer runs the hook inside the pod's sync): a container with a hook,
-- its Started Event recorded and its status still ContainerCreating, is in its hook
c_hook_running AS (
    SELECT b.uid, 'starting' AS cause,
           'post_start_hook — ' || string_agg(
               b.name || ': still ContainerCreating after '
               || event_line(e.reason, e.message, e.count, e.first_at, e.last_at)
               || ' — its postStart hook has not returned', '; ' ORDER BY b.name) AS detail,
           [any_value(s.event_id)] || flatten(list(e.ids ORDER BY b.name)) AS evidence
    FROM box b JOIN stuck s USING (uid) JOIN pods p ON p.event_id = s.event_id
    JOIN event_groups e ON e.uid = b.uid AND e.reason = 'Started'
         AND e.field_path = 'spec.containers{' || b.name || '}'
    WHERE b.reason = 'ContainerCreating' AND list_contains(p.post_start_containers, b.name)
    GROUP BY b.uid),
c_readiness_silent AS (
    SELECT s.uid, 'readiness' AS cause,
           -- a readinessGates condition that no controller has set True (status/generate.go)
           CASE WHEN s.ready_why.reason = 'ReadinessGatesNotReady'
                THEN 'readiness_gate — containers ready; Ready=False ReadinessGatesNotReady: '
                     || coalesce(s.ready_why.message, '(no message recorded)')
                ELSE 'containers running but the pod is not Ready; no probe failure Events seen'
           END AS detail,
           [s.event_id] AS evidence
    FROM stuck s
    WHERE s.problem = 'not_ready'
      AND NOT EXISTS (SELECT 1 FROM c_waiting w WHERE w.uid = s.uid AND w.cause IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM last_event e WHERE e.uid = s.uid AND e.reason = 'Unhealthy')),
c_node AS (
    SELECT s.uid, 'node_not_ready' AS cause, node_problem(s.node_name, n) AS detail,
           [x FOR x IN [s.event_id, n.event_id, n.lease_event_id] IF x IS NOT NULL] AS evidence
    FROM stuck s JOIN node_health_at(ts) n ON n.cluster = s.cluster AND n.name = s.node_name
    WHERE n.not_ready OR n.deleted),
c_node_pressure AS (
    SELECT s.uid, 'node_pressure' AS cause, p.detail, [s.event_id, p.event_id] AS evidence
    FROM stuck s JOIN node_pressure_at(ts) p ON p.cluster = s.cluster AND p.name = s.node_name),
c_gap AS (
    SELECT s.uid, 'recording_gap' AS cause,
           string_agg(gap_label(g.type, g.start_at, g.end_at), '; '
                      ORDER BY g.start_at, g.type) AS detail,
           list(g.evidence_event_id ORDER BY g.start_at, g.type) AS evidence
    FROM stuck s JOIN unseen_stretches g
      ON gap_hides(g, s, ts)
    GROUP BY s.uid),
causes AS (
    SELECT * FROM c_unschedulable UNION ALL SELECT * FROM c_gated
    UNION ALL SELECT * FROM c_containers
    UNION ALL SELECT * FROM c_kubelet_events UNION ALL SELECT * FROM c_init
    UNION ALL SELECT * FROM c_events
    UNION ALL SELECT * FROM c_hook_running
    UNION ALL SELECT * FROM c_readiness_silent UNION ALL SELECT * FROM c_node
    UNION ALL SELECT * FROM c_node_pressure UNION ALL SELECT * FROM c_gap),
found AS (
    SELECT s.uid, coalesce(c.cause, CASE WHEN s.node_name IS NOT NULL THEN 'starting'
                                         ELSE 'unknown' END) AS cause,
           coalesce(c.detail, CASE WHEN s.node_name IS NOT NULL
                                   THEN 'scheduled to ' || s.node_name
                                        || '; no container failure seen yet'
                                   ELSE 'no evidence in the recording' END) AS detail,
           coalesce(c.evidence, [s.event_id]) AS evidence
    FROM stuck s LEFT JOIN causes c USING (uid)),
ranked AS (
    SELECT f.*, cs.score FROM found f JOIN cause_scores cs USING (cause))
SELECT 'Pod' AS kind, s.namespace, s.name, s.uid, s.problem,
       least(s.since, el.first_at) AS since,
       epoch(ts - least(s.since, el.first_at)) AS stuck_for_s, s.node_name AS node,
       list(r.cause ORDER BY r.score DESC, r.cause)[1] AS top_cause,
       list({'cause': r.cause, 'score': r.score, 'detail': r.detail, 'evidence': r.evidence}
            ORDER BY r.score DESC, r.cause) AS causes,
       s.event_id AS evidence_event_id
FROM stuck s JOIN ranked r USING (uid) LEFT JOIN earliest el USING (uid)
GROUP BY ALL
-- a pod whose status was not recorded is reported only on evidence of a failure
HAVING (epoch(ts - least(s.since, el.first_at)) > threshold_s AND s.problem <> 'unknown')
    OR max(r.score) >= 50
