-- Stuck deletions (design §5): objects whose deletion deadline (deletionTimestamp — for a
-- pod, request time + grace) plus margin_s had passed at ts while no DELETED was seen.
-- Each gets ranked causes from a stable vocabulary, each with its evidence records:
--   node_deleted 100 · node_not_ready 90 · foreground_dependents 85 · namespace_content 85
--   finalizers 80 (50 while the pod's containers still run) · prestop_hook 70 (55 without
--   a FailedPreStopHook Event) · containers_not_exiting 60 (45 without kubelet Events) ·
--   volume_detach 60 (40 from an attached VolumeAttachment alone) · recording_gap 30 (95 for
--   damage after the object's last record read) ·
--   unknown 0. Documented in docs/projections.md.

CREATE OR REPLACE MACRO stuck_at(ts, margin_s := 30) AS TABLE
-- (live is not materialized: the stuck objects are few, and each use of live below reads
-- only the kinds it joins them with)
WITH RECURSIVE live AS NOT MATERIALIZED (
    SELECT kind, cluster, namespace, name, uid, event_id, topic, received_at, deletion_at,
           deletion_grace_s, finalizers
    FROM state_at(ts)),
stuck AS MATERIALIZED (
    SELECT l.*, p.node_name, p.has_prestop, p.claim_names, p.phase
    FROM live l LEFT JOIN pods p USING (event_id)
    WHERE l.deletion_at IS NOT NULL AND l.kind <> 'Event'
      AND l.deletion_at + to_microseconds((margin_s * 1e6)::BIGINT) < ts),
running AS (
    SELECT s.uid, list(k.name ORDER BY k.name) AS names
    FROM stuck s JOIN containers k USING (event_id)
    WHERE NOT k.init AND k.state IS DISTINCT FROM 'terminated' GROUP BY s.uid),
kubelet_events AS (
    SELECT e.regarding_uid AS uid, e.reason, list(r.event_id ORDER BY r.event_id) AS ids,
           arg_max(e.message, r.event_id) AS message
    FROM (SELECT * FROM k8s_events WHERE regarding_uid IN (SELECT uid FROM stuck)) e
    JOIN raw_events r USING (event_id)
    WHERE r.received_at <= ts GROUP BY ALL),
-- finalizers: the ones still present, and who added each (managedFields of the first
-- version that had it).
-- (the stuck objects' versions first: unnesting every version's finalizers costs more)
fin_versions AS MATERIALIZED (
    SELECT uid, event_id, version_no, finalizers FROM object_versions
    WHERE uid IN (SELECT uid FROM stuck) AND received_at <= ts AND len(finalizers) > 0),
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
-- what a protection finalizer waits for: the live pods that use a claim, the claim bound
-- to a volume
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
    WHERE s.kind = 'PersistentVolume' GROUP BY s.uid),
c_finalizers AS (
    SELECT s.uid, 'finalizers' AS cause,
           CASE WHEN s.kind = 'Pod' AND r.uid IS NOT NULL THEN 50 ELSE 80 END AS score,
           'waiting for finalizers ' || string_agg(w.fin || ' (added by ' || w.added_by || ')',
                                                   ', ' ORDER BY w.fin)
               || coalesce('; still used by ' || any_value(u.users), '') AS detail,
           list(w.event_id ORDER BY w.fin) || [s.event_id] || coalesce(any_value(u.ids), [])
               AS evidence
    FROM stuck s JOIN fin_who w USING (uid) LEFT JOIN running r USING (uid)
    LEFT JOIN protected_by u USING (uid)
    GROUP BY s.uid, s.kind, r.uid, s.event_id),
-- the pod's node: deleted, not Ready, or its Lease not renewed.
-- (materialized: two causes read it, and inlined twice it cost a third of stuck_at at 1M)
node AS MATERIALIZED (SELECT * FROM node_health_at(ts)),
c_node_deleted AS (
    SELECT s.uid, 'node_deleted' AS cause, 100 AS score,
           'node ' || s.node_name || ' was deleted' AS detail, [n.event_id] AS evidence
    FROM stuck s JOIN node n ON n.cluster = s.cluster AND n.name = s.node_name WHERE n.deleted),
