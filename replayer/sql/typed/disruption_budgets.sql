-- disruption_budgets: one row per PodDisruptionBudget version: its label selector —
-- `selector` the matchLabels pairs, `match_expressions` the expressions beside them ({key,
-- operator, values}), `selects_all` true for an empty selector, which in policy/v1 selects
-- every pod of the namespace (a budget without a selector selects none) —
-- minAvailable/maxUnavailable as written (a number or a percentage), and the disruption
-- controller's status: the evictions it allows now, the healthy pods it counts and the ones
-- it needs, the pods it covers; disrupted_pods: the pods the Eviction API let go and the
-- controller has not yet seen deleted (eviction.go's checkAndDecrement).
WITH b AS (SELECT p.event_id, p.uid, p.o.status AS status, p.o.spec.selector AS selector,
                  -- either key may be absent (a cast to a STRUCT would fail on it)
                  json_extract(p.o.spec.selector, '$.matchLabels')::MAP(VARCHAR, VARCHAR) AS match_labels,
                  json_extract(p.o.spec.selector, '$.matchExpressions')::STRUCT(
                      "key" VARCHAR, operator VARCHAR, "values" VARCHAR[])[] AS expressions,
                  p.o.spec.minAvailable->>'$' AS min_available,
                  p.o.spec.maxUnavailable->>'$' AS max_unavailable
           FROM parsed p WHERE p.kind = 'PodDisruptionBudget')
SELECT event_id, uid, match_labels AS selector, coalesce(expressions, []) AS match_expressions,
       selector IS NOT NULL AND cardinality(coalesce(match_labels, MAP {})) = 0
           AND len(coalesce(expressions, [])) = 0 AS selects_all,
       min_available, max_unavailable, status.disruptionsAllowed AS disruptions_allowed,
       status.currentHealthy AS current_healthy, status.desiredHealthy AS desired_healthy,
       status.expectedPods AS expected_pods,
       coalesce(map_keys(status.disruptedPods), []) AS disrupted_pods
FROM b
