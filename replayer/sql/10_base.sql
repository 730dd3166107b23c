-- Building blocks: one object's versions in order, objects as they were at a moment, and
-- each pod's presence in EndpointSlices over time. Documented in docs/projections.md.

-- Every version of every object, ordered by resourceVersion within the object (design §4).
-- version_no counts from 1; is_live is false for LISTED/inferred records, whose receive
-- time says when we looked, not when the change happened. seen_from_start: the object's
-- first record is a live ADDED received within 5 s of its creationTimestamp (1 s precision
-- plus clock skew) — else it was first seen mid-life (listed when the recording started,
-- created while the recorder was down, or already there when a capture began) and what
-- happened before its first sighting is known only from its own timestamps.
-- superseded_at: when a newer version (by resourceVersion, as state_at orders them) was
-- first received, NULL for the newest — the version is the object's state from its
-- received_at until then. Materialized: computed for the objects in projection_scope.
-- (the windows sort only the columns they read; the rest joins back by event_id: sorting
-- every column of every version costs twice as much)
CREATE OR REPLACE VIEW object_versions_computed AS
WITH numbered AS (
    SELECT r.event_id,
           row_number() OVER w AS version_no,
           lead(r.received_at) OVER w AS next_received_at,
           min(r.received_at) OVER (PARTITION BY r.uid) AS first_seen_at,
           first_value(coalesce(r.type = 'ADDED' AND NOT r.inferred
                                AND r.received_at <= r.created_at + INTERVAL 5 SECOND, false))
               OVER w AS seen_from_start,
           min(r.received_at) OVER (PARTITION BY r.uid ORDER BY r.rv DESC NULLS LAST,
                                    r.event_id DESC ROWS BETWEEN UNBOUNDED PRECEDING
                                    AND 1 PRECEDING) AS superseded_at
    FROM raw_events r
    WHERE r.uid IS NOT NULL AND r.type NOT IN ('BOOKMARK')
      AND r.uid IN (SELECT uid FROM projection_scope)
    WINDOW w AS (PARTITION BY r.uid ORDER BY r.rv NULLS LAST, r.event_id))
SELECT r.* EXCLUDE (object), n.version_no, n.next_received_at,
       r.type IN ('ADDED', 'MODIFIED', 'DELETED') AND NOT r.inferred AS is_live,
       n.first_seen_at, n.seen_from_start, n.superseded_at
FROM raw_events r JOIN numbered n USING (event_id);

INSERT OR REPLACE INTO materialized VALUES ('object_versions', 5, 'uid');
CREATE OR REPLACE TABLE object_versions AS FROM object_versions_computed LIMIT 0;

-- The newest version of every object (superseded_at NULL): what an analysis at the end of
-- the data reads, a quarter of object_versions' rows at 1M events. Materialized after
-- object_versions, per uid.
CREATE OR REPLACE VIEW latest_versions_computed AS
SELECT * FROM object_versions
WHERE superseded_at IS NULL AND uid IN (SELECT uid FROM projection_scope);

INSERT OR REPLACE INTO materialized VALUES ('latest_versions', 6, 'uid');
CREATE OR REPLACE TABLE latest_versions AS FROM latest_versions_computed LIMIT 0;

-- Each object's version current at ``ts``, deletions included: the version received at or
-- before ts not superseded by then — the newest one, or an older one superseded after ts
-- (none at the end of the data: the zonemaps of superseded_at skip every row group).
CREATE OR REPLACE MACRO versions_at(ts) AS TABLE
SELECT * FROM latest_versions WHERE received_at <= ts
UNION ALL
SELECT * FROM object_versions WHERE received_at <= ts AND superseded_at > ts;

-- Every object as it was at ``ts``: its version current at ts, unless that version says it
-- was deleted (without the object JSON: join raw_events by event_id for it).
CREATE OR REPLACE MACRO state_at(ts) AS TABLE
SELECT * EXCLUDE (version_no, next_received_at, is_live, first_seen_at, seen_from_start,
                  superseded_at)
FROM versions_at(ts)
WHERE type NOT IN ('DELETED', 'INFERRED_DELETED');

-- The end of the data: the default "now" of stuck_at and friends.
CREATE OR REPLACE MACRO data_end() AS (SELECT max(received_at) FROM raw_events);

