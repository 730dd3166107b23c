-- model: macro(uids); depends: conditions, creators, endpoints, k8s_events, namespaces, object_versions, owner_refs, raw_events, volumes, workloads
-- object_transitions_of(uids): the story of recorded objects other than Pods (workloads,
-- Jobs, claims, volumes, Nodes, Namespaces…) — what `ktrace explain` prints for them, one
-- row per step in the shape of pod_transitions: `created` (creationTimestamp), `condition`
-- (each change of a condition's status or reason), `phase` (each phase of a claim, volume
-- or Namespace), `status` (each change of a workload's pod counts), `event` (each Event
-- about it, by uid or — a reference without one — by kind and name: its reason and
-- message, how often and until when), `endpoints` (a Service's: each EndpointSlice version
-- that changes which pods are ready, naming them),
-- `deletion_requested`
-- (deletionTimestamp: no grace period — only a Pod's deletion has one, the generic store's
-- 0 on other kinds means none), `deleted`. A step's time is the receive time of the record
-- that shows it when the recorder saw it happen; else — a record from a list, an import
-- whose times are taken from the objects, a state already true at the first sighting —
-- the object's own timestamp (creationTimestamp, the condition's lastTransitionTime, the
-- Event's first time), and the step is `derived`. Computed on demand for the uids asked
-- for (analyses of one object; nothing materialized). Documented in docs/projections.md.
WITH v AS MATERIALIZED (
    -- seen_live: the record shows a change as it happened (not a list, not an import, not
    -- the first sighting of an object seen mid-life)
    SELECT *, is_live AND time_source = 'received' AND (version_no > 1 OR seen_from_start)
                  AS seen_live,
           {'event_id': event_id, 'rv': rv, 'type': type, 'received_at': received_at} AS ev
    FROM object_versions WHERE list_contains(uids, uid) AND kind <> 'Pod'),
firsts AS (
    SELECT uid, arg_min(ev, version_no) AS ev, arg_min(created_at, version_no) AS created_at,
           arg_min(component, version_no) AS component,
           arg_min(seen_live, version_no) AS observed
    FROM v GROUP BY uid),
