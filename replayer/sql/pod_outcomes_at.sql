-- model: macro(ts); depends: admission_reason, cause_scores, conditions, container_line, containers, disruption_budgets, event_line, eviction_resource, eviction_by_limit, k8s_events, kubelet_admission_reasons, kubelet_termination, node_shutdowns_at, nodes, pods, raw_events, resource_pressure, session_topics
-- pod_outcomes_at(ts): how pods ended, for the causes that end a pod rather than hold it —
-- a terminal outcome, never "stuck" (not_running_at skips finished pods). One row per pod
-- and cause, in problems_at's shape (`problem` is the cause):
--   evicted    the kubelet evicted it (status.reason Evicted): the resource from the
--              message (eviction_resource), the node's pressure condition as the node
--              version nearest to it says it (one saying it held, within a minute, first), the Evicted Event; sub-reason `limit`
--              when the pod exceeded a limit of its own (eviction_by_limit), not a shortage
--              of the node;
--   admission  the kubelet rejected it (phase Failed, status.reason a kubelet admission
--              reason: kubelet_admission_reasons, OutOf<resource>); sub-reason the
--              reason's own where its advice differs (node_shutdown), `device_plugin`
--              for an UnexpectedAdmissionError the device manager's allocation wrote;
--   evicted    (eviction_api) evicted through the Eviction API (DisruptionTarget
--              EvictionByEvictionAPI, "Eviction API: evicting": a drain, an autoscaler),
--              with the budget version that counted it (the pod in its disruptedPods) and
--              whether its node was cordoned then;
--   preempted  the scheduler preempted it (a Preempted Event, or DisruptionTarget
--              PreemptionByScheduler / 1.26's PreemptionByKubeScheduler), or its node's
--              kubelet did, to admit a critical pod (pkg/kubelet/preemption: status.reason
--              and Event Preempting, DisruptionTarget TerminationByKubelet "Pod was
--              preempted by Kubelet to accommodate a critical pod.");
--   oom_killed a container of a Failed pod ended OOMKilled (restartPolicy Never/OnFailure
--              gave up), with its memory limit;
--   node_shutdown  the kubelet's graceful node shutdown stopped it (pkg/kubelet/nodeshutdown:
--              DisruptionTarget TerminationByKubelet and status Terminated, both "Pod was
--              terminated in response to imminent node shutdown."; a pod whose containers
--              exited 0 on the SIGTERM ends Succeeded with the condition alone), with its
--              node's Shutdown Event (node_shutdowns_at).
-- Documented in docs/projections.md.
WITH versions AS MATERIALIZED (
    SELECT r.uid, r.cluster, r.namespace, r.name, r.event_id, r.received_at, r.type,
           p.phase, p.node_name, p.status_reason, p.status_message, p.status_written_at
    FROM raw_events r JOIN pods p USING (event_id)
    WHERE r.kind = 'Pod' AND r.received_at <= ts),
pod AS (
    SELECT uid, any_value(cluster) AS cluster, any_value(namespace) AS namespace,
           any_value(name) AS name,
           arg_max(node_name, received_at) FILTER (WHERE node_name IS NOT NULL) AS node,
           arg_max(event_id, received_at) AS last_event_id
    FROM versions GROUP BY uid),
pod_events AS (
    SELECT e.regarding_uid AS uid, e.reason, e.message,
           sum(e.count) FILTER (WHERE e.latest)::INTEGER AS count,
           min(e.first_at) AS first_at, max(e.last_at) AS last_at,
           list(e.event_id ORDER BY e.last_at DESC, e.event_id DESC)[1:3] AS ids
    FROM (SELECT e.*, coalesce(e.first_time, e.last_time, r.received_at) AS first_at,
                 coalesce(e.last_time, r.received_at) AS last_at,
                 row_number() OVER (PARTITION BY coalesce(e.uid, e.event_id::VARCHAR)
                                    ORDER BY r.received_at DESC, e.event_id DESC) = 1 AS latest
          FROM k8s_events e JOIN raw_events r USING (event_id)
          WHERE r.received_at <= ts
            AND (e.reason IN ('Evicted', 'Preempted', 'Preempting')
                 OR admission_reason(e.reason))) e
    WHERE e.regarding_uid IN (SELECT uid FROM pod)
    GROUP BY e.regarding_uid, e.reason, e.message),
-- the first version that says how it ended
ended AS (
    SELECT uid, arg_min({'reason': status_reason, 'message': status_message,
                         'at': coalesce(status_written_at, received_at),
                         'written_at': status_written_at, 'event_id': event_id},
                        received_at) AS first
    FROM versions
    WHERE status_reason = 'Evicted' OR (phase = 'Failed' AND admission_reason(status_reason))
    GROUP BY uid
    UNION ALL
    -- the kubelet's Evicted or admission Event where no status recorded it (it outlives it)
    SELECT uid, arg_min({'reason': reason, 'message': message, 'at': first_at,
                         'written_at': NULL::TIMESTAMP, 'event_id': ids[1]}, first_at)
    FROM pod_events e
    WHERE (reason = 'Evicted' OR admission_reason(reason))
      AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.uid = e.uid
                      AND (v.status_reason = 'Evicted'
                           OR (v.phase = 'Failed' AND admission_reason(v.status_reason))))
    GROUP BY uid),
