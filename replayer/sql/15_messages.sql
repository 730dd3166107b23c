-- What Kubernetes components write in Event messages, parsed (documented in
-- docs/projections.md; the formats of Kubernetes 1.27–1.37 are unit-tested in
-- tests/test_replayer_messages.py).

-- kube-scheduler's FailedScheduling message, e.g.
--   0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {k: v}.
--   preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.
-- (older: "node(s) had taint {k: v}, that the pod didn't tolerate"; 1.8–1.10 predicate
-- names: "3 MatchNodeSelector"; before 1.8: "No nodes are available that match all of the
-- following predicates:: Insufficient cpu (3)"; without the node count: "pod has unbound
-- immediate PersistentVolumeClaims"). The main part is split into its "N reason" (or
-- "reason (N)") items; `preemption` keeps what the preemption attempt said.
CREATE OR REPLACE MACRO scheduling_main(msg) AS
    regexp_extract(msg, '^(.*?)(\. preemption:.*)?\.?\s*$', 1);

CREATE OR REPLACE MACRO scheduling_category(reason) AS CASE
    WHEN reason ILIKE 'Insufficient %'
        THEN 'insufficient_' || lower(regexp_extract(reason, '^Insufficient (\S+)', 1))
    WHEN reason ILIKE '%Too many pods%' THEN 'insufficient_pods'
    WHEN reason ILIKE '%untolerated taint%' OR reason ILIKE '%that the pod didn''t tolerate%'
         OR reason = 'PodToleratesNodeTaints' THEN 'untolerated_taint'
    WHEN reason ILIKE '%were unschedulable%' OR reason = 'NodeUnschedulable'
        THEN 'node_unschedulable'
    WHEN reason ILIKE '%didn''t match Pod''s node affinity%'
         OR reason ILIKE '%didn''t match node selector%'
         OR reason ILIKE '%didn''t match node affinity%'
         OR reason IN ('MatchNodeSelector', 'NodeAffinity') THEN 'node_selector_mismatch'
    WHEN reason ILIKE '%pod affinity%' OR reason ILIKE '%anti-affinity%'
         OR reason IN ('MatchInterPodAffinity', 'InterPodAffinity') THEN 'pod_affinity'
    WHEN reason ILIKE '%topology spread%' THEN 'topology_spread'
    WHEN reason ILIKE '%unbound immediate PersistentVolumeClaims%'
         OR reason ILIKE '%persistentvolumeclaim % not found%'
         OR reason ILIKE '%didn''t find available persistent volumes%'
         OR reason ILIKE '%waiting for first consumer%' THEN 'unbound_pvc'
    WHEN reason ILIKE '%volume node affinity conflict%' OR reason = 'NoVolumeZoneConflict'
        THEN 'volume_node_affinity'
    WHEN reason ILIKE '%free ports%' OR reason = 'PodFitsHostPorts' THEN 'host_ports'
    WHEN reason ILIKE '%max volume count%' OR reason ILIKE 'MaxVolumeCount%'
         OR reason ILIKE '%volume count%' THEN 'volume_limits'
    WHEN reason ILIKE '%preemption%' THEN 'preemption'
    ELSE 'other' END;

CREATE OR REPLACE MACRO scheduling_items(main) AS
    [{'count': coalesce(try_cast(nullif(regexp_extract(trim(item), '^(\d+) ', 1), '') AS INTEGER),
                        try_cast(nullif(regexp_extract(trim(item), ' \((\d+)\)$', 1), '') AS INTEGER)),
      'reason': trim(regexp_replace(regexp_replace(trim(item), '^\d+ ', ''), ' \(\d+\)$', ''))}
     FOR item IN string_split(regexp_replace(
         coalesce(nullif(regexp_extract(main, 'nodes are available: (.*)$', 1), ''),
                  nullif(regexp_extract(main, 'following predicates::? (.*)$', 1), ''), main),
         ', (\d+ )|, ([A-Z])', chr(31) || '\1\2', 'g'), chr(31))
     IF trim(item) <> ''];

CREATE OR REPLACE MACRO scheduling_reasons(msg) AS (
    SELECT {'nodes_total': coalesce(
                try_cast(nullif(regexp_extract(main, '^(\d+)/(\d+) nodes are available', 2), '')
                         AS INTEGER),
                try_cast(nullif(regexp_extract(msg, 'preemption: (\d+)/(\d+) nodes', 2), '')
                         AS INTEGER)),
            'reasons': [struct_insert(x, category := scheduling_category(x.reason))
                        FOR x IN scheduling_items(main)],
            'preemption': nullif(regexp_extract(msg, '\. preemption: (.*?)\.?\s*$', 1), '')}
    FROM (SELECT scheduling_main(msg) AS main));

-- The kubelet's Pulled message: "Successfully pulled image "x" in 5.87s (5.87s including
-- waiting). Image size: 12 bytes." (1.29+), older "… in 5.869224588s" or "in 1m2.5s":
-- the pull time in seconds, NULL when absent.
CREATE OR REPLACE MACRO pulled_seconds(msg) AS (
    SELECT CASE WHEN d = '' THEN NULL
                ELSE coalesce(try_cast(nullif(regexp_extract(d, '(\d+)h', 1), '') AS DOUBLE) * 3600, 0)
                     + coalesce(try_cast(nullif(regexp_extract(d, '(\d+)m(?:[^s]|$)', 1), '') AS DOUBLE) * 60, 0)
                     + coalesce(try_cast(nullif(regexp_extract(d, '([\d.]+)s$', 1), '') AS DOUBLE), 0)
                     + coalesce(try_cast(nullif(regexp_extract(d, '([\d.]+)ms$', 1), '') AS DOUBLE) / 1000, 0)
           END
    FROM (SELECT regexp_extract(msg, 'Successfully pulled image .* in ([0-9hms.]+)', 1) AS d));

-- The cause a kubelet Failed/BackOff Event names, from its message (the container's own
-- waiting reason says the same while it is in the status; the Event outlives it):
--   "Failed to pull image …", "Error: ErrImagePull", "Back-off pulling image …" → image_pull;
--   "Error: configmap "x" not found", "Error: couldn't find key K in Secret …" → container_config;
--   "Back-off restarting failed container …" → crash_loop;
--   "Error: failed to start container …", "… executable file not found …" → run_container_error.
CREATE OR REPLACE MACRO kubelet_failure(reason, message) AS CASE
    WHEN reason NOT IN ('Failed', 'BackOff', 'InspectFailed', 'ErrImageNeverPull') THEN NULL
    WHEN message ILIKE '%pull%image%' OR message ILIKE 'Error: ErrImagePull%'
         OR message ILIKE 'Error: ImagePullBackOff%' OR message ILIKE '%InvalidImageName%'
         OR message ILIKE '%ErrImageNeverPull%' OR message ILIKE '%image%not present%'
        THEN 'image_pull'
    WHEN message ILIKE 'Back-off restarting failed container%' THEN 'crash_loop'
    WHEN message ILIKE 'Error: %not found%' OR message ILIKE 'Error: couldn''t find key%'
         OR message ILIKE 'Error: %secret%' OR message ILIKE 'Error: %configmap%'
        THEN 'container_config'
    WHEN message ILIKE 'Error: failed to start container%' OR message ILIKE '%executable file not found%'
         OR message ILIKE 'Error: failed to create containerd task%'
         OR message ILIKE 'Error: container create failed%' OR message ILIKE '%StartError%'
        THEN 'run_container_error' END;
