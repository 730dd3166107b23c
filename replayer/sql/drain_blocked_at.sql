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
-- (the nodes cordoned at ts first, then only their versions and their pods' budgets:
-- most recordings hold no cordoned node, and the correlated subqueries over every node and
-- budget version cost seconds at 1M events)
WITH cordoned_now AS MATERIALIZED (
    SELECT s.uid, s.cluster, s.name, s.event_id
    FROM state_at(ts) s JOIN nodes n USING (event_id)
    WHERE s.kind = 'Node' AND n.unschedulable),
node_versions AS MATERIALIZED (
    SELECT r.uid, r.received_at, n.unschedulable
    FROM raw_events r JOIN nodes n USING (event_id)
    WHERE r.kind = 'Node' AND r.received_at <= ts AND r.uid IN (SELECT uid FROM cordoned_now)),
-- the first version of the cordon in force at ts: after the last version not cordoned
cordon_since AS (
    SELECT v.uid, min(v.received_at) AS since
    FROM node_versions v
    LEFT JOIN (SELECT uid, max(received_at) AS last_free FROM node_versions
               WHERE NOT unschedulable GROUP BY uid) f USING (uid)
    WHERE v.unschedulable AND v.received_at > coalesce(f.last_free, '-infinity'::TIMESTAMP)
    GROUP BY v.uid),
cordon_taints AS (
    SELECT t.event_id,
           string_agg(t.key || coalesce('=' || t.value, '') || ':' || t.effect, ', ') AS taint
    FROM taints t
    WHERE t.key = 'node.kubernetes.io/unschedulable'
      AND t.event_id IN (SELECT event_id FROM cordoned_now)
    GROUP BY t.event_id),
cordoned AS MATERIALIZED (
    SELECT c.*, s.since, t.taint
    FROM cordoned_now c LEFT JOIN cordon_since s USING (uid) LEFT JOIN cordon_taints t USING (event_id)),
left_on AS MATERIALIZED (
    SELECT c.uid AS node_uid, s.uid AS pod_uid, s.name AS pod, s.event_id
    FROM cordoned c
    JOIN state_at(ts) s ON s.kind = 'Pod' AND s.cluster = c.cluster
    JOIN pods p ON p.event_id = s.event_id AND p.node_name = c.name
    WHERE s.deletion_at IS NULL AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')
      AND NOT EXISTS (SELECT 1 FROM owner_refs o WHERE o.event_id = s.event_id
                      AND o.owner_kind = 'DaemonSet' AND o.controller)),
held_pods AS MATERIALIZED (
    SELECT l.*, b.* EXCLUDE (pod_uid)
    FROM left_on l JOIN pod_budgets_at(ts) b USING (pod_uid)
    WHERE b.disruptions_allowed = 0
      AND l.pod_uid IN (SELECT pod_uid FROM left_on)),
budget_versions AS MATERIALIZED (
    SELECT r.uid, r.received_at, d.disruptions_allowed
    FROM raw_events r JOIN disruption_budgets d USING (event_id)
    WHERE r.kind = 'PodDisruptionBudget' AND r.received_at <= ts
      AND r.uid IN (SELECT budget_uid FROM held_pods)),
-- the first version of the budget's current stretch at 0
zero_since AS (
    SELECT v.uid AS budget_uid, min(v.received_at) AS zero_since
    FROM budget_versions v
    LEFT JOIN (SELECT uid, max(received_at) AS last_allowed FROM budget_versions
               WHERE disruptions_allowed <> 0 GROUP BY uid) a USING (uid)
    WHERE v.disruptions_allowed = 0
      AND v.received_at > coalesce(a.last_allowed, '-infinity'::TIMESTAMP)
    GROUP BY v.uid),
held AS (
    SELECT h.node_uid, h.budget_uid, any_value(h.namespace) AS namespace,
           any_value(h.budget) AS budget, any_value(h.budget_event_id) AS budget_event_id,
           list(h.pod ORDER BY h.pod) AS pods, list(h.event_id ORDER BY h.pod) AS pod_events,
           any_value(z.zero_since) AS zero_since
    FROM held_pods h LEFT JOIN zero_since z USING (budget_uid)
    GROUP BY h.node_uid, h.budget_uid),
-- the held budgets' conditions (joined: a subquery per row was planned as a grouping of
-- every condition row of the recording)
budget_conditions AS (
    SELECT k.event_id,
           string_agg(k.type || '=' || k.status || coalesce(' ' || k.reason, '')
                      || coalesce(': ' || nullif(k.message, ''), ''), '; ') AS conditions
    FROM conditions k WHERE k.event_id IN (SELECT budget_event_id FROM held)
    GROUP BY k.event_id),
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
                        bc.conditions)
           || ') and covers ' || len(h.pods) || ' pod(s) still on it: ' || array_to_string(h.pods, ', ')
           || ' — the Eviction API refuses to evict them' AS detail
    FROM held h JOIN cordoned c ON c.uid = h.node_uid
    JOIN disruption_budgets d ON d.event_id = h.budget_event_id
    LEFT JOIN budget_conditions bc ON bc.event_id = h.budget_event_id),
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
