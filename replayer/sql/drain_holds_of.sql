-- model: macro(uids, threshold_s := 60); depends: drain_blocked_at, nodes, pods, raw_events
-- drain_holds_of(uids, threshold_s := 60): the past drains a PodDisruptionBudget held, of the Nodes and budgets
-- in uids — what `ktrace explain` tells of a drain that was blocked and then passed (a
-- drain still held at the end of the data is `ktrace stuck`'s). drain_blocked_at is judged
-- at every moment its answer can change: each version of a budget or of a cordoned node of
-- the cluster, each deletion of a pod on a node ever cordoned. One row per held stretch:
-- `uid`, `since` (the stretch's start, as drain_blocked_at says it), `held_s`, `allowed_at`
-- (the first moment it no longer held: the budget relaxed, a pod gone, the node
-- uncordoned), `detail` and `evidence` as at its last held moment, `evicted` (each held
-- pod's deletion request after it was allowed, {pod, at}; a pod never deleted is absent)
-- and `passed_at` (every held pod's deletion requested: the drain got through; NULL when
-- one stayed).
WITH moments AS (
    SELECT DISTINCT s.uid, r.received_at AS t
    FROM (SELECT DISTINCT uid, cluster FROM raw_events WHERE list_contains(uids, uid)) s
    JOIN raw_events r ON r.cluster = s.cluster AND r.kind IN ('PodDisruptionBudget', 'Node', 'Pod')
    LEFT JOIN nodes n ON n.event_id = r.event_id
    LEFT JOIN pods p ON p.event_id = r.event_id
    WHERE r.kind = 'PodDisruptionBudget' OR n.unschedulable
       OR (r.deletion_at IS NOT NULL AND p.node_name IN (
               SELECT c.name FROM raw_events c JOIN nodes cn USING (event_id)
               WHERE c.kind = 'Node' AND c.cluster = s.cluster AND cn.unschedulable))),
held AS (
    SELECT m.uid, m.t, d.since, d.causes[1].detail AS detail, d.causes[1].evidence AS evidence
    FROM moments m, LATERAL (SELECT * FROM drain_blocked_at(m.t, threshold_s := 0) x
                             WHERE x.uid = m.uid AND x.top_cause = 'drain_blocked') d),
stretches AS (
    SELECT h.uid, h.since, arg_min(h.detail, h.t) AS detail, arg_min(h.evidence, h.t) AS evidence,
           (SELECT min(m.t) FROM moments m WHERE m.uid = h.uid AND m.t > max(h.t)) AS allowed_at
    FROM held h GROUP BY h.uid, h.since),
-- the held pods (Pod records among the evidence) and their first deletion request after
held_pods AS (
    SELECT s.uid, s.since, p.uid AS pod_uid, any_value(p.name) AS pod,
           (SELECT min(d.received_at) FROM raw_events d WHERE d.uid = p.uid
              AND d.deletion_at IS NOT NULL AND d.received_at >= s.allowed_at) AS at
    FROM stretches s JOIN raw_events p ON list_contains(s.evidence, p.event_id) AND p.kind = 'Pod'
    GROUP BY s.uid, s.since, s.allowed_at, p.uid)
SELECT s.uid, s.since, epoch(s.allowed_at - s.since) AS held_s, s.allowed_at, s.detail,
       s.evidence,
       list({'pod': h.pod, 'at': h.at} ORDER BY h.at, h.pod) FILTER (WHERE h.at IS NOT NULL)
           AS evicted,
       CASE WHEN bool_and(h.at IS NOT NULL) THEN max(h.at) END AS passed_at
FROM stretches s LEFT JOIN held_pods h USING (uid, since)
WHERE s.allowed_at IS NOT NULL AND epoch(s.allowed_at - s.since) > threshold_s
GROUP BY ALL
ORDER BY s.uid, s.since
