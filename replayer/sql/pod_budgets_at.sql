-- model: macro(ts); depends: disruption_budgets, state_at
-- pod_budgets_at(ts): the PodDisruptionBudgets covering each pod at ts, one row per pod and
-- budget, each as its version current at ts says: the pod's namespace and cluster, and
-- every matchLabels pair among the pod's labels. A budget with matchExpressions is not
-- matched (ktrace does not evaluate them): for its pods the budget is unknown.
SELECT p.uid AS pod_uid, b.uid AS budget_uid, b.cluster, b.namespace, b.name AS budget,
       b.event_id AS budget_event_id, d.disruptions_allowed, d.current_healthy,
       d.desired_healthy, d.expected_pods, d.min_available, d.max_unavailable
FROM state_at(ts) p
JOIN state_at(ts) b ON b.kind = 'PodDisruptionBudget' AND b.cluster = p.cluster
     AND b.namespace = p.namespace
JOIN disruption_budgets d ON d.event_id = b.event_id
WHERE p.kind = 'Pod' AND d.match_expressions = 0 AND d.selector IS NOT NULL
  AND len(list_filter(map_entries(d.selector),
                      lambda e: p.labels[e.key] IS DISTINCT FROM e.value)) = 0
