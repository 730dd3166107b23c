-- model: table; key: uid; depends: endpoint_membership, k8s_events, object_versions, pod_steps_raw, projection_scope, refreshed_from
-- pod_transitions: one row per lifecycle step of each pod (design §5), with its time, the
-- component that made it and the record that shows it. Documented in docs/projections.md.
--
-- Step times: the receive time of the evidence record, except for records that only show
-- a past state (LISTED, inferred), where the server's own timestamp is the better guess.
-- A record without a receive time (an import: its time is the newest timestamp inside the
-- object) makes a derived step, and its `created` is the creationTimestamp itself.
-- Order: by time, then by the causal rules of design §4 (an endpoint turns not-ready or
-- leaves after the deletion was requested; DELETED follows everything else but the
-- taint-eviction controller's cancellation it causes), then by
-- resourceVersion (one etcd's commit order; it breaks the ties of 1 s derived times).
WITH ids AS (
    SELECT uid, any_value(namespace) AS namespace, any_value(name) AS pod
    FROM object_versions WHERE kind = 'Pod' AND rowid >= refreshed_from('object_versions')
      AND uid IN (SELECT uid FROM projection_scope) GROUP BY uid),
-- a pod that lived and went while the recorder was down is known by its Events alone
event_ids AS (
    SELECT regarding_uid AS uid, any_value(regarding_namespace) AS namespace, any_value(regarding_name) AS pod
    FROM k8s_events WHERE regarding_kind = 'Pod' AND regarding_uid IN (SELECT uid FROM projection_scope)
    GROUP BY regarding_uid),
timed AS (
    SELECT s.* EXCLUDE (derived, clockless),
           CASE WHEN (s.derived OR (s.clockless AND s.step = 'created'))
                     AND s.server_at IS NOT NULL THEN s.server_at
                WHEN s.is_live OR s.server_at IS NULL THEN s.received_at
                ELSE s.server_at END AS time,
           -- (first_seen is ktrace's own sighting, never a step before it)
           s.derived OR (coalesce(s.clockless, false) AND s.step <> 'first_seen') AS derived
    FROM pod_steps_raw s),
-- a step that every later one implies and whose time is only its record's (a capture
-- without creationTimestamp or PodScheduled's time): at or before the earliest step with a
-- time of its own that follows it — a pod exists before any Event about it, and is bound
-- before its containers run
clamped AS (
    SELECT * REPLACE (least(time, coalesce(implied_by, time)) AS time,
                      CASE WHEN implied_by < time AND step = 'created'
                           THEN coalesce(detail, 'at or before (its earliest evidence; no creationTimestamp)')
                           ELSE detail END AS detail)
    FROM (SELECT *, CASE WHEN NOT derived OR server_at IS NOT NULL THEN NULL
                         WHEN step = 'created'
                             THEN min(time) FILTER (WHERE server_at IS NOT NULL
                                                    AND step <> 'first_seen') OVER w
                         WHEN step = 'scheduled'
                             THEN min(time) FILTER (WHERE server_at IS NOT NULL AND step IN
                                      ('running', 'ready', 'restarted', 'containers_stopped')) OVER w
                    END AS implied_by
          FROM timed WINDOW w AS (PARTITION BY uid))),
bounds AS (
    -- (the taint-eviction controller's "Marking for deletion" Event opens its deletion)
    SELECT uid, min(time) FILTER (WHERE step IN ('deletion_requested', 'taint_eviction'))
               AS requested_at,
           max(time) FILTER (WHERE step NOT IN ('deleted', 'taint_eviction_cancelled'))
               AS last_before_delete_at,
           min(time) FILTER (WHERE step = 'deleted') AS deleted_at
    FROM clamped GROUP BY uid),
ordered AS (
    SELECT t.*, CASE
            WHEN t.step IN ('endpoint_not_ready', 'endpoint_removed')
                 AND b.requested_at IS NOT NULL AND t.time >= b.requested_at - INTERVAL 1 SECOND
                THEN greatest(t.time, b.requested_at)
            WHEN t.step = 'deleted' THEN greatest(t.time, b.last_before_delete_at)
            -- the taint-eviction controller calls off its eviction when the pod goes: within
            -- the second of the removal (an import's whole seconds), after it
            WHEN t.step = 'taint_eviction_cancelled' AND b.deleted_at IS NOT NULL
                 AND t.time >= b.deleted_at - INTERVAL 1 SECOND
                THEN greatest(t.time, b.deleted_at, b.last_before_delete_at)
                     + INTERVAL 1 MICROSECOND
            ELSE t.time END AS order_at
    FROM clamped t JOIN bounds b USING (uid))
SELECT o.uid, coalesce(i.namespace, e.namespace) AS namespace, coalesce(i.pod, m.pod, e.pod) AS pod,
       -- equal times taken from the server's 1 s timestamps are ordered by the lifecycle,
       -- received ones by resourceVersion
       row_number() OVER (PARTITION BY o.uid ORDER BY o.order_at,
                          CASE WHEN o.time = o.server_at OR o.implied_by IS NOT NULL THEN o.rank END,
                          o.rv, o.rank)
           AS step_no,
       o.step, o.time, o.server_at, o.component, o.event_id AS evidence_event_id,
       o.type AS evidence_type, o.detail, o.derived
FROM ordered o LEFT JOIN ids i USING (uid) LEFT JOIN event_ids e USING (uid)
LEFT JOIN (SELECT pod_uid, any_value(pod) AS pod FROM endpoint_membership
           WHERE pod_uid IN (SELECT uid FROM projection_scope) GROUP BY ALL) m
       ON m.pod_uid = o.uid