-- by whom: the record's writer where it was seen created, else its managedFields' creator
-- (a listed or imported record's attribution names its latest writer, not its creator)
created AS (
    SELECT f.uid, 'created' AS step, 1 AS rank, f.ev,
           CASE WHEN observed THEN f.ev.received_at ELSE coalesce(created_at, f.ev.received_at) END
               AS time,
           CASE WHEN observed THEN f.component ELSE coalesce(c.creator, f.component) END
               AS component,
           CASE WHEN created_at IS NULL AND NOT observed
                THEN 'no creationTimestamp: first seen then' END AS detail,
           NOT observed AS derived
    FROM firsts f LEFT JOIN creators c ON c.event_id = f.ev.event_id),
-- a condition's changes: the versions whose (status, reason) differ from the one before
cond AS (
    SELECT v.uid, v.ev, v.version_no, v.seen_live, v.component, c.type, c.status, c.reason,
           c.message, c.last_transition,
           lag({'status': c.status, 'reason': c.reason})
               OVER (PARTITION BY v.uid, c.type ORDER BY v.version_no) AS before
    FROM v JOIN conditions c USING (event_id)),
cond_steps AS (
    SELECT uid, 'condition' AS step, 3 AS rank, ev,
           CASE WHEN seen_live THEN ev.received_at
                ELSE coalesce(last_transition, ev.received_at) END AS time,
           component,
           type || '=' || status || coalesce(' ' || reason, '') || coalesce(': ' || message, '')
               AS detail,
           NOT seen_live AS derived
    FROM cond
    WHERE before IS NULL OR before.status IS DISTINCT FROM status
       OR before.reason IS DISTINCT FROM reason),
phase AS (
    SELECT v.uid, v.ev, v.version_no, v.seen_live, v.component,
           coalesce(vol.phase, ns.phase) AS phase,
           lag(coalesce(vol.phase, ns.phase))
               OVER (PARTITION BY v.uid ORDER BY v.version_no) AS before
    FROM v LEFT JOIN volumes vol USING (event_id) LEFT JOIN namespaces ns USING (event_id)
    WHERE v.kind IN ('PersistentVolumeClaim', 'PersistentVolume', 'Namespace')
      AND v.type NOT IN ('DELETED', 'INFERRED_DELETED')),
phase_steps AS (
    SELECT uid, 'phase' AS step, 2 AS rank, ev, ev.received_at AS time, component,
           phase AS detail, NOT seen_live AS derived
    FROM phase WHERE phase IS NOT NULL AND phase IS DISTINCT FROM before),
counts AS (
    SELECT v.uid, v.ev, v.version_no, v.seen_live, v.component, v.kind,
           CASE v.kind
               WHEN 'Job' THEN concat_ws(', ', 'active ' || w.status_replicas,
                                         'succeeded ' || w.ready_replicas,
                                         'failed ' || w.failed_pods)
               ELSE concat_ws(', ', 'desired ' || w.replicas, 'current ' || w.status_replicas,
                              'updated ' || w.updated_replicas, 'ready ' || w.ready_replicas,
                              'available ' || w.available_replicas) END AS detail
    FROM v JOIN workloads w USING (event_id)
    WHERE v.type NOT IN ('DELETED', 'INFERRED_DELETED')),
count_steps AS (
    SELECT uid, 'status' AS step, 4 AS rank, ev, ev.received_at AS time, component, detail,
           NOT seen_live AS derived
    FROM (SELECT *, lag(detail) OVER (PARTITION BY uid ORDER BY version_no) AS before
          FROM counts)
    WHERE detail <> '' AND detail IS DISTINCT FROM before),
-- Events about the objects: one step per Event (its repeats folded into a count)
-- an Event whose reference has no uid (the kubelet's about its Node: EvictionThresholdMet,
-- Starting, …) is about the object of that kind and name seen last before it
named AS (
    SELECT uid, any_value(cluster) AS cluster, any_value(kind) AS kind,
           any_value(namespace) AS namespace, any_value(name) AS name, min(received_at) AS first_at
    FROM v GROUP BY uid),
event_records AS (
    SELECT coalesce(n.uid, e.regarding_uid) AS uid, e.uid AS event_uid, e.reason, e.message,
           e.type AS level, e.component, e.count, e.first_time, e.last_time, r.event_id, r.rv,
           r.type, r.received_at, r.type IN ('ADDED', 'MODIFIED') AND r.time_source = 'received'
               AS seen_live
    FROM k8s_events e JOIN raw_events r USING (event_id)
    LEFT JOIN named n ON coalesce(e.regarding_uid, '') = '' AND n.cluster = r.cluster
         AND n.kind = e.regarding_kind AND n.name = e.regarding_name
         AND coalesce(n.namespace, '') = coalesce(e.regarding_namespace, '')
    WHERE (list_contains(uids, e.regarding_uid) OR n.uid IS NOT NULL) AND e.regarding_kind <> 'Pod'
    QUALIFY row_number() OVER (PARTITION BY r.event_id
                               ORDER BY n.first_at <= r.received_at DESC,
                                        CASE WHEN n.first_at <= r.received_at THEN n.first_at END DESC,
                                        n.first_at) = 1),
event_steps AS (
    SELECT uid, 'event' AS step, 5 AS rank,
           arg_min({'event_id': event_id, 'rv': rv, 'type': type, 'received_at': received_at},
                   event_id) AS ev,
           CASE WHEN arg_min(seen_live, event_id) THEN min(received_at)
                ELSE coalesce(min(first_time), min(received_at)) END AS time,
           coalesce(arg_max(component, event_id), 'unknown') AS component,
           CASE WHEN arg_max(level, event_id) = 'Warning' THEN 'Warning ' ELSE '' END
               || arg_max(reason, event_id) || ': ' || arg_max(message, event_id)
               || CASE WHEN max(count) > 1
                       THEN ' (×' || max(count) || ', last ' || strftime(max(last_time),
                                                                     '%Y-%m-%dT%H:%M:%SZ') || ')'
                       ELSE '' END AS detail,
           NOT arg_min(seen_live, event_id) AS derived
    FROM event_records GROUP BY uid, event_uid),
-- a Service's EndpointSlices: labelled with its name, in its namespace, and not owned by
-- another Service of that name (one deleted and made again)
service_names AS (
    SELECT uid, any_value(cluster) AS cluster, any_value(namespace) AS namespace,
           any_value(name) AS name
    FROM v WHERE kind = 'Service' GROUP BY uid),
slice_records AS (
    SELECT s.uid, r.event_id, r.uid AS slice_uid, r.name AS slice, r.rv, r.type, r.received_at,
           r.type IN ('ADDED', 'MODIFIED', 'DELETED') AND r.time_source = 'received' AS seen_live
    FROM service_names s JOIN raw_events r ON r.kind = 'EndpointSlice' AND r.cluster = s.cluster
         AND r.namespace = s.namespace AND r.labels['kubernetes.io/service-name'] = s.name
    WHERE NOT EXISTS (SELECT 1 FROM owner_refs o WHERE o.event_id = r.event_id
                      AND o.owner_kind = 'Service' AND o.owner_uid <> s.uid)),
-- each version's endpoints by pod (an endpoint without one by its address): ready (ready
-- unset counts as ready, as discovery/v1 says) or not; a deleted slice has none
slice_states AS (
    SELECT s.uid, s.event_id, s.slice_uid, s.slice, s.rv, s.type, s.received_at, s.seen_live,
           coalesce(list_sort(list(coalesce(e.target_name, e.addresses[1]))
               FILTER (WHERE e.ready IS NOT FALSE AND e.event_id IS NOT NULL
                       AND s.type NOT IN ('DELETED', 'INFERRED_DELETED'))), []) AS ready,
           coalesce(list_sort(list(coalesce(e.target_name, e.addresses[1])
                                   || CASE WHEN e.terminating THEN ' (terminating)' ELSE '' END)
               FILTER (WHERE e.ready = false
                       AND s.type NOT IN ('DELETED', 'INFERRED_DELETED'))), []) AS not_ready
    FROM slice_records s LEFT JOIN endpoints e USING (event_id)
    GROUP BY ALL),
