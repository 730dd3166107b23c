-- model: macro(ts, margin_s := 30, threshold_s := 60); depends: drain_blocked_at, not_running_at, stuck_at, workload_problems_at
-- problems_at(ts, margin_s := 30, threshold_s := 60): everything stuck at ts in one shape —
-- deletions that never finished (problem `terminating`, stuck_at), pods not running or not
-- Ready (`pending`, `not_ready`: not_running_at) and workloads that cannot make their pods
-- or volumes that cannot get on (workload_problems_at: `not_created`, `rollout_stalled`,
-- `update_held`, `pods_missing`, `claim_pending`, `volume_missing`, `lost`, `released`, `failed`) and drains a
-- PodDisruptionBudget holds (drain_blocked_at: `drain_blocked`). What `ktrace stuck` prints.
SELECT kind, namespace, name, uid, 'terminating' AS problem, stuck_since AS since, stuck_for_s,
       node, top_cause, causes, evidence_event_id
FROM stuck_at(ts, margin_s := margin_s)
UNION ALL
SELECT * FROM not_running_at(ts, threshold_s := threshold_s)
UNION ALL
SELECT * FROM workload_problems_at(ts, threshold_s := threshold_s)
UNION ALL
SELECT * FROM drain_blocked_at(ts, threshold_s := threshold_s)
