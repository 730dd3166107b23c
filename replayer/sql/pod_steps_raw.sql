-- model: view; depends: containers, disruption_requester, endpoint_membership, eviction_by_limit, k8s_events, kubelet_termination, nodes, object_versions, owner_refs, pod_versions_in_scope, projection_scope, raw_events, refreshed_from
-- The evidence of each step: the first version of a pod for which the step's condition
-- holds (one scan: arg_min per step), Events about the pod (by uid, or by name where the
-- Event names no uid), and its EndpointSlice stretches.
-- A step already true at the first sighting of a pod seen mid-life is `derived`: its time
-- is the object's own timestamp, and it never makes a slow-step verdict.
WITH pv AS (
    SELECT *, {'event_id': event_id, 'rv': rv, 'type': type, 'received_at': received_at,
               'is_live': is_live, 'time_source': time_source} AS ev
    FROM pod_versions_in_scope),
owners AS (
    SELECT o.uid, any_value(o.owner_kind) AS owner_kind, any_value(o.owner_uid) AS owner_uid
    FROM owner_refs o JOIN raw_events r USING (event_id)
    WHERE r.kind = 'Pod' AND o.controller AND o.uid IN (SELECT uid FROM projection_scope) GROUP BY o.uid),
-- Events whose reference names the pod without its uid (the taint-eviction controller's
-- ObjectReference carries namespace and name only): the pod of that name first seen last
-- before the Event came, else the first of that name (an Event older than the pod's records).
-- (every pod of a name is in scope with any of them: sql/typed/_touched_pods.sql)
scope_names AS (
    SELECT cluster, namespace, name, uid, min(received_at) AS first_at
    FROM object_versions WHERE kind = 'Pod' AND rowid >= refreshed_from('object_versions')
      AND uid IN (SELECT uid FROM projection_scope)
    GROUP BY ALL),
named_events AS (
    SELECT u.event_id, p.uid
    FROM (SELECT e.event_id, r.cluster, e.regarding_namespace AS namespace,
                 e.regarding_name AS name, r.received_at
          FROM k8s_events e JOIN raw_events r USING (event_id)
          WHERE e.regarding_kind = 'Pod' AND coalesce(e.regarding_uid, '') = ''
            AND e.regarding_name IN (SELECT name FROM scope_names)) u
    JOIN scope_names p
      ON p.cluster = u.cluster AND p.namespace IS NOT DISTINCT FROM u.namespace AND p.name = u.name
    QUALIFY row_number() OVER (PARTITION BY u.event_id
                               ORDER BY p.first_at <= u.received_at DESC,
                                        CASE WHEN p.first_at <= u.received_at THEN p.first_at END DESC,
                                        p.first_at) = 1),
pod_events AS (
    SELECT coalesce(n.uid, e.regarding_uid) AS uid, e.uid AS event_uid, e.reason, e.message,
           e.component, e.first_time, r.event_id, r.rv, r.type, r.received_at, r.time_source,
           e.type AS event_type, e.count
    FROM k8s_events e JOIN raw_events r USING (event_id)
    LEFT JOIN named_events n USING (event_id)
    WHERE coalesce(n.uid, e.regarding_uid) IN (SELECT uid FROM projection_scope)
      AND e.regarding_kind = 'Pod'),
-- the owner's Events that name the pod: "Created pod: NAME", "Deleted pod: NAME" (ReplicaSet,
-- DaemonSet, Job), "Create Pod NAME in StatefulSet S successful", "Delete Pod NAME in
-- StatefulSet S successful" — not received before the pod was first seen (a StatefulSet
-- recreates a pod under the same name: the Events of its predecessor are not its own)
owner_events AS (
    SELECT o.uid, e.reason, e.message, e.component, r.event_id
    FROM owners o JOIN k8s_events e ON e.regarding_uid = o.owner_uid
    JOIN raw_events r ON r.event_id = e.event_id
    JOIN (SELECT uid, any_value(name) AS name, min(received_at) AS first_at
          FROM object_versions WHERE kind = 'Pod' AND rowid >= refreshed_from('object_versions')
      AND uid IN (SELECT uid FROM projection_scope)
          GROUP BY uid) n
      ON n.uid = o.uid
    WHERE e.reason IN ('SuccessfulCreate', 'SuccessfulDelete')
      AND (e.message IN ('Created pod: ' || n.name, 'Deleted pod: ' || n.name)
           OR (o.owner_kind = 'StatefulSet'
               AND (e.message LIKE 'Create Pod ' || n.name || ' in StatefulSet % successful'
                    OR e.message LIKE 'Delete Pod ' || n.name || ' in StatefulSet % successful')))
      AND r.received_at >= n.first_at - INTERVAL 2 SECOND),
