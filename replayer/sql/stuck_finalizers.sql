-- model: macro(stuck, running, ts); depends: cause_score, finalizer_owners, finalizer_versions, pods, raw_events, state_at, volumes
-- finalizers: the ones still present, and who added each (managedFields of the first
-- version that had it); for a protection finalizer, what it waits for (the live pods that
-- use a claim, the claim bound to a volume). Scored lower while the pod's containers run.
WITH stuck AS MATERIALIZED (FROM query_table(stuck)),
live AS NOT MATERIALIZED (
    SELECT kind, cluster, namespace, name, uid, event_id FROM state_at(ts)),
-- (the stuck objects' versions first: unnesting every version's finalizers costs more)
fin_versions AS MATERIALIZED (
    SELECT uid, event_id, version_no, finalizers FROM finalizer_versions
    WHERE uid IN (SELECT uid FROM stuck) AND received_at <= ts),
-- (unnest in the select list: a lateral unnest is planned as a join per version)
fin_first AS (
    SELECT uid, fin, arg_min(event_id, version_no) AS event_id
    FROM (SELECT uid, event_id, version_no, unnest(finalizers) AS fin FROM fin_versions)
    GROUP BY ALL),
-- who the managedFields of that first version name for it (joined, not a subquery per row)
fin_managers AS (
    SELECT o.event_id, o.finalizer AS fin,
           string_agg(DISTINCT o.manager, ',' ORDER BY o.manager) AS managers
    FROM finalizer_owners o JOIN fin_first f ON f.event_id = o.event_id AND f.fin = o.finalizer
    GROUP BY ALL),
fin_who AS (
    SELECT s.uid, f.fin, f.event_id,
           -- the protection finalizers are added by kube-apiserver's admission plugins
           CASE WHEN f.fin IN ('kubernetes.io/pvc-protection', 'kubernetes.io/pv-protection')
                THEN 'kube-apiserver admission'
                ELSE coalesce(m.managers, r.component, 'unknown') END AS added_by
    FROM (SELECT uid, unnest(finalizers) AS fin FROM stuck) s
    JOIN fin_first f ON f.uid = s.uid AND f.fin = s.fin
    JOIN raw_events r ON r.event_id = f.event_id
    LEFT JOIN fin_managers m ON m.event_id = f.event_id AND m.fin = f.fin
    WHERE s.fin <> 'foregroundDeletion'),
protected_by AS (
    SELECT s.uid, string_agg(p.kind || '/' || p.name, ', ' ORDER BY p.name) AS users,
           list(p.event_id ORDER BY p.name) AS ids
    FROM stuck s JOIN live p ON p.kind = 'Pod' AND p.cluster = s.cluster
                             AND p.namespace = s.namespace
    JOIN pods pp ON pp.event_id = p.event_id AND list_contains(pp.claim_names, s.name)
    WHERE s.kind = 'PersistentVolumeClaim' GROUP BY s.uid
    UNION ALL
    SELECT s.uid, string_agg('PersistentVolumeClaim/' || c.namespace || '/' || c.name, ', '),
           list(c.event_id)
    FROM stuck s JOIN volumes v ON v.event_id = s.event_id
    JOIN live c ON c.kind = 'PersistentVolumeClaim' AND c.cluster = s.cluster
               AND c.namespace = v.claim_namespace AND c.name = v.claim_name
    WHERE s.kind = 'PersistentVolume' GROUP BY s.uid)
SELECT s.uid, 'finalizers' AS cause,
       cause_score('finalizers', s.kind = 'Pod' AND r.uid IS NOT NULL) AS score,
       'waiting for finalizers ' || string_agg(w.fin || ' (added by ' || w.added_by || ')',
                                               ', ' ORDER BY w.fin)
           || coalesce('; still used by ' || any_value(u.users), '') AS detail,
       list(w.event_id ORDER BY w.fin) || [s.event_id] || coalesce(any_value(u.ids), [])
           AS evidence
FROM stuck s JOIN fin_who w USING (uid) LEFT JOIN query_table(running) r USING (uid)
LEFT JOIN protected_by u USING (uid)
GROUP BY s.uid, s.kind, r.uid, s.event_id
