-- model: macro(ts, threshold_s := 60); depends: cause_scores, conditions, disruption_budgets, nodes, owner_refs, pod_budgets_at, pods, raw_events, session_topics, state_at, taints
-- drain_blocked_at(ts, threshold_s := 60): drains a PodDisruptionBudget holds, in
-- problems_at's shape (problem `drain_blocked`). A node cordoned at ts (spec.unschedulable,
-- as `kubectl drain` leaves it) with pods still on it that a drain must evict (not
-- terminating, not finished, not a DaemonSet's), whose budget allows 0 disruptions at ts:
-- the Eviction API refuses them ("Cannot evict pod as it would violate the pod's
-- disruption budget.", a 429 that writes nothing to any object), so the evidence is the
-- node's version and the budget's. One row for the node and one for each budget holding
-- it, once both held for threshold_s (a drain under way waits a moment on each
-- replacement pod). Where the cluster's recording has no PodDisruptionBudget topic, a
-- cordoned node with pods left past threshold_s is `unknown`: budgets were not recorded.
-- Documented in docs/projections.md.
WITH node_versions AS (
    SELECT r.uid, r.received_at, r.event_id, n.unschedulable
    FROM raw_events r JOIN nodes n USING (event_id)
    WHERE r.kind = 'Node' AND r.received_at <= ts),
cordoned AS (
    SELECT s.uid, s.cluster, s.name, s.event_id,
           -- the first version of the cordon in force at ts
           (SELECT min(v.received_at) FROM node_versions v
            WHERE v.uid = s.uid AND v.unschedulable
              AND v.received_at > coalesce((SELECT max(u.received_at) FROM node_versions u
                                            WHERE u.uid = s.uid AND NOT u.unschedulable),
                                           '-infinity'::TIMESTAMP)) AS since,
           (SELECT string_agg(t.key || coalesce('=' || t.value, '') || ':' || t.effect, ', ')
            FROM taints t WHERE t.event_id = s.event_id
              AND t.key = 'node.kubernetes.io/unschedulable') AS taint
    FROM state_at(ts) s JOIN nodes n USING (event_id)
    WHERE s.kind = 'Node' AND n.unschedulable),
left_on AS (
    SELECT c.uid AS node_uid, s.uid AS pod_uid, s.name AS pod, s.event_id
    FROM cordoned c
    JOIN state_at(ts) s ON s.kind = 'Pod' AND s.cluster = c.cluster
    JOIN pods p ON p.event_id = s.event_id AND p.node_name = c.name
    WHERE s.deletion_at IS NULL AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')
      AND NOT EXISTS (SELECT 1 FROM owner_refs o WHERE o.event_id = s.event_id
                      AND o.owner_kind = 'DaemonSet' AND o.controller)),
budget_versions AS (
    SELECT r.uid, r.received_at, d.disruptions_allowed
    FROM raw_events r JOIN disruption_budgets d USING (event_id)
    WHERE r.kind = 'PodDisruptionBudget' AND r.received_at <= ts),
held AS (
    SELECT l.node_uid, b.budget_uid, any_value(b.namespace) AS namespace,
           any_value(b.budget) AS budget, any_value(b.budget_event_id) AS budget_event_id,
           list(l.pod ORDER BY l.pod) AS pods, list(l.event_id ORDER BY l.pod) AS pod_events,
           -- the first version of the budget's current stretch at 0
           (SELECT min(v.received_at) FROM budget_versions v
            WHERE v.uid = b.budget_uid AND v.disruptions_allowed = 0
              AND v.received_at > coalesce((SELECT max(u.received_at) FROM budget_versions u
                                            WHERE u.uid = b.budget_uid
                                              AND u.disruptions_allowed <> 0),
                                           '-infinity'::TIMESTAMP)) AS zero_since
    FROM left_on l JOIN pod_budgets_at(ts) b USING (pod_uid)
    WHERE b.disruptions_allowed = 0
    GROUP BY l.node_uid, b.budget_uid),
said AS (
    SELECT h.*, c.name AS node, c.event_id AS node_event_id,
           greatest(c.since, h.zero_since) AS since,
           'node ' || c.name || ' cordoned (spec.unschedulable' || coalesce('; taint ' || c.taint, '')
           || ') since ' || strftime(c.since, '%Y-%m-%dT%H:%M:%SZ')
           || '; PodDisruptionBudget ' || h.namespace || '/' || h.budget || ' allows 0 disruptions'
           || ' since ' || strftime(h.zero_since, '%Y-%m-%dT%H:%M:%SZ') || ' ('
           || concat_ws('; ', 'minAvailable ' || d.min_available, 'maxUnavailable ' || d.max_unavailable,
                        d.current_healthy || ' healthy of ' || d.desired_healthy || ' needed',
                        d.expected_pods || ' expected',
                        (SELECT string_agg(k.type || '=' || k.status || coalesce(' ' || k.reason, '')
                                           || coalesce(': ' || nullif(k.message, ''), ''), '; ')
                         FROM conditions k WHERE k.event_id = h.budget_event_id))
           || ') and covers ' || len(h.pods) || ' pod(s) still on it: ' || array_to_string(h.pods, ', ')
           || ' — the Eviction API refuses to evict them' AS detail
    FROM held h JOIN cordoned c ON c.uid = h.node_uid
    JOIN disruption_budgets d ON d.event_id = h.budget_event_id),
blocked AS (
    SELECT 'Node' AS kind, NULL::VARCHAR AS namespace, node AS name, node_uid AS uid,
           min(since) AS since, node, 'drain_blocked' AS cause,
           string_agg(detail, '; ' ORDER BY budget) AS detail,
           list_sort(list_distinct(flatten(list([node_event_id, budget_event_id] || pod_events))))
               AS evidence,
           any_value(node_event_id) AS evidence_event_id
    FROM said GROUP BY node, node_uid
    UNION ALL
    SELECT 'PodDisruptionBudget', namespace, budget, budget_uid, min(since), NULL,
           'drain_blocked', string_agg(detail, '; ' ORDER BY node),
           list_sort(list_distinct(flatten(list([node_event_id, budget_event_id] || pod_events)))),
           any_value(budget_event_id)
    FROM said GROUP BY namespace, budget, budget_uid),
-- budgets not recorded: a cordoned node whose pods stay is all that is known
unknown AS (
    SELECT 'Node' AS kind, NULL::VARCHAR AS namespace, c.name, c.uid, c.since, c.name AS node,
           'unknown' AS cause,
           'node ' || c.name || ' cordoned since ' || strftime(c.since, '%Y-%m-%dT%H:%M:%SZ')
           || ' with ' || count(*) || ' pod(s) still on it: ' || string_agg(l.pod, ', ' ORDER BY l.pod)
           || '; PodDisruptionBudgets were not recorded: whether one blocks its drain is unknown' AS detail,
           list_sort([c.event_id] || list(l.event_id)) AS evidence, c.event_id AS evidence_event_id
    FROM cordoned c JOIN left_on l ON l.node_uid = c.uid
    WHERE NOT EXISTS (SELECT 1 FROM session_topics t WHERE t.cluster = c.cluster
                      AND t.topic LIKE '%poddisruptionbudgets')
    GROUP BY c.name, c.uid, c.since, c.event_id)
SELECT f.kind, f.namespace, f.name, f.uid, 'drain_blocked' AS problem, f.since,
       epoch(ts - f.since) AS stuck_for_s, f.node, f.cause AS top_cause,
       [{'cause': f.cause, 'score': cs.score, 'detail': f.detail, 'evidence': f.evidence}] AS causes,
       f.evidence_event_id
FROM (SELECT * FROM blocked UNION ALL SELECT * FROM unknown) f JOIN cause_scores cs USING (cause)
WHERE epoch(ts - f.since) > threshold_s