firsts AS (
    SELECT uid, any_value(cluster) AS cluster, bool_or(seen_from_start) AS seen_from_start,
           min(version_no) AS first_version,
           -- a capture without creationTimestamp: the pod existed at its startTime
           arg_min({'ev': ev, 'server_at': coalesce(created_at, start_time),
                    'component': component, 'creator': creator,
                    'detail': CASE WHEN created_at IS NULL AND start_time IS NOT NULL
                                   THEN 'at or before (startTime; no creationTimestamp)' END},
                   version_no) AS created,
           arg_min({'ev': ev, 'server_at': scheduled_transition, 'detail': node_name}, version_no)
               FILTER (WHERE node_name IS NOT NULL) AS scheduled,
           arg_min({'ev': ev, 'version_no': version_no,
                    -- the first start: a container that restarted before we saw it
                    -- first ran at (or after) the pod's startTime
                    'server_at': CASE WHEN restarts > 0 THEN coalesce(start_time,
                                          least(containers_started_at, containers_last_started_at))
                                      ELSE coalesce(least(containers_started_at,
                                                          containers_last_started_at), start_time)
                                 END,
                    'component': coalesce(status_manager, component, 'kubelet')}, version_no)
               FILTER (WHERE containers_running > 0 OR containers_ran > 0
                       OR (phase = 'Running' AND containers = 0))
               AS running,
           arg_min({'ev': ev, 'version_no': version_no, 'server_at': ready_transition,
                    'component': coalesce(status_manager, component, 'kubelet')},
                   version_no)
               FILTER (WHERE ready_status = 'True') AS ready,
           arg_min({'ev': ev, 'version_no': version_no,
                    'server_at': deletion_at - to_seconds(coalesce(deletion_grace_s, 0)),
                    'grace_s': coalesce(deletion_grace_s, 0),
                    'disruption': disruption_reason,
                    'disruption_message': disruption_message}, version_no)
               FILTER (WHERE deletion_at IS NOT NULL) AS deletion,
           arg_min({'ev': ev, 'version_no': version_no, 'server_at': containers_finished_at,
                    'component': coalesce(status_manager, component, 'kubelet'),
                    'detail': 'exit ' || array_to_string(exit_codes, ',')}, version_no)
               FILTER (WHERE containers > 0 AND containers_terminated = containers)
               AS containers_stopped,
           -- a pod the kubelet stopped on its own: which of its paths (eviction, node
           -- shutdown, critical-pod preemption; an eviction for a limit of the pod's own
           -- writes no DisruptionTarget, its status reason and message say it)
           arg_min({'ev': ev, 'version_no': version_no,
                    'component': coalesce(status_manager, component, 'kubelet'),
                    'detail': phase || coalesce(' — ' || CASE
                        WHEN disruption_reason = 'TerminationByKubelet'
                            THEN disruption_requester(disruption_reason, disruption_message)
                        WHEN status_reason = 'Evicted' AND eviction_by_limit(status_message)
                            THEN 'kubelet (local-storage limit eviction)'
                        -- before 1.26 no DisruptionTarget: the shutdown manager's status
                        -- reason and fixed message say it (pkg/kubelet/nodeshutdown)
                        WHEN status_reason = 'Terminated'
                             AND kubelet_termination(status_message) = 'graceful node shutdown'
                            THEN 'kubelet (graceful node shutdown)' END, '')}, version_no)
               FILTER (WHERE phase IN ('Succeeded', 'Failed')) AS terminal,
           arg_min({'ev': ev, 'inferred': inferred OR type = 'INFERRED_DELETED',
                    'component': component, 'grace_s': deletion_grace_s,
                    'node_name': node_name}, version_no)
               FILTER (WHERE type IN ('DELETED', 'INFERRED_DELETED')) AS deleted,
           max(disruption_reason) FILTER (WHERE disruption_reason = 'DeletionByPodGC')
               AS pod_gc
    FROM pv GROUP BY uid),
