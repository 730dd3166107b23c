-- model: macro(ts, margin_s := 30); depends: cause_score, stuck_containers_not_exiting, stuck_finalizers, stuck_foreground_dependents, stuck_kubelet_events, stuck_namespace_content, stuck_node, stuck_objects, stuck_prestop_hook, stuck_recording_gap, stuck_running, stuck_volume_detach
-- Stuck deletions (design §5): the objects stuck in deletion at ts (stuck_objects), each
-- with the causes its stuck_<cause> models find, ranked by score (cause_scores) — each
-- with its evidence records — or `unknown` when none has evidence. The stuck objects, their
-- running containers and their Events are computed once and passed to the cause models by
-- name (query_table). Documented in docs/projections.md.
WITH stuck AS MATERIALIZED (FROM stuck_objects(ts, margin_s)),
running AS MATERIALIZED (FROM stuck_running('stuck')),
events AS MATERIALIZED (FROM stuck_kubelet_events('stuck', ts)),
causes AS (
    FROM stuck_finalizers('stuck', 'running', ts)
    UNION ALL FROM stuck_node('stuck', 'events', ts)
    UNION ALL FROM stuck_prestop_hook('stuck', 'running', 'events')
    UNION ALL FROM stuck_containers_not_exiting('stuck', 'running', 'events')
    UNION ALL FROM stuck_volume_detach('stuck', 'events', ts)
    UNION ALL FROM stuck_foreground_dependents('stuck', ts)
    UNION ALL FROM stuck_namespace_content('stuck', ts)
    UNION ALL FROM stuck_recording_gap('stuck', ts)),
ranked AS (
    SELECT s.uid, coalesce(c.cause, 'unknown') AS cause,
           coalesce(c.score, cause_score('unknown', false)) AS score,
           coalesce(c.detail, 'no evidence in the recording') AS detail,
           coalesce(c.evidence, [s.event_id]) AS evidence
    FROM stuck s LEFT JOIN causes c USING (uid)),
-- each object's causes, highest score first: sorted as one list per object (an ordered
-- aggregate sorts each group on its own, most of stuck_at's ranking time at 1M). A uid
-- has each cause once, so (-score, cause) orders them completely.
ranked_lists AS (
    SELECT uid, list_sort(list({'rank': -score, 'cause': cause, 'score': score,
                                 'detail': detail, 'evidence': evidence})) AS sorted
    FROM ranked GROUP BY uid)
SELECT s.kind, s.namespace, s.name, s.uid,
       s.deletion_at - to_seconds(coalesce(s.deletion_grace_s, 0)) AS deletion_requested_at,
       s.deletion_at AS stuck_since, epoch(ts - s.deletion_at) AS stuck_for_s,
       s.finalizers, s.node_name AS node, r.sorted[1].cause AS top_cause,
       [{'cause': c.cause, 'score': c.score, 'detail': c.detail, 'evidence': c.evidence}
        FOR c IN r.sorted] AS causes,
       s.event_id AS evidence_event_id
FROM stuck s JOIN ranked_lists r USING (uid)
