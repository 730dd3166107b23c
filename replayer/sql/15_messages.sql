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

-- The resource a kubelet eviction names (pkg/kubelet/eviction/helpers.go, 1.27–1.37):
--   "The node was low on resource: memory. Threshold quantity: 100Mi, available: 52Mi. …"
--   → memory (also ephemeral-storage, pids, inodes); 1.6's "… resource: [MemoryPressure]."
--   and the admission-time "The node had condition: [DiskPressure]. " → the condition's
--   resource; "Container x exceeded its local ephemeral storage limit …", "Pod ephemeral
--   local storage usage exceeds …", "Usage of EmptyDir volume … exceeds the limit …" →
--   ephemeral-storage. NULL when the message names none.
CREATE OR REPLACE MACRO pressure_resource(condition) AS CASE condition
    WHEN 'MemoryPressure' THEN 'memory' WHEN 'DiskPressure' THEN 'ephemeral-storage'
    WHEN 'PIDPressure' THEN 'pids' END;

CREATE OR REPLACE MACRO eviction_resource(msg) AS CASE
    WHEN msg ILIKE '%exceeded its local ephemeral storage limit%'
         OR msg ILIKE '%ephemeral local storage usage exceeds%'
         OR msg ILIKE 'Usage of EmptyDir volume%' THEN 'ephemeral-storage'
    ELSE coalesce(
        pressure_resource(regexp_extract(msg, '(?:low on resource|had condition): \[(\w+)\]', 1)),
        nullif(regexp_extract(msg, 'low on resource: ([a-z.-]+[a-z])', 1), '')) END;

-- The node condition a resource's shortage raises (signalToNodeCondition in
-- pkg/kubelet/eviction/helpers.go).
CREATE OR REPLACE MACRO resource_pressure(resource) AS CASE
    WHEN resource = 'memory' THEN 'MemoryPressure'
    WHEN resource IN ('ephemeral-storage', 'nodefs', 'imagefs', 'inodes') THEN 'DiskPressure'
    WHEN resource = 'pids' THEN 'PIDPressure' END;

-- What a FailedCreatePodSandBox message says failed: `runtime_handler` (containerd's
-- `no runtime for "x" is configured`, CRI-O's "failed to find runtime handler"), `cni`
-- (the network plugin: "failed to setup network for sandbox", dockershim's "networkPlugin
-- cni failed", "plugin type=…"), else `other`.
CREATE OR REPLACE MACRO sandbox_sub(msg) AS CASE
    WHEN msg ILIKE '%no runtime for%' OR msg ILIKE '%runtime handler%'
         OR msg ILIKE '%RuntimeHandler%' THEN 'runtime_handler'
    WHEN msg ILIKE '%network for sandbox%' OR msg ILIKE '%networkPlugin cni%'
         OR msg ILIKE '%plugin type=%' OR msg ILIKE '%cni%' OR msg ILIKE '% network: %'
        THEN 'cni'
    ELSE 'other' END;

-- A time span for a detail: "2026-12-01T09:57:04Z" or "… – 09:57:40Z" (the date once
-- when both ends share it).
CREATE OR REPLACE MACRO span_label(first_at, last_at) AS CASE
    WHEN first_at IS NULL AND last_at IS NULL THEN NULL
    WHEN last_at IS NULL OR first_at IS NULL OR first_at = last_at
        THEN strftime(coalesce(first_at, last_at), '%Y-%m-%dT%H:%M:%SZ')
    WHEN first_at::DATE = last_at::DATE
        THEN strftime(first_at, '%Y-%m-%dT%H:%M:%SZ') || ' – ' || strftime(last_at, '%H:%M:%SZ')
    ELSE strftime(first_at, '%Y-%m-%dT%H:%M:%SZ') || ' – '
         || strftime(last_at, '%Y-%m-%dT%H:%M:%SZ') END;

-- One Event (or several with the same reason and message) as a detail states it:
-- "Failed ×4, 2026-12-01T09:57:04Z – 09:57:40Z: Failed to pull image …".
CREATE OR REPLACE MACRO event_line(reason, message, count, first_at, last_at) AS
    reason || CASE WHEN count > 1 THEN ' ×' || count ELSE '' END
    || coalesce(', ' || span_label(first_at, last_at), '') || ': ' || message;

-- A message as a finding shows it: without the blank lines and spaces around it (a
-- container's termination message usually ends with a newline); NULL when nothing is left.
CREATE OR REPLACE MACRO clean_message(m) AS
    nullif(trim(m, ' ' || chr(9) || chr(10) || chr(13)), '');