-- the pod's node when it was deleted: a node agent that is not Ready cannot have sent
-- the final grace-0 DELETE, a client did (kubectl delete --force)
deleted_on AS (
    SELECT f.uid, n.ready AS node_ready, n.type AS node_type
    FROM firsts f
    -- (the records of the nodes these pods were deleted on, not of every node)
    ASOF LEFT JOIN (SELECT r.cluster, r.name, r.received_at, r.type, nd.ready
                    FROM raw_events r
                    SEMI JOIN (SELECT DISTINCT cluster, deleted.node_name AS name FROM firsts
                               WHERE deleted IS NOT NULL) d
                      ON d.cluster = r.cluster AND d.name = r.name
                    LEFT JOIN nodes nd USING (event_id)
                    WHERE r.kind = 'Node') n
      ON n.cluster = f.cluster AND n.name = f.deleted.node_name
     AND n.received_at <= f.deleted.ev.received_at
    WHERE f.deleted IS NOT NULL),
requester AS (
    SELECT f.uid,
           coalesce(disruption_requester(f.deletion.disruption, f.deletion.disruption_message),
                    (SELECT arg_min(e.component, e.event_id) FROM owner_events e
                     WHERE e.uid = f.uid AND e.reason = 'SuccessfulDelete'),
                    (SELECT arg_min(CASE e.reason WHEN 'TaintManagerEviction'
                                                      THEN 'taint-eviction-controller'
                                                  WHEN 'Preempted' THEN 'kube-scheduler (preemption)'
                                                  ELSE coalesce(e.component, 'kubelet') END,
                                    e.event_id)
                     -- (not the taint-eviction controller's "Cancelling deletion of Pod":
                     -- it follows a deletion by someone else that ended its scheduled one)
                     FROM pod_events e WHERE e.uid = f.uid
                       AND e.reason IN ('TaintManagerEviction', 'Evicted', 'Preempted')
                       AND e.message NOT LIKE 'Cancelling deletion of Pod %'
                       AND e.received_at <= f.deletion.ev.received_at + INTERVAL 5 SECOND))
               AS who
    FROM firsts f WHERE f.deletion IS NOT NULL),