-- the node's condition for the evicted resource around the eviction: the node version
-- nearest to it that reports the condition True within a minute (the kubelet writes its
-- node status on its own period, so it can follow the eviction by seconds), else the
-- nearest one — not a later version saying the pressure has passed when one said it held
node_evidence AS (
    SELECT d.uid, arg_min({'type': c.type, 'status': c.status, 'since': c.last_transition,
                           'event_id': n.event_id},
                          [(c.status <> 'True' OR abs(epoch(n.received_at) - epoch(d.first.at)) > 60)::INTEGER,
                           abs(epoch(n.received_at) - epoch(d.first.at))]) AS cond
    FROM ended d JOIN pod p USING (uid)
    JOIN raw_events n ON n.kind = 'Node' AND n.name = p.node AND n.cluster = p.cluster
         AND n.received_at <= d.first.at + INTERVAL 1 MINUTE
    JOIN conditions c ON c.event_id = n.event_id
         AND c.type = resource_pressure(eviction_resource(d.first.message))
    WHERE d.first.reason = 'Evicted' GROUP BY d.uid),
o_evicted AS (
    SELECT d.uid, 'evicted' AS cause, d.first.at AS at,
           concat_ws(' — ',
               CASE WHEN d.first.message ILIKE '%had condition%' THEN 'node_condition'
                    WHEN eviction_by_limit(d.first.message) THEN 'limit'
                    ELSE coalesce(eviction_resource(d.first.message), 'unknown') END,
               'Evicted: ' || d.first.message,
               -- a limit of the pod's own is not a shortage of the node: its condition,
               -- where recorded, is context
               CASE WHEN eviction_by_limit(d.first.message)
                    THEN 'its own ' || eviction_resource(d.first.message)
                         || ' limit, not a shortage of the node' || coalesce(' (node ' || p.node
                         || ' ' || ne.cond.type || '=' || ne.cond.status
                         || coalesce(' since ' || strftime(ne.cond.since, '%Y-%m-%dT%H:%M:%SZ'), '')
                         || ')', '')
                    WHEN ne.cond IS NULL THEN coalesce('node ' || p.node, 'the node') || '''s '
                         || coalesce(resource_pressure(eviction_resource(d.first.message)),
                                     'pressure') || ' condition: not recorded'
                    ELSE 'node ' || p.node || ' ' || ne.cond.type || '=' || ne.cond.status
                         || coalesce(' since ' || strftime(ne.cond.since, '%Y-%m-%dT%H:%M:%SZ'), '')
               END,
               (SELECT string_agg(event_line(e.reason, e.message, e.count, e.first_at, e.last_at), '; ')
                FROM pod_events e WHERE e.uid = d.uid AND e.reason = 'Evicted'
                  AND NOT contains(d.first.message, e.message))) AS detail,
           list_sort(list_distinct(list_filter([d.first.event_id, ne.cond.event_id]
               || coalesce((SELECT flatten(list(e.ids)) FROM pod_events e
                            WHERE e.uid = d.uid AND e.reason = 'Evicted'), []),
                                     lambda x: x IS NOT NULL))) AS evidence
    FROM ended d JOIN pod p USING (uid) LEFT JOIN node_evidence ne USING (uid)
    WHERE d.first.reason = 'Evicted'),
o_admission AS (
    SELECT d.uid, 'admission' AS cause,
           -- the kubelet writes its Event and the status in one step (pkg/kubelet/kubelet.go
           -- rejectPod): the Event's own time is the rejection's where the status write's
           -- time is unknown (a record's time derived from creationTimestamp is earlier)
           coalesce(d.first.written_at, (SELECT min(e.first_at) FROM pod_events e
                                         WHERE e.uid = d.uid AND e.reason = d.first.reason),
                    d.first.at) AS at,
           -- a resource manager's allocation failure about devices is the device manager's
           -- (pkg/kubelet/cm/admission/errors.go "Allocate failed due to %v, which is
           -- unexpected", its errors from cm/devicemanager/manager.go): the device plugin's
           concat_ws(' — ',
               CASE WHEN d.first.reason = 'UnexpectedAdmissionError'
                         AND regexp_matches(said, 'Allocate failed due to .*(device|endpoint not found)', 'i')
                    THEN 'device_plugin'
                    ELSE (SELECT k.sub FROM kubelet_admission_reasons k WHERE k.reason = d.first.reason) END,
               d.first.reason || ': ' || said || coalesce(' (on node ' || p.node || ')', '')) AS detail,
           list_sort(list_distinct([d.first.event_id]
               || coalesce((SELECT flatten(list(e.ids)) FROM pod_events e
                            WHERE e.uid = d.uid AND e.reason = d.first.reason), []))) AS evidence
    FROM ended d JOIN pod p USING (uid),
         -- the status message, else the kubelet's Event of the same reason (it outlives a
         -- status cut short)
         LATERAL (SELECT coalesce(d.first.message,
                                  (SELECT arg_max(e.message, e.last_at) FROM pod_events e
                                   WHERE e.uid = d.uid AND e.reason = d.first.reason),
                                  '(no message recorded)') AS said)
    WHERE d.first.reason <> 'Evicted'),
preemption AS (
    SELECT c.uid, arg_min({'reason': c.reason, 'message': c.message, 'at': c.last_transition,
                           'event_id': c.event_id}, r.received_at) AS cond
    FROM conditions c JOIN raw_events r USING (event_id)
    WHERE c.kind = 'Pod' AND c.type = 'DisruptionTarget' AND c.status = 'True'
      AND (c.reason IN ('PreemptionByScheduler', 'PreemptionByKubeScheduler')
           OR (c.reason = 'TerminationByKubelet' AND kubelet_termination(c.message) = 'critical-pod preemption'))
      AND r.received_at <= ts AND c.uid IN (SELECT uid FROM pod)
    GROUP BY c.uid),
-- the kubelet's status write when it preempted the pod for a critical one
kubelet_preempting AS (
    SELECT uid, arg_min({'reason': status_reason, 'message': status_message,
                         'at': coalesce(status_written_at, received_at), 'event_id': event_id},
                        received_at) AS first
    FROM versions WHERE status_reason = 'Preempting' GROUP BY uid),
o_preempted AS (
    SELECT p.uid, 'preempted' AS cause,
           -- the earliest evidence: the kubelet decides (its Event) before the kill ends
           -- and its status write says so
           least(pr.cond.at, k.first.at, (SELECT min(e.first_at) FROM pod_events e
                                          WHERE e.uid = p.uid AND e.reason IN ('Preempted', 'Preempting'))) AS at,
           concat_ws('; ',
               k.first.reason || ': ' || k.first.message,
               (SELECT string_agg(event_line(e.reason, e.message, e.count, e.first_at, e.last_at), '; ')
                FROM pod_events e WHERE e.uid = p.uid AND e.reason IN ('Preempted', 'Preempting')
                  AND e.message IS DISTINCT FROM k.first.message),
               CASE WHEN pr.cond IS NOT NULL THEN 'DisruptionTarget ' || pr.cond.reason
                    || coalesce(': ' || pr.cond.message, '') END) AS detail,
           list_sort(list_distinct(list_filter([pr.cond.event_id, k.first.event_id],
                                               lambda x: x IS NOT NULL)
               || coalesce((SELECT flatten(list(e.ids)) FROM pod_events e
                            WHERE e.uid = p.uid AND e.reason IN ('Preempted', 'Preempting')), []))) AS evidence
    FROM pod p LEFT JOIN preemption pr USING (uid) LEFT JOIN kubelet_preempting k USING (uid)
    WHERE pr.uid IS NOT NULL OR k.uid IS NOT NULL
       OR EXISTS (SELECT 1 FROM pod_events e WHERE e.uid = p.uid AND e.reason IN ('Preempted', 'Preempting'))),
api_eviction AS (
    SELECT c.uid, arg_min({'message': c.message, 'at': coalesce(c.last_transition, r.received_at),
                           'received_at': r.received_at, 'event_id': c.event_id}, r.received_at) AS cond
    FROM conditions c JOIN raw_events r USING (event_id)
    WHERE c.kind = 'Pod' AND c.type = 'DisruptionTarget' AND c.status = 'True'
      AND c.reason = 'EvictionByEvictionAPI' AND r.received_at <= ts AND c.uid IN (SELECT uid FROM pod)
    GROUP BY c.uid),
-- the first budget version whose disruptedPods names the pod: the eviction it allowed
counting_budget AS (
    SELECT a.uid, arg_min({'name': b.namespace || '/' || b.name, 'allowed': d.disruptions_allowed,
                           'healthy': d.current_healthy, 'needed': d.desired_healthy,
                           'event_id': b.event_id}, b.received_at) AS budget
    FROM api_eviction a JOIN pod p USING (uid)
    JOIN raw_events b ON b.kind = 'PodDisruptionBudget' AND b.cluster = p.cluster
         AND b.namespace = p.namespace AND b.received_at <= ts
    JOIN disruption_budgets d ON d.event_id = b.event_id AND list_contains(d.disrupted_pods, p.name)
    GROUP BY a.uid),
-- the node's version newest before the eviction: cordoned by a drain, or not
eviction_node AS (
    SELECT a.uid, arg_max({'unschedulable': n.unschedulable, 'event_id': r.event_id}, r.received_at) AS node
    FROM api_eviction a JOIN pod p USING (uid)
    JOIN raw_events r ON r.kind = 'Node' AND r.name = p.node AND r.cluster = p.cluster
         AND r.received_at <= a.cond.received_at
    JOIN nodes n ON n.event_id = r.event_id
    GROUP BY a.uid),
o_api_evicted AS (
    SELECT a.uid, 'evicted' AS cause, a.cond.at AS at,
           concat_ws(' — ', 'eviction_api',
               'DisruptionTarget EvictionByEvictionAPI: ' || coalesce(a.cond.message, '(no message)'),
               CASE WHEN cb.budget IS NOT NULL
                    THEN 'PodDisruptionBudget ' || cb.budget.name || ' allowed it (the pod in its '
                         || 'disruptedPods; then ' || cb.budget.allowed || ' more allowed, '
                         || cb.budget.healthy || ' healthy, ' || cb.budget.needed || ' needed)'
                    WHEN EXISTS (SELECT 1 FROM session_topics t WHERE t.cluster = p.cluster
                                 AND t.topic LIKE '%poddisruptionbudgets')
                    THEN 'no recorded PodDisruptionBudget counted it'
                    ELSE 'PodDisruptionBudgets: not recorded' END,
               coalesce('node ' || p.node, 'the node') || CASE en.node.unschedulable
                   WHEN true THEN ' cordoned (spec.unschedulable): a drain'
                   WHEN false THEN ' not cordoned'
                   ELSE ': not recorded' END) AS detail,
           list_sort(list_filter([a.cond.event_id, cb.budget.event_id, en.node.event_id],
                       lambda x: x IS NOT NULL)) AS evidence
    FROM api_eviction a JOIN pod p USING (uid)
    LEFT JOIN counting_budget cb USING (uid) LEFT JOIN eviction_node en USING (uid)),
-- the kubelet's graceful node shutdown: its DisruptionTarget condition and its status write
shutdown_condition AS (
    SELECT c.uid, arg_min({'message': c.message, 'at': coalesce(c.last_transition, r.received_at),
                           'event_id': c.event_id}, r.received_at) AS cond
    FROM conditions c JOIN raw_events r USING (event_id)
    WHERE c.kind = 'Pod' AND c.type = 'DisruptionTarget' AND c.status = 'True'
      AND c.reason = 'TerminationByKubelet' AND kubelet_termination(c.message) = 'graceful node shutdown'
      AND r.received_at <= ts AND c.uid IN (SELECT uid FROM pod)
    GROUP BY c.uid),
shutdown_status AS (
    SELECT uid, arg_min({'reason': status_reason, 'message': status_message,
                         'at': coalesce(status_written_at, received_at), 'event_id': event_id},
                        received_at) FILTER (WHERE said_so) AS first,
           arg_max(phase, received_at) AS phase
    FROM (SELECT *, status_reason = 'Terminated'
                    AND kubelet_termination(status_message) = 'graceful node shutdown' AS said_so
          FROM versions)
    WHERE uid IN (SELECT uid FROM shutdown_condition) OR said_so
    GROUP BY uid),
stopped_by_shutdown AS (
    SELECT t.uid, t.phase, least(c.cond.at, t.first.at) AS at, c.cond, t.first AS status
    FROM shutdown_status t LEFT JOIN shutdown_condition c USING (uid)
    -- the shutdown manager writes the phase (Failed, or Succeeded kept) with its reason and
    -- condition in one status update: a pod still Running with them was restarted in place
    -- afterwards (1.22, kubernetes/kubernetes#104798), it did not end
    WHERE (c.uid IS NOT NULL OR t.first IS NOT NULL) AND t.phase IN ('Failed', 'Succeeded')),
-- the node's shutdown the kubelet announced last before it stopped the pod
shutdown_announced AS (
    SELECT b.uid, arg_max({'message': s.message, 'at': s.at, 'event_id': s.event_id}, s.at) AS shutdown
    FROM stopped_by_shutdown b JOIN pod p USING (uid)
    JOIN node_shutdowns_at(ts) s ON s.cluster = p.cluster AND s.node = p.node
         AND s.at <= b.at + INTERVAL 1 SECOND  -- the condition's time has whole seconds
    GROUP BY b.uid),
o_node_shutdown AS (
    SELECT b.uid, 'node_shutdown' AS cause, b.at,
           concat_ws(' — ',
               coalesce(b.status.reason || ': ' || b.status.message,
                        'DisruptionTarget TerminationByKubelet: ' || b.cond.message),
               CASE WHEN b.phase = 'Succeeded'
                    THEN 'phase Succeeded only because its containers exited 0 on the kubelet''s SIGTERM: stopped, not finished' END,
               coalesce('node ' || p.node, 'its node') || ' shutting down: '
               || coalesce('the kubelet''s Shutdown Event "' || a.shutdown.message || '" at '
                           || strftime(a.shutdown.at, '%Y-%m-%dT%H:%M:%SZ'), 'its Shutdown Event not recorded')) AS detail,
           list_sort(list_distinct(list_filter([b.cond.event_id, b.status.event_id, a.shutdown.event_id],
                                               lambda x: x IS NOT NULL))) AS evidence
    FROM stopped_by_shutdown b JOIN pod p USING (uid) LEFT JOIN shutdown_announced a USING (uid)),
o_oom AS (
    SELECT v.uid, 'oom_killed' AS cause, min(k.finished_at) AS at,
           string_agg(DISTINCT container_line(k) || '; memory limit '
                      || coalesce(k.memory_limit, CASE WHEN k.in_spec THEN 'none' ELSE 'unknown' END),
                      '; ') AS detail,
           [min(v.event_id)] AS evidence
    FROM versions v JOIN containers k USING (event_id)
    WHERE v.phase = 'Failed' AND k.state = 'terminated' AND k.reason = 'OOMKilled'
    GROUP BY v.uid),
found AS (
    SELECT * FROM o_evicted UNION ALL SELECT * FROM o_admission
    UNION ALL SELECT * FROM o_preempted UNION ALL SELECT * FROM o_api_evicted
    UNION ALL SELECT * FROM o_oom UNION ALL SELECT * FROM o_node_shutdown)
SELECT 'Pod' AS kind, p.namespace, p.name, p.uid, f.cause AS problem, f.at AS since,
       epoch(ts - f.at) AS stuck_for_s, p.node, f.cause AS top_cause,
       [{'cause': f.cause, 'score': cs.score, 'detail': f.detail, 'evidence': f.evidence}]
           AS causes,
       p.last_event_id AS evidence_event_id
FROM found f JOIN pod p USING (uid) JOIN cause_scores cs USING (cause)