c_node_not_ready AS (
    SELECT s.uid, 'node_not_ready' AS cause, 90 AS score, node_problem(s.node_name, n) AS detail,
           [x FOR x IN [n.event_id, n.lease_event_id] IF x IS NOT NULL]
               || coalesce(e.ids, []) AS evidence
    FROM stuck s JOIN node n ON n.cluster = s.cluster AND n.name = s.node_name
    LEFT JOIN (SELECT uid, flatten(list(ids ORDER BY reason)) AS ids FROM kubelet_events
               WHERE reason IN ('NodeNotReady', 'TaintManagerEviction') GROUP BY uid) e
           ON e.uid = s.uid
    WHERE n.not_ready),
-- containers still running past the deadline; a preStop hook among them.
c_prestop AS (
    SELECT s.uid, 'prestop_hook' AS cause, CASE WHEN e.uid IS NULL THEN 55 ELSE 70 END AS score,
           coalesce(e.message, 'preStop hook defined; containers still running: '
                               || array_to_string(r.names, ', ')) AS detail,
           [s.event_id] || coalesce(e.ids, []) AS evidence
    FROM stuck s JOIN running r USING (uid)
    LEFT JOIN kubelet_events e ON e.uid = s.uid AND e.reason = 'FailedPreStopHook'
    WHERE s.has_prestop),
c_containers AS (
    SELECT s.uid, 'containers_not_exiting' AS cause,
           CASE WHEN e.uid IS NULL THEN 45 ELSE 60 END AS score,
           'containers still running past the grace period: ' || array_to_string(r.names, ', ')
               || coalesce('; ' || e.message, '') AS detail,
           [s.event_id] || coalesce(e.ids, []) AS evidence
    FROM stuck s JOIN running r USING (uid)
    LEFT JOIN (SELECT uid, flatten(list(ids ORDER BY reason)) AS ids, string_agg(reason || ': ' || message, '; ' ORDER BY reason)
                   AS message
               FROM kubelet_events WHERE reason IN ('ExceededGracePeriod', 'FailedKillPod')
               GROUP BY uid) e ON e.uid = s.uid),
-- volumes: unmount/detach failures, or an attachment of the pod's claims still attached.
claim_attachments AS (
    SELECT s.uid, list(va.event_id ORDER BY va.event_id) AS ids,
           string_agg(va.name || ' (' || vv.pv_name || ')', ', ' ORDER BY va.name)
               AS names
    FROM stuck s, unnest(s.claim_names) AS c(claim)
    JOIN live pvc ON pvc.kind = 'PersistentVolumeClaim' AND pvc.cluster = s.cluster
                 AND pvc.namespace = s.namespace AND pvc.name = c.claim
    JOIN volumes pv ON pv.event_id = pvc.event_id
    JOIN live va ON va.kind = 'VolumeAttachment' AND va.cluster = s.cluster
    JOIN volumes vv ON vv.event_id = va.event_id AND vv.pv_name = pv.volume_name
                   AND vv.node_name = s.node_name AND vv.attached
    GROUP BY s.uid),
c_volumes AS (
    SELECT s.uid, 'volume_detach' AS cause, CASE WHEN e.uid IS NULL THEN 40 ELSE 60 END AS score,
           concat_ws('; ', e.message, 'still attached: ' || a.names) AS detail,
           coalesce(e.ids, []) || coalesce(a.ids, []) AS evidence
    FROM stuck s
    LEFT JOIN (SELECT uid, flatten(list(ids ORDER BY reason)) AS ids, string_agg(reason || ': ' || message, '; ' ORDER BY reason)
                   AS message
               FROM kubelet_events WHERE reason IN ('FailedUnMount', 'FailedDetachVolume',
                                                     'FailedMapVolume')
               GROUP BY uid) e ON e.uid = s.uid
    LEFT JOIN claim_attachments a ON a.uid = s.uid
    WHERE e.uid IS NOT NULL OR a.uid IS NOT NULL),