-- one row per step, its fields as columns (no three-part names such as s.v.ev: DuckDB
-- reads those as database.table.column when a database shares the alias's name)
version_steps AS (
    SELECT uid, step, rank, ev, server_at, component, detail,
           NOT seen_from_start AND ev.event_id = created_event_id AS derived
    FROM (SELECT f.uid, f.seen_from_start, f.created.ev.event_id AS created_event_id,
    unnest([
        {'step': 'created', 'rank': 1, 'ev': f.created.ev, 'server_at': f.created.server_at,
            'component': CASE WHEN f.seen_from_start
                              THEN coalesce(f.created.component,
                                            CASE WHEN o.uid IS NOT NULL THEN 'kube-controller-manager' END)
                              ELSE coalesce((SELECT arg_min(e.component, e.event_id) FROM owner_events e
                                             WHERE e.uid = f.uid AND e.reason = 'SuccessfulCreate'),
                                            CASE WHEN o.owner_kind = 'Node' THEN 'kubelet'
                                                 WHEN o.uid IS NOT NULL THEN 'kube-controller-manager' END,
                                            f.created.creator) END,
            'detail': f.created.detail},
        -- created with spec.nodeName already set: bound by its creator, no scheduler ran
        {'step': 'scheduled', 'rank': 2, 'ev': f.scheduled.ev,
            'server_at': f.scheduled.server_at,
            'component': CASE WHEN f.seen_from_start AND f.scheduled.ev.event_id = f.created.ev.event_id
                              THEN coalesce(f.created.creator, f.created.component, 'unknown')
                              ELSE 'kube-scheduler' END,
            'detail': f.scheduled.detail
                      || CASE WHEN f.seen_from_start AND f.scheduled.ev.event_id = f.created.ev.event_id
                              THEN ' (spec.nodeName set at creation: no scheduler)' ELSE '' END},
        {'step': 'running', 'rank': 3, 'ev': f.running.ev, 'server_at': f.running.server_at,
            'component': f.running.component, 'detail': NULL},
        {'step': 'ready', 'rank': 4, 'ev': f.ready.ev, 'server_at': f.ready.server_at,
            'component': f.ready.component, 'detail': NULL},
        {'step': 'deletion_requested', 'rank': 6, 'ev': f.deletion.ev,
            'server_at': f.deletion.server_at, 'component': coalesce(q.who, 'kube-apiserver'),
            'detail': 'grace ' || f.deletion.grace_s || 's'
                      || CASE WHEN q.who IS NULL THEN '; requester unknown (a DELETE; no audit log)'
                              ELSE '' END},
        {'step': 'containers_stopped', 'rank': 9, 'ev': f.containers_stopped.ev,
            'server_at': f.containers_stopped.server_at,
            'component': f.containers_stopped.component,
            'detail': f.containers_stopped.detail},
        {'step': 'terminal', 'rank': 10, 'ev': f.terminal.ev, 'server_at': NULL,
            'component': f.terminal.component, 'detail': f.terminal.detail},
        {'step': 'deleted', 'rank': 12, 'ev': f.deleted.ev, 'server_at': NULL,
            'component': CASE WHEN f.deleted.inferred THEN 'unknown'
                              WHEN f.pod_gc IS NOT NULL THEN 'pod-garbage-collector'
                              -- already Failed or Succeeded when deleted: the API server sets
                              -- grace 0 whoever asks (pkg/registry/core/pod/strategy.go
                              -- CheckGracefulDelete), so the requester's DELETE removed it
                              WHEN f.terminal.version_no < f.deletion.version_no
                                   AND f.deleted.grace_s = 0 THEN coalesce(q.who, 'kube-apiserver')
                              WHEN f.deleted.grace_s = 0 AND f.deleted.node_name IS NOT NULL
                                   AND (d.node_ready IS DISTINCT FROM 'True'
                                        OR d.node_type IN ('DELETED', 'INFERRED_DELETED'))
                                  THEN 'client (force delete)'
                              ELSE coalesce(f.deleted.component, 'kubelet') END,
            'detail': CASE WHEN f.deleted.inferred THEN 'inferred at relist' END}
    ], max_depth := 2)
    FROM firsts f LEFT JOIN requester q USING (uid) LEFT JOIN deleted_on d USING (uid)
    LEFT JOIN owners o USING (uid))
    WHERE ev IS NOT NULL),
first_seen AS (
    SELECT uid, 'first_seen' AS step, 0 AS rank, created.ev AS ev, NULL::TIMESTAMP AS server_at,
           'ktrace' AS component,
           'first seen ' || created.ev.type || ' (steps before were derived from the object)'
               AS detail, false AS derived
    FROM firsts WHERE NOT seen_from_start),
-- container restarts: each increase of a container's restartCount between versions (at
-- the previous run's finish), or the restarts that happened before the first sighting
restart_counts AS (
    SELECT v.uid, v.ev, v.version_no, k.name, k.restart_count, k.last_exit_code,
           k.last_reason, k.last_finished_at,
           lag(k.restart_count) OVER (PARTITION BY v.uid, k.name ORDER BY v.version_no)
               AS prev_count
    FROM pv v JOIN containers k USING (event_id)),
restarts AS (
    SELECT c.uid, 'restarted' AS step, 4 AS rank, c.ev, c.last_finished_at AS server_at,
           'kubelet' AS component,
           c.name || CASE WHEN c.prev_count IS NULL
                          THEN ': ' || c.restart_count || ' restarts before first seen'
                          ELSE ': restart ' || c.restart_count END
               || coalesce('; last exit ' || c.last_exit_code
                           || coalesce(' (' || c.last_reason || ')', ''), '') AS detail,
           c.prev_count IS NULL AS derived
    FROM restart_counts c
    WHERE c.restart_count > coalesce(c.prev_count, 0)),
event_steps AS (
    SELECT e.uid, s.step, s.rank,
           arg_min({'event_id': e.event_id, 'rv': e.rv, 'type': e.type,
                    'received_at': e.received_at, 'is_live': e.type IN ('ADDED', 'MODIFIED'),
                    'time_source': e.time_source},
                   row(e.received_at, e.rv)) AS ev,
           arg_min(e.first_time, row(e.received_at, e.rv)) AS server_at,
           arg_min(coalesce(e.component, 'kubelet'), row(e.received_at, e.rv)) AS component,
           arg_min(e.message, row(e.received_at, e.rv)) AS detail,
           bool_and(e.type = 'LISTED') AS derived
    FROM pod_events e
    JOIN (VALUES ('Killing', 'killing', 8), ('Pulling', 'pulling', 3),
                 ('Pulled', 'pulled', 3)) AS s(reason, step, rank) ON s.reason = e.reason
    GROUP BY e.uid, s.step, s.rank),
-- the taint-eviction controller's Events (pkg/controller/tainteviction): "Marking for deletion
-- Pod NS/NAME" right before it deletes the pod (an untolerated NoExecute taint, or one that
-- outlived tolerationSeconds), "Cancelling deletion of Pod NS/NAME" when it calls off one it
-- had scheduled — a step each, whether or not the pod's deletion was recorded
taint_steps AS (
    SELECT e.uid, CASE WHEN e.message LIKE 'Cancelling deletion of Pod %'
                       THEN 'taint_eviction_cancelled' ELSE 'taint_eviction' END AS step,
           6 AS rank,
           {'event_id': e.event_id, 'rv': e.rv, 'type': e.type, 'received_at': e.received_at,
            'is_live': e.type IN ('ADDED', 'MODIFIED'), 'time_source': e.time_source} AS ev,
           e.first_time AS server_at, coalesce(e.component, 'taint-eviction-controller') AS component,
           e.message || CASE WHEN e.message LIKE 'Cancelling deletion of Pod %'
                             THEN ': its scheduled eviction called off (the taint went, the pod '
                                  || 'went, or its eviction was rescheduled)'
                             ELSE ': its node''s NoExecute taint is not tolerated (or outlived '
                                  || 'tolerationSeconds); the controller deletes it now' END
               || CASE WHEN e.count > 1 THEN ' (×' || e.count || ')' ELSE '' END AS detail,
           e.type = 'LISTED' AS derived
    FROM pod_events e WHERE e.reason = 'TaintManagerEviction'
    QUALIFY row_number() OVER (PARTITION BY e.uid, e.event_uid ORDER BY e.received_at, e.rv) = 1),
