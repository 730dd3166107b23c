-- disruption_budgets: one row per PodDisruptionBudget version: the pod labels its selector
-- matches (matchLabels; match_expressions counts the expressions beside them, which ktrace
-- does not evaluate), minAvailable/maxUnavailable as written (a number or a percentage),
-- and the disruption controller's status: the evictions it allows now, the healthy pods it
-- counts and the ones it needs, the pods it covers.
WITH b AS (SELECT p.event_id, p.uid, p.o.status AS status,
                  p.o.spec.selector::STRUCT("matchLabels" MAP(VARCHAR, VARCHAR),
                                            "matchExpressions" JSON[]) AS selector,
                  p.o.spec.minAvailable->>'$' AS min_available,
                  p.o.spec.maxUnavailable->>'$' AS max_unavailable
           FROM parsed p WHERE p.kind = 'PodDisruptionBudget')
SELECT event_id, uid, selector.matchLabels AS selector,
       coalesce(len(selector.matchExpressions), 0) AS match_expressions,
       min_available, max_unavailable, status.disruptionsAllowed AS disruptions_allowed,
       status.currentHealthy AS current_healthy, status.desiredHealthy AS desired_healthy,
       status.expectedPods AS expected_pods
FROM b
