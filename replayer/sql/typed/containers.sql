-- containers: one row per container status of every Pod version (init containers too;
-- `sidecar` marks native sidecars: init containers with restartPolicy Always, which keep
-- running beside the app containers). `state` is waiting, running or terminated; the
-- last_* columns are lastState.terminated (the previous run of a restarted container);
-- last_message is that run's termination message (the container's own last words, or the
-- runtime's reason it could not start). memory_limit is the spec's limits.memory as written
-- (in_spec: whether the spec of the container was recorded at all).
WITH statuses AS (
    SELECT p.event_id, p.uid, false AS init, unnest(p.o.status.containerStatuses) AS c,
           p.o.spec.initContainers AS specs, p.o.spec.containers AS own_specs
    FROM parsed p WHERE p.kind = 'Pod'
    UNION ALL
    SELECT p.event_id, p.uid, true, unnest(p.o.status.initContainerStatuses),
           p.o.spec.initContainers, p.o.spec.initContainers
    FROM parsed p WHERE p.kind = 'Pod')
SELECT event_id, uid, c.name, init,
       init AND list_contains([i.name FOR i IN coalesce(specs, []) IF i.restartPolicy = 'Always'],
                              c.name) AS sidecar,
       coalesce(c.ready, false) AS ready, coalesce(c.restartCount, 0) AS restart_count,
       CASE WHEN c.state.terminated IS NOT NULL THEN 'terminated'
            WHEN c.state.running IS NOT NULL THEN 'running'
            WHEN c.state.waiting IS NOT NULL THEN 'waiting' END AS state,
       coalesce(c.state.waiting.reason, c.state.terminated.reason) AS reason,
       clean_message(coalesce(c.state.waiting.message, c.state.terminated.message)) AS message,
       c.state.terminated.exitCode AS exit_code, c.state.terminated.signal AS signal,
       coalesce(c.state.running.startedAt, c.state.terminated.startedAt) AS started_at,
       c.state.terminated.finishedAt AS finished_at,
       c.lastState.terminated.exitCode AS last_exit_code,
       c.lastState.terminated.reason AS last_reason,
       clean_message(c.lastState.terminated.message) AS last_message,
       c.lastState.terminated.startedAt AS last_started_at,
       c.lastState.terminated.finishedAt AS last_finished_at,
       c.image,
       [x.resources.limits.memory FOR x IN coalesce(own_specs, []) IF x.name = c.name][1]
           AS memory_limit,
       list_contains([x.name FOR x IN coalesce(own_specs, [])], c.name) AS in_spec
FROM statuses