-- Warning Events about the pod (FailedScheduling, Failed, BackOff, Unhealthy, FailedMount…):
-- the first of each reason, with how often it was reported
warnings AS (
    SELECT e.uid, 'warning' AS step, 5 AS rank,
           arg_min({'event_id': e.event_id, 'rv': e.rv, 'type': e.type,
                    'received_at': e.received_at, 'is_live': e.type IN ('ADDED', 'MODIFIED'),
                    'time_source': e.time_source},
                   row(e.received_at, e.rv)) AS ev,
           min(e.first_time) AS server_at, arg_min(coalesce(e.component, 'kubelet'),
                                                   row(e.received_at, e.rv)) AS component,
           e.reason || ': ' || arg_min(e.message, row(e.received_at, e.rv))
               || CASE WHEN max(e.count) > 1 THEN ' (×' || max(e.count) || ')' ELSE '' END
               AS detail,
           bool_and(e.type = 'LISTED') AS derived
    FROM pod_events e WHERE e.event_type = 'Warning'
    GROUP BY e.uid, e.reason),
-- a name reused by a new uid: the old pod was gone by then, its DELETED not seen
reused AS (
    SELECT o.uid, 'deleted' AS step, 12 AS rank, n.created.ev AS ev,
           n_created AS server_at, 'unknown' AS component,
           'name reused by pod ' || n.uid || ': its deletion was not seen' AS detail,
           false AS derived
    FROM (SELECT f.*, r.namespace, r.name, f.created.server_at AS n_created
          FROM firsts f JOIN raw_events r ON r.event_id = f.created.ev.event_id) n
    JOIN (SELECT f.uid, f.cluster, r.namespace, r.name, f.created.server_at AS created_at,
                 f.deleted
          FROM firsts f JOIN raw_events r ON r.event_id = f.created.ev.event_id) o
      ON o.cluster = n.cluster AND o.namespace IS NOT DISTINCT FROM n.namespace
     AND o.name = n.name AND o.uid <> n.uid
     AND o.created_at < n.n_created AND o.deleted IS NULL
    QUALIFY row_number() OVER (PARTITION BY o.uid ORDER BY n.n_created) = 1),