-- foreground deletion: walk the blocking dependents down to the deepest one.
edges AS MATERIALIZED (
    SELECT o.owner_uid AS parent, l.uid AS child, l.kind || '/' || l.name AS label,
           l.event_id, l.finalizers
    FROM live l JOIN owner_refs o ON o.event_id = l.event_id WHERE o.block_owner_deletion
      -- (no walk, no edges: most recordings hold no foreground deletion; counted once — an
      -- EXISTS here was planned as a join per edge, half of stuck_at's time at 1M events)
      AND (SELECT count(*) FROM stuck WHERE list_contains(finalizers, 'foregroundDeletion')) > 0),
walk(root, uid, depth, path, event_id, finalizers) AS (
    SELECT uid, uid, 0, [kind || '/' || name], event_id, finalizers
    FROM stuck WHERE list_contains(finalizers, 'foregroundDeletion')
    UNION ALL
    SELECT w.root, e.child, w.depth + 1, list_append(w.path, e.label), e.event_id, e.finalizers
    FROM walk w JOIN edges e ON e.parent = w.uid WHERE w.depth < 16),
c_foreground AS (
    SELECT root AS uid, 'foreground_dependents' AS cause, 85 AS score,
           CASE WHEN max(depth) = 0 THEN 'foreground deletion: no blocking dependents left'
                ELSE 'foreground deletion waits on ' || array_to_string(arg_max(path, depth), ' → ')
                     || coalesce(' (finalizers ' || nullif(array_to_string(
                            arg_max(finalizers, depth), ', '), '') || ')', '') END AS detail,
           list(event_id ORDER BY depth) AS evidence
    FROM walk GROUP BY root),
-- a namespace: its deletion conditions, and what still lives in it.
-- what the namespace controller says remains ("configmaps. has 1 resource instances"), and
-- which of those kinds ktrace did not record (so it cannot show them)
recorded_resources AS (SELECT DISTINCT resource FROM raw_events),
ns_remaining AS (
    SELECT s.uid, list_distinct(flatten(list(regexp_extract_all(c.message,
               '([a-z0-9.-]+?)\. has \d+ resource instances', 1)))) AS resources
    FROM stuck s JOIN conditions c ON c.event_id = s.event_id
         AND c.type = 'NamespaceContentRemaining' AND c.status = 'True'
    WHERE s.kind = 'Namespace' GROUP BY s.uid),
c_namespace AS (
    SELECT s.uid, 'namespace_content' AS cause, 85 AS score,
           concat_ws('; ', string_agg(c.type || ': ' || c.message, '; ' ORDER BY c.type),
                     (SELECT count(*) || ' recorded objects remain' FROM live o
                      WHERE o.cluster = s.cluster AND o.namespace = s.name
                        AND o.kind <> 'Event'
                      HAVING count(*) > 0),
                     (SELECT 'not recorded by ktrace: '
                             || string_agg(x, ', ' ORDER BY x)
                      FROM (SELECT unnest(any_value(n.resources)) AS x)
                      WHERE split_part(x, '.', 1) NOT IN (SELECT resource FROM recorded_resources)
                      HAVING count(*) > 0)) AS detail,
           [s.event_id] AS evidence
    FROM stuck s LEFT JOIN conditions c ON c.event_id = s.event_id AND c.status = 'True'
         AND c.type IN ('NamespaceDeletionContentFailure', 'NamespaceFinalizersRemaining',
                        'NamespaceContentRemaining', 'NamespaceDeletionDiscoveryFailure',
                        'NamespaceDeletionGroupVersionParsingFailure')
    LEFT JOIN ns_remaining n ON n.uid = s.uid
    WHERE s.kind = 'Namespace' GROUP BY s.uid, s.cluster, s.name, s.event_id),
-- the recording itself: while an unseen stretch of the object's topic is open at ts, the
-- DELETED may simply not have been seen (after it, the relist re-established the state);
-- damage after the object's last record read ranks first: no relist followed it, so the
-- object's fate is unknown.
c_gap AS (
    SELECT s.uid, 'recording_gap' AS cause,
           max(CASE WHEN g.type = 'damaged' AND g.end_at > s.received_at THEN 95 ELSE 30 END)
               AS score,
           string_agg(gap_label(g.type, g.start_at, g.end_at), '; ' ORDER BY g.start_at, g.type)
               AS detail,
           list(g.evidence_event_id ORDER BY g.start_at, g.type) AS evidence
    FROM stuck s JOIN unseen_stretches g
      ON gap_hides(g, s, ts)
    GROUP BY s.uid),
causes AS (
    SELECT * FROM c_finalizers UNION ALL SELECT * FROM c_node_deleted
    UNION ALL SELECT * FROM c_node_not_ready UNION ALL SELECT * FROM c_prestop
    UNION ALL SELECT * FROM c_containers UNION ALL SELECT * FROM c_volumes
    UNION ALL SELECT * FROM c_foreground UNION ALL SELECT * FROM c_namespace
    UNION ALL SELECT * FROM c_gap),
ranked AS (
    SELECT s.uid, coalesce(c.cause, 'unknown') AS cause, coalesce(c.score, 0) AS score,
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
FROM stuck s JOIN ranked_lists r USING (uid);

CREATE OR REPLACE VIEW stuck_deletions AS SELECT * FROM stuck_at(data_end());