slice_changes AS (
    SELECT *, lag(ready) OVER w AS ready_before, lag(not_ready) OVER w AS not_ready_before,
           row_number() OVER w AS n
    FROM slice_states WINDOW w AS (PARTITION BY uid, slice_uid ORDER BY rv NULLS LAST, event_id)),
endpoint_steps AS (
    SELECT uid, 'endpoints' AS step, 5 AS rank,
           {'event_id': event_id, 'rv': rv, 'type': type, 'received_at': received_at} AS ev,
           received_at AS time, 'endpointslice-controller' AS component,
           'EndpointSlice ' || slice || ': ' || concat_ws('; ',
               CASE WHEN type IN ('DELETED', 'INFERRED_DELETED') THEN 'deleted'
                    WHEN len(ready) = 0 THEN 'no ready endpoint'
                    ELSE 'ready ' || array_to_string(ready, ', ')
                         -- (which are new, where not all are)
                         || CASE WHEN len(ready_before) > 0 THEN coalesce(' (new: ' || nullif(
                                array_to_string(list_filter(ready, lambda x: NOT list_contains(
                                    ready_before, x)), ', '), '') || ')', '') ELSE '' END END,
               'not ready ' || nullif(array_to_string(not_ready, ', '), ''),
               CASE WHEN n > 1 THEN 'no longer ready ' || nullif(array_to_string(list_filter(
                   ready_before, lambda x: NOT list_contains(ready, x)), ', '), '') END) AS detail,
           NOT seen_live AS derived
    FROM slice_changes
    WHERE n = 1 OR ready <> ready_before OR not_ready <> not_ready_before
       OR type IN ('DELETED', 'INFERRED_DELETED')),
deletion AS (
    SELECT uid, 'deletion_requested' AS step, 6 AS rank, arg_min(ev, version_no) AS ev,
           arg_min(deletion_at, version_no) AS server_at,
           arg_min(seen_live, version_no) AS seen_live,
           'kube-apiserver' AS component,
           'no grace period'
               || coalesce('; finalizers ' || nullif(array_to_string(
                      arg_min(finalizers, version_no), ', '), ''), '') AS detail
    FROM v WHERE deletion_at IS NOT NULL GROUP BY uid),
deletion_steps AS (
    SELECT uid, step, rank, ev,
           CASE WHEN seen_live THEN ev.received_at ELSE coalesce(server_at, ev.received_at) END
               AS time,
           component, detail, NOT seen_live AS derived
    FROM deletion),
deleted_steps AS (
    SELECT uid, 'deleted' AS step, 7 AS rank, ev, ev.received_at AS time,
           CASE WHEN type = 'INFERRED_DELETED' THEN 'unknown' ELSE component END AS component,
           CASE WHEN type = 'INFERRED_DELETED' THEN 'inferred at relist' END AS detail,
           type = 'INFERRED_DELETED' AS derived
    FROM v WHERE type IN ('DELETED', 'INFERRED_DELETED')),
everything AS (
    SELECT * FROM created UNION ALL SELECT * FROM cond_steps UNION ALL SELECT * FROM phase_steps
    UNION ALL SELECT * FROM count_steps UNION ALL SELECT * FROM event_steps
    UNION ALL SELECT * FROM endpoint_steps
    UNION ALL SELECT * FROM deletion_steps UNION ALL SELECT * FROM deleted_steps)
-- created first and deleted last whatever their clocks say (a derived time of 1 s precision
-- may tie or precede the first record), the rest by time; a creation known only from the
-- first record (no creationTimestamp) is at or before the earliest step after it — an
-- object exists before any Event about it or condition it reports
SELECT uid, row_number() OVER (PARTITION BY uid ORDER BY CASE step WHEN 'created' THEN 0
                                                                  WHEN 'deleted' THEN 2 ELSE 1 END,
                                                         time, rank, ev.rv, ev.event_id, step, detail)
           AS step_no,
       step, CASE WHEN moved THEN earliest ELSE time END AS time, component, derived,
       CASE WHEN moved THEN 'at or before (its earliest evidence; no creationTimestamp)'
            ELSE detail END AS detail, ev.event_id AS evidence_event_id
FROM (SELECT *, step = 'created' AND detail = 'no creationTimestamp: first seen then'
                AND earliest < time AS moved
      FROM (SELECT *, min(time) FILTER (WHERE step <> 'created') OVER (PARTITION BY uid) AS earliest
            FROM everything))
