-- model: macro(margin_s); depends: pod_races
-- The rollout race (design §5): for each terminating pod behind a Service, when its
-- endpoint stopped being ready versus when its containers stopped (pod_races). kube-proxy's
-- own programming delay is invisible in watch events, so containers stopping less than
-- margin_s after the endpoint went off are flagged too. Documented in docs/projections.md.
SELECT namespace, pod, uid, service, deletion_requested_at, endpoint_off_at, off_state,
       containers_stopped_at, exposed_s, request_to_endpoint_off_s,
       CASE WHEN endpoint_off_at IS NULL OR containers_stopped_at IS NULL THEN 'unknown'
            -- equal times (1 s derived times) are ordered by resourceVersion
            WHEN containers_stopped_at < endpoint_off_at
                 OR (containers_stopped_at = endpoint_off_at AND stopped_rv < off_rv)
                THEN 'stopped_before_endpoint_off'
            WHEN epoch(containers_stopped_at - endpoint_off_at) < margin_s
                THEN 'within_margin'
            ELSE 'ok' END AS verdict,
       evidence
FROM pod_races