-- Whether a terminated container status is the end of a run (not a start that failed, nor
-- the kubelet's stand-in for a container it could not find).
CREATE OR REPLACE MACRO ran_to_end(reason, exit_code) AS
    coalesce(reason, '') NOT IN ('ContainerCannotRun', 'StartError', 'RunContainerError',
                                 'CreateContainerError', 'ContainerStatusUnknown')
    AND coalesce(exit_code, 0) NOT IN (127, 128);

-- Pod versions with their typed facts and the conditions and container counts the
-- lifecycle needs (non-init containers only).
CREATE OR REPLACE VIEW pod_versions AS
WITH cs AS (
    SELECT event_id, count(*) AS containers,
           count(*) FILTER (WHERE state = 'running') AS containers_running,
           count(*) FILTER (WHERE state = 'terminated') AS containers_terminated,
           count(*) FILTER (WHERE state = 'waiting') AS containers_waiting,
           min(started_at) AS containers_started_at, max(finished_at) AS containers_finished_at,
           min(last_started_at) AS containers_last_started_at,
           -- containers that ran at all: one running, or a run that ended (now or last
           -- time). A runtime that could not start one (exit 127/128, ContainerCannotRun,
           -- StartError) still reports a start time; a container the kubelet never found
           -- (ContainerStatusUnknown) and one still waiting (image pull, config) never ran
           count(*) FILTER (WHERE state = 'running'
                            OR (state = 'terminated' AND ran_to_end(reason, exit_code))
                            OR (last_reason IS NOT NULL AND ran_to_end(last_reason, last_exit_code))
                            -- the kubelet's own word that it ran before it lost it
                            OR last_message LIKE '%The container used to be Running%')
               AS containers_ran,
           sum(restart_count)::INTEGER AS restarts,
           list(exit_code ORDER BY name) FILTER (WHERE state = 'terminated') AS exit_codes,
           list(reason ORDER BY name) FILTER (WHERE state = 'terminated') AS exit_reasons
    FROM containers WHERE NOT init GROUP BY event_id),
cond AS (
    SELECT event_id,
           any_value(status) FILTER (WHERE type = 'Ready') AS ready_status,
           any_value(last_transition) FILTER (WHERE type = 'Ready') AS ready_transition,
           any_value(last_transition) FILTER (WHERE type = 'PodScheduled' AND status = 'True')
               AS scheduled_transition,
           any_value(reason) FILTER (WHERE type = 'DisruptionTarget' AND status = 'True')
               AS disruption_reason
    FROM conditions WHERE kind = 'Pod' GROUP BY event_id)
SELECT v.*, p.phase, p.node_name, p.pod_ip, p.start_time, p.grace_s, p.has_prestop,
       p.claim_names, p.creator, p.status_manager, cond.ready_status, cond.ready_transition,
       cond.scheduled_transition, cond.disruption_reason,
       coalesce(cs.containers, 0) AS containers,
       coalesce(cs.containers_running, 0) AS containers_running,
       coalesce(cs.containers_terminated, 0) AS containers_terminated,
       coalesce(cs.containers_waiting, 0) AS containers_waiting,
       cs.containers_started_at, cs.containers_finished_at, cs.containers_last_started_at,
       coalesce(cs.containers_ran, 0) AS containers_ran,
       coalesce(cs.restarts, 0) AS restarts, cs.exit_codes, cs.exit_reasons
FROM object_versions v JOIN pods p USING (event_id)
LEFT JOIN cs USING (event_id) LEFT JOIN cond USING (event_id)
WHERE v.kind = 'Pod';

-- One row per stretch of time a pod (targetRef uid) had one state in one EndpointSlice:
-- state is ready, serving (ready=false, serving=true: terminating but still serving),
-- not_ready, or absent (left the slice, or the slice was deleted). until_at is NULL for
-- the stretch still open at the end of the data. Materialized per slice (slice_uid in
-- projection_scope).
CREATE OR REPLACE VIEW endpoint_membership_computed AS
WITH slice_versions AS (
    SELECT event_id, uid AS slice_uid, cluster, namespace, type, rv, received_at,
           labels['kubernetes.io/service-name'] AS service
    FROM raw_events WHERE kind = 'EndpointSlice' AND uid IS NOT NULL
      AND uid IN (SELECT uid FROM projection_scope)),
targets AS (
    SELECT e.slice_uid, e.target_uid, any_value(e.target_name) AS pod
    FROM endpoints e WHERE e.target_uid IS NOT NULL
      AND e.slice_uid IN (SELECT uid FROM projection_scope) GROUP BY ALL),
grid AS (
    SELECT v.*, t.target_uid, t.pod, e.addresses, e.ready, e.serving, e.terminating,
           CASE WHEN e.event_id IS NULL OR v.type IN ('DELETED', 'INFERRED_DELETED')
                THEN 'absent'
                WHEN e.ready IS NOT FALSE THEN 'ready'
                WHEN e.serving THEN 'serving'
                ELSE 'not_ready' END AS state
    FROM slice_versions v JOIN targets t USING (slice_uid)
    LEFT JOIN endpoints e ON e.event_id = v.event_id AND e.target_uid = t.target_uid),
ordered AS (
    SELECT *, sum(CASE WHEN state = 'absent' THEN 0 ELSE 1 END)
                  OVER (PARTITION BY slice_uid, target_uid ORDER BY rv, event_id) AS seen,
              lag(state) OVER (PARTITION BY slice_uid, target_uid ORDER BY rv, event_id)
                  AS prev_state
    FROM grid),
islands AS (
    SELECT *, sum(CASE WHEN prev_state IS DISTINCT FROM state THEN 1 ELSE 0 END)
                  OVER (PARTITION BY slice_uid, target_uid ORDER BY rv, event_id) AS island
    FROM ordered WHERE seen > 0)
SELECT slice_uid, any_value(cluster) AS cluster, any_value(service) AS service,
       any_value(namespace) AS namespace, target_uid AS pod_uid, any_value(pod) AS pod, state,
       arg_min(ready, rv) AS ready, arg_min(serving, rv) AS serving,
       arg_min(terminating, rv) AS terminating, arg_min(addresses, rv) AS addresses,
       min(received_at) AS since_at,
       lead(min(received_at)) OVER (PARTITION BY slice_uid, target_uid ORDER BY island)
           AS until_at,
       arg_min(event_id, rv) AS since_event_id
FROM islands
GROUP BY slice_uid, target_uid, island, state;

INSERT OR REPLACE INTO materialized VALUES ('endpoint_membership', 10, 'slice_uid');
CREATE OR REPLACE TABLE endpoint_membership AS FROM endpoint_membership_computed LIMIT 0;
