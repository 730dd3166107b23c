-- model: macro(ts); depends: disruption_budgets, state_at
-- pod_budgets_at(ts): the PodDisruptionBudgets covering each pod at ts, one row per pod and
-- budget, each as its version current at ts says: the pod's namespace and cluster, and the
-- budget's label selector as Kubernetes evaluates it (apimachinery's labels.Selector):
-- every matchLabels pair among the pod's labels, and every matchExpression true of them —
-- In (the label set, its value listed), NotIn (unset, or its value not listed), Exists,
-- DoesNotExist. An empty selector selects every pod of the namespace (policy/v1); a budget
-- without a selector selects none.
SELECT p.uid AS pod_uid, b.uid AS budget_uid, b.cluster, b.namespace, b.name AS budget,
       b.event_id AS budget_event_id, d.disruptions_allowed, d.current_healthy,
       d.desired_healthy, d.expected_pods, d.min_available, d.max_unavailable
FROM state_at(ts) p
JOIN state_at(ts) b ON b.kind = 'PodDisruptionBudget' AND b.cluster = p.cluster
     AND b.namespace = p.namespace
JOIN disruption_budgets d ON d.event_id = b.event_id
WHERE p.kind = 'Pod'
  AND (d.selects_all OR (
      (d.selector IS NOT NULL OR len(d.match_expressions) > 0)
      AND len(list_filter(map_entries(coalesce(d.selector, MAP {})),
                          lambda e: p.labels[e.key] IS DISTINCT FROM e.value)) = 0
      AND len(list_filter(d.match_expressions, lambda x: NOT CASE x.operator
              WHEN 'In' THEN coalesce(list_contains(x."values", p.labels[x."key"]), false)
              WHEN 'NotIn' THEN NOT coalesce(list_contains(x."values", p.labels[x."key"]), false)
              WHEN 'Exists' THEN p.labels[x."key"] IS NOT NULL
              WHEN 'DoesNotExist' THEN p.labels[x."key"] IS NULL
              ELSE false END)) = 0))
