-- model: macro(ts); depends: event_line, k8s_events, raw_events
-- readiness_failures_at(ts): each pod's latest readiness probe failure received by ts — the
-- kubelet's Unhealthy Event "Readiness probe failed: …" (pkg/kubelet/prober), as a detail
-- states it (event_line: count, first and last time, message) — with its record: why a
-- pod a workload or Service waits on is not Ready.
SELECT e.regarding_uid AS uid,
       arg_max(event_line(e.reason, e.message, e.count, e.first_time, e.last_time),
               e.event_id) AS line,
       max(e.event_id) AS event_id
FROM k8s_events e JOIN raw_events r USING (event_id)
WHERE r.received_at <= ts AND e.reason = 'Unhealthy' AND e.message LIKE 'Readiness probe%'
GROUP BY e.regarding_uid
