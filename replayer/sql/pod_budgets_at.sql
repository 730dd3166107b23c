-- model: macro(ts); depends: disruption_budgets, label_selector_matches, state_at
-- pod_budgets_at(ts): the PodDisruptionBudgets covering each pod at ts, one row per pod and
-- budget, each as its version current at ts says: the pod's namespace and cluster, and the
-- budget's label selector selecting the pod's labels (label_selector_matches: matchLabels
-- and matchExpressions as Kubernetes evaluates them). An empty selector selects every pod
-- of the namespace (policy/v1); a budget without a selector selects none.
SELECT p.uid AS pod_uid, b.uid AS budget_uid, b.cluster, b.namespace, b.name AS budget,
       b.event_id AS budget_event_id, d.disruptions_allowed, d.current_healthy,
       d.desired_healthy, d.expected_pods, d.min_available, d.max_unavailable
FROM state_at(ts) p
JOIN state_at(ts) b ON b.kind = 'PodDisruptionBudget' AND b.cluster = p.cluster
     AND b.namespace = p.namespace
JOIN disruption_budgets d ON d.event_id = b.event_id
WHERE p.kind = 'Pod'
  AND (d.selects_all OR ((d.selector IS NOT NULL OR len(d.match_expressions) > 0)
                         AND label_selector_matches(d.selector, d.match_expressions, p.labels)))
