-- model: macro(ts, threshold_s := 60); depends: cause_scores, object_findings_at
-- workload_problems_at(ts, threshold_s := 60): the stuck findings of object_findings_at in
-- the shape of not_running_at (problem = the finding's state).
SELECT f.kind, f.namespace, f.name, f.uid, f.state AS problem, f.since,
       epoch(ts - f.since) AS stuck_for_s, NULL::VARCHAR AS node, f.cause AS top_cause,
       [{'cause': f.cause, 'score': cs.score, 'detail': f.detail, 'evidence': f.evidence}]
           AS causes,
       f.event_id AS evidence_event_id
FROM object_findings_at(ts, threshold_s := threshold_s) f JOIN cause_scores cs USING (cause)
WHERE f.stuck