membership AS (
    SELECT m.*, r.rv, r.type, r.time_source, min(since_at) FILTER (WHERE state = 'ready')
               OVER (PARTITION BY pod_uid) AS first_ready_at
    FROM endpoint_membership m JOIN raw_events r ON r.event_id = m.since_event_id
    WHERE m.pod_uid IN (SELECT uid FROM projection_scope)),
endpoint_steps AS (
    SELECT pod_uid AS uid, s.step, s.rank,
           arg_min({'event_id': since_event_id, 'rv': rv, 'type': type, 'received_at': since_at,
                    'is_live': type IN ('ADDED', 'MODIFIED')
                               OR (s.step = 'endpoint_removed' AND type = 'DELETED'),
                    'time_source': time_source},
                   row(since_at, rv)) AS ev,
           NULL::TIMESTAMP AS server_at, 'endpointslice-controller' AS component,
           arg_min(CASE s.step
                       WHEN 'in_endpoints' THEN service
                       WHEN 'endpoint_not_ready' THEN service || ': ' || state
                            || CASE WHEN terminating THEN ', terminating' ELSE '' END
                       ELSE service || CASE WHEN type = 'DELETED' THEN ': slice deleted' ELSE '' END
                   END, row(since_at, rv)) AS detail,
           false AS derived
    FROM membership
    JOIN (VALUES ('in_endpoints', 5), ('endpoint_not_ready', 7), ('endpoint_removed', 11))
         AS s(step, rank)
      ON (s.step = 'in_endpoints' AND state = 'ready')
      OR (s.step = 'endpoint_not_ready' AND state IN ('serving', 'not_ready')
          AND since_at > first_ready_at)
      OR (s.step = 'endpoint_removed' AND state = 'absent')
    GROUP BY pod_uid, s.step, s.rank),
everything AS (
    SELECT * FROM version_steps UNION ALL SELECT * FROM first_seen
    UNION ALL SELECT * FROM restarts UNION ALL SELECT * FROM event_steps
    UNION ALL SELECT * FROM warnings UNION ALL SELECT * FROM taint_steps
    UNION ALL SELECT * FROM reused UNION ALL SELECT * FROM endpoint_steps)
SELECT uid, step, rank, ev.event_id, ev.rv, ev.type, ev.received_at, ev.is_live,
       -- the evidence's time is not a receive time (an import's)
       ev.time_source <> 'received' AS clockless, server_at, component, detail, derived
FROM everything
