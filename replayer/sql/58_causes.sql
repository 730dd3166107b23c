-- The causes of pods that do not run or get Ready, and of workloads that cannot make
-- them, with the score that ranks them (highest first) and what each means. A seed table:
-- change a ranking here, not in the analyses. Documented in docs/projections.md.
CREATE TABLE IF NOT EXISTS cause_scores (
    cause VARCHAR PRIMARY KEY, score INTEGER, meaning VARCHAR);
INSERT OR REPLACE INTO cause_scores VALUES
    ('admission', 93, 'the node''s kubelet rejected the pod at admission (status.reason OutOfcpu, OutOfmemory, OutOfpods, NodeAffinity, UnexpectedAdmissionError, NodeShutdown…; phase Failed)'),
    ('evicted', 92, 'the kubelet evicted the pod under node pressure (status.reason Evicted; the resource from its message; the node''s pressure condition)'),
    ('preempted', 91, 'the scheduler preempted the pod for a higher-priority one (Preempted Event, DisruptionTarget PreemptionByScheduler)'),
    ('not_created', 95, 'the ReplicaSet/Job cannot create its pods (FailedCreate: quota, admission webhook, Pod Security)'),
    ('unschedulable', 90, 'the scheduler finds no node (FailedScheduling, parsed into its reasons)'),
    ('rollout_stalled', 88, 'the Deployment exceeded its progress deadline (Progressing=False ProgressDeadlineExceeded)'),
    ('image_pull', 85, 'a container image cannot be pulled (ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull); the detail starts with the sub-reason read from the kubelet''s message (image_pull_patterns)'),
    ('oom_killed', 86, 'a container was killed for exceeding its memory limit (last termination reason OOMKilled), with the limit'),
    ('container_config', 85, 'a container cannot be configured (CreateContainerConfigError: missing ConfigMap, Secret or key)'),
    ('crash_loop', 84, 'a container keeps exiting and is restarted (CrashLoopBackOff, restarts, last exit code and reason)'),
    ('sandbox', 83, 'the pod''s sandbox cannot be created (FailedCreatePodSandBox: CNI network setup, RuntimeClass handler missing)'),
    ('run_container_error', 82, 'a container cannot be started (RunContainerError, StartError, exit 127/128)'),
    ('init_container', 80, 'an init container has not completed (waiting, running or failing)'),
    ('node_not_ready', 78, 'the pod''s node is not Ready or its Lease is not renewed'),
    ('node_pressure', 77, 'a node reports MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable (a node finding; evidence for its pods)'),
    ('volume_mount', 75, 'a volume cannot be attached or mounted (FailedMount, FailedAttachVolume)'),
    ('readiness', 70, 'containers run but the pod is not Ready (Unhealthy probe Events)'),
    ('scheduling_gated', 40, 'waiting on scheduling gates (PodScheduled=False SchedulingGated): held on purpose until the named gates are removed, not a failure'),
    ('starting', 20, 'still starting: scheduled, containers being created, no failure seen yet'),
    ('recording_gap', 30, 'an unseen stretch of the recording covers the moment judged'),
    ('unknown', 0, 'no evidence in the recording'),
    ('job_failed', 92, 'the Job failed (Failed condition: BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy, MaxFailedIndexesExceeded, FailedIndexes) — a terminal outcome, never stuck'),
    ('job_suspended', 10, 'the Job is suspended (Suspended=True, spec.suspend): it runs no pods until resumed — a state, not a failure'),
    ('statefulset_update_held', 87, 'the StatefulSet''s rolling update waits on a pod that is not Running and Ready'),
    ('daemonset_pods_missing', 86, 'the DaemonSet has fewer pods available than eligible nodes (FailedCreate, FailedPlacement, pods not Ready)'),
    ('storage_class_missing', 93, 'the claim names a StorageClass that does not exist (ProvisioningFailed: storageclass … not found)'),
    ('provisioning_failed', 91, 'the claim cannot be provisioned or bound (ProvisioningFailed, FailedBinding)'),
    ('external_provisioning', 60, 'the claim waits for an external provisioner (ExternalProvisioning) past the threshold'),
    ('waiting_for_consumer', 15, 'the claim binds when a pod using it is scheduled (WaitForFirstConsumer, WaitForPodScheduled) — a state, not a failure'),
    ('pvc_lost', 94, 'the claim lost its volume (phase Lost, ClaimLost): the data on it is gone'),
    ('pv_released', 12, 'the volume''s claim was deleted (phase Released): kept for an administrator with reclaim policy Retain; with Delete, not yet deleted by its provisioner'),
    ('pv_failed', 89, 'the volume''s reclamation failed (phase Failed: VolumeFailedDelete, VolumeFailedRecycle)');

-- What to look at for each cause (`ktrace explain` prints it under the finding).
CREATE TABLE IF NOT EXISTS cause_advice (cause VARCHAR PRIMARY KEY, advice VARCHAR);
INSERT OR REPLACE INTO cause_advice VALUES
    ('finalizers', 'find the controller that owns the finalizer (named above) and why it has not removed it; remove the finalizer by hand only if that controller is gone for good'),
    ('node_not_ready', 'check the node (kubelet, network, its Lease); nothing on it can confirm the pod stopped — force-delete only once the node is really gone'),
    ('node_deleted', 'the node is gone: the pod garbage collector force-deletes its pods; if it does not, check kube-controller-manager'),
    ('containers_not_exiting', 'the process ignores SIGTERM: handle it, or lower terminationGracePeriodSeconds; the kubelet kills it at the deadline'),
    ('prestop_hook', 'the preStop hook has not returned: check what it waits for; it counts against the grace period'),
    ('volume_detach', 'check the CSI driver / attacher for the VolumeAttachment named above'),
    ('foreground_dependents', 'the deepest dependent named above blocks the chain: resolve its own cause'),
    ('namespace_content', 'the objects named above must go first; kinds ktrace did not record are listed — look at them with kubectl'),
    ('recording_gap', 'the recording did not see this stretch: what happened then is unknown — check the cluster itself'),
    ('unknown', 'no evidence in the recording: look at the kubelet and controller logs'),
    ('not_created', 'the controller cannot create pods: fix the quota, admission webhook or Pod Security rule in the message'),
    ('unschedulable', 'no node fits: compare the pod''s requests, nodeSelector/affinity, tolerations and claims with the nodes (reasons above)'),
    ('rollout_stalled', 'the new pods do not become available: see their own causes'),
    ('image_pull', 'check the image name and tag, the registry''s reachability and the pull secret'),
    ('container_config', 'create the ConfigMap, Secret or key named above, or fix the reference'),
    ('crash_loop', 'the container ran and exited: its termination message is above when it wrote one; read the previous run''s logs (kubectl logs --previous)'),
    ('oom_killed', 'the container used more memory than its limit: raise the limit or find what grows (the limit and whether the owner''s template changed it are above)'),
    ('run_container_error', 'the container never started, so it has no logs: the runtime''s message above names the command or executable it could not run — fix the command/args or the image''s entrypoint'),
    ('init_container', 'the init container named above must finish before the app containers start: still running, it waits for something its logs name (kubectl logs -c NAME); otherwise its own failure is named first above'),
    ('sandbox', 'the pod''s sandbox cannot be created: for CNI errors check the network plugin on the node (its pods and logs); for a missing runtime handler, the RuntimeClass''s handler must be configured in the node''s container runtime'),
    ('evicted', 'the node ran short of the resource named above: set requests that match the usage (pods using more than they request are evicted first), or give the node more of it; the replacement pod, if any, is a new pod'),
    ('admission', 'the kubelet refused the pod it was bound to (usually a pod placed with spec.nodeName past the scheduler, or a race with other pods): let the scheduler place it, or fix what the message names'),
    ('preempted', 'a higher-priority pod took its place: give it a PriorityClass that matches its importance, or add capacity'),
    ('scheduling_gated', 'the pod waits until the gates named above are removed from spec.schedulingGates (by the controller that added them): nothing failed'),
    ('node_pressure', 'the node is short of the resource named above: the kubelet evicts pods and refuses new ones while the condition holds — free or add the resource'),
    ('volume_mount', 'check the volume named above (its ConfigMap/Secret/PVC, the CSI driver)'),
    ('readiness', 'the readiness probe fails: check what it calls and the app''s startup time'),
    ('starting', 'still starting: wait, or look at image pulls and volume mounts if it takes long'),
    ('job_failed', 'read the last failed pod''s exit code and message above (kubectl logs on it if it is kept); fix the cause, then create the Job again — a failed Job is not retried'),
    ('job_suspended', 'resume it when wanted: kubectl patch job NAME -p ''{"spec":{"suspend":false}}'''),
    ('statefulset_update_held', 'the pod named above must become Ready first: see its own cause (kubectl explain pod/NAME); a broken revision needs a rollback and, with OrderedReady, deleting the stuck pod'),
    ('daemonset_pods_missing', 'see the controller''s message above and the missing pods'' own causes (node taints, resources, FailedCreate)'),
    ('storage_class_missing', 'create the StorageClass named above, or set the claim''s storageClassName to one that exists (kubectl get storageclass); a claim''s class cannot be changed: recreate it'),
    ('provisioning_failed', 'read the provisioner''s message above; check the StorageClass parameters and the provisioner''s logs, or create a matching PersistentVolume'),
    ('external_provisioning', 'check that the provisioner named above is running and registered (its CSI controller pod and logs)'),
    ('waiting_for_consumer', 'nothing to do until a pod uses the claim; if one does and stays Pending, see the pod''s own cause'),
    ('pvc_lost', 'the volume bound to the claim is gone: restore it from a backup, or delete and recreate the claim'),
    ('pv_released', 'Retain: reclaim it by hand (copy what is needed, then delete the volume, or clear spec.claimRef to make it Available again); Delete: check the provisioner''s logs for why it has not deleted the volume'),
    ('pv_failed', 'read the message above and the provisioner''s logs; delete the backing storage by hand if needed, then the volume');

-- Sub-reasons with their own advice: a finding whose detail starts with "<sub> — " gets this
-- advice instead of its cause's (`ktrace explain`). An init container's failure is named by
-- its own cause (e.g. run_container_error), whose advice applies.
CREATE OR REPLACE TABLE cause_sub_advice (cause VARCHAR, sub VARCHAR, advice VARCHAR,
                                             PRIMARY KEY (cause, sub));
INSERT OR REPLACE INTO cause_sub_advice VALUES
    ('image_pull', 'not_found', 'the registry has no such image or tag: check the name and tag (and the architecture) in the message'),
    ('image_pull', 'repository_missing', 'the repository does not exist at that registry (or is private and hides itself): check the image path, or add a pull secret'),
    ('image_pull', 'unauthorized', 'the registry refused the credentials: add or fix the pull secret (imagePullSecrets or the ServiceAccount''s)'),
    ('crash_loop', 'liveness_probe', 'the kubelet restarts the container because its liveness probe fails (exit 137 is its kill, not a crash): check what the probe calls and its timeouts; a slow start needs a startupProbe, not a laxer liveness probe'),
    ('crash_loop', 'startup_probe', 'the container does not pass its startup probe in time and is restarted: raise failureThreshold × periodSeconds to cover the real start, or fix what the probe calls'),
    ('image_pull', 'registry_unreachable', 'the node cannot reach the registry (DNS, connection or TLS, in the message): check the node''s DNS and egress to the registry, or a mirror'),
    ('image_pull', 'rate_limited', 'the registry rate-limits pulls: authenticate the pulls, use a mirror or pre-pull the image'),
    ('image_pull', 'invalid_name', 'the image reference is not valid: fix its spelling (registry/path:tag or @sha256:digest)'),
    ('image_pull', 'never_pull', 'imagePullPolicy is Never and the image is not on the node: load it onto the node or change the policy'),
    ('image_pull', 'back_off', 'the kubelet is waiting before the next pull attempt; the earlier failure''s message says why (not recorded here)'),
    ('sandbox', 'cni', 'the network plugin failed to set up the pod''s network: check the CNI plugin''s pods and logs on the node named above'),
    ('sandbox', 'runtime_handler', 'the container runtime on the node has no handler for the pod''s RuntimeClass: configure it there, or use another RuntimeClass'),
    ('evicted', 'node_condition', 'the kubelet refused the pod because the node was under the pressure named above: wait for it to clear, or place the pod elsewhere');

-- The sub-reason at the head of a finding's detail ("not_found — …"), NULL when none.
CREATE OR REPLACE MACRO cause_sub(detail) AS
    nullif(regexp_extract(detail, '^([a-z_]+) — ', 1), '');

-- The advice for one finding: its sub-reason's, else the advice of the cause its sub-reason
-- names (an init container's own failure), else its cause's.
CREATE OR REPLACE MACRO finding_advice(c, detail) AS coalesce(
    (SELECT advice FROM cause_sub_advice s WHERE s.cause = c AND s.sub = cause_sub(detail)),
    (SELECT advice FROM cause_advice a WHERE a.cause = cause_sub(detail)),
    (SELECT advice FROM cause_advice a WHERE a.cause = c));

-- What the kubelet's and the registry's messages say about a failed pull, read in `rank`
-- order (first match wins): the kubelet's reason constants (pkg/kubelet/images/types.go:
-- ErrImageNeverPull, InvalidImageName) and the patterns registries and runtimes write
-- (containerd "…: not found", the distribution spec's error codes MANIFEST_UNKNOWN,
-- NAME_UNKNOWN, UNAUTHORIZED, DENIED, TOOMANYREQUESTS, Docker Hub's "pull access denied").
-- A message matches `pattern` (ILIKE) or its waiting/Event reason equals `reason`.
CREATE OR REPLACE TABLE image_pull_patterns (
    sub VARCHAR, rank INTEGER, reason VARCHAR, pattern VARCHAR, PRIMARY KEY (sub, rank));
INSERT OR REPLACE INTO image_pull_patterns VALUES
    ('never_pull', 1, 'ErrImageNeverPull', '%is not present with pull policy of Never%'),
    ('never_pull', 2, NULL, '%ErrImageNeverPull%'),
    ('invalid_name', 3, 'InvalidImageName', '%invalid reference format%'),
    ('invalid_name', 4, NULL, '%InvalidImageName%'),
    ('invalid_name', 5, NULL, '%Failed to apply default image tag%'),
    ('invalid_name', 6, NULL, '%couldn''t parse image%'),
    ('rate_limited', 7, NULL, '%toomanyrequests%'),
    ('rate_limited', 8, NULL, '%429 Too Many Requests%'),
    ('rate_limited', 9, NULL, '%pull rate limit%'),
    ('repository_missing', 10, NULL, '%repository does not exist%'),
    ('repository_missing', 11, NULL, '%NAME_UNKNOWN%'),
    ('repository_missing', 12, NULL, '%name unknown%'),
    ('repository_missing', 13, NULL, '%repository % not found%'),
    ('unauthorized', 14, NULL, '%unauthorized%'),
    ('unauthorized', 15, NULL, '%authentication required%'),
    ('unauthorized', 16, NULL, '%403 Forbidden%'),
    ('unauthorized', 17, NULL, '%denied%'),
    -- the registry cannot be reached at all (containerd's resolver: DNS, TCP, TLS), checked
    -- before not_found: these messages name no image problem
    ('registry_unreachable', 18, NULL, '%no such host%'),
    ('registry_unreachable', 19, NULL, '%dial tcp%connection refused%'),
    ('registry_unreachable', 20, NULL, '%dial tcp%i/o timeout%'),
    ('registry_unreachable', 21, NULL, '%x509: certificate%'),
    ('not_found', 22, NULL, '%manifest unknown%'),
    ('not_found', 23, NULL, '%not found%'),
    ('not_found', 24, NULL, '%NotFound%'),
    ('back_off', 25, 'ImagePullBackOff', '%Back-off pulling image%');

-- image_pull_sub(reason, message): the sub-reason of a failed pull ('unknown' when no
-- pattern matches); `message` is every message read for it, joined.
CREATE OR REPLACE MACRO image_pull_sub(pull_reason, pull_message) AS coalesce((
    SELECT p.sub FROM image_pull_patterns p
    WHERE p.reason = pull_reason OR pull_message ILIKE p.pattern
    ORDER BY p.rank LIMIT 1), 'unknown');

-- The reasons the kubelet writes into status.reason when it rejects a pod at admission
-- (phase Failed), from pkg/kubelet/lifecycle/predicate.go (OutOf<resource>, the scheduler
-- plugins' names as predicate failures, InvalidNodeInfo, UnexpectedAdmissionError…),
-- lifecycle/handlers.go, cm/admission, cm/topologymanager, sysctl and nodeshutdown.
-- (Evicted at admission — "The node had condition: [X]" — is the evicted cause.)
CREATE OR REPLACE TABLE kubelet_admission_reasons (reason VARCHAR PRIMARY KEY,
                                                      meaning VARCHAR);
INSERT OR REPLACE INTO kubelet_admission_reasons VALUES
    ('OutOfcpu', 'the node''s allocatable cpu is taken by the pods already on it'),
    ('OutOfmemory', 'the node''s allocatable memory is taken'),
    ('OutOfephemeral-storage', 'the node''s allocatable ephemeral storage is taken'),
    ('OutOfpods', 'the node already runs its maximum number of pods'),
    ('NodeAffinity', 'the pod''s nodeSelector/affinity does not match the node it was bound to'),
    ('NodeName', 'the pod names another node'),
    ('NodePorts', 'a hostPort the pod asks for is in use on the node'),
    ('TaintToleration', 'the pod does not tolerate a NoExecute/NoSchedule taint of the node'),
    ('InvalidNodeInfo', 'the kubelet could not read its own node'),
    ('PodOSSelectorNodeLabelDoesNotMatch', 'the pod''s kubernetes.io/os selector does not match the node'),
    ('PodOSNotSupported', 'the pod''s spec.os does not match the node'),
    ('InitContainerRestartPolicyForbidden', 'the node does not support sidecar init containers'),
    ('SupplementalGroupsPolicyNotSupported', 'the node does not support the pod''s supplementalGroupsPolicy'),
    ('UnexpectedAdmissionError', 'a device plugin or resource manager failed to allocate for the pod'),
    ('UnknownReason', 'the kubelet''s predicates failed without a reason'),
    ('UnexpectedPredicateFailureType', 'the kubelet''s predicates failed in an unexpected way'),
    ('TopologyAffinityError', 'the topology manager found no NUMA alignment for the pod''s resources'),
    ('EmptyPodSharedPoolError', 'the cpu manager has no shared cpus left for the pod'),
    ('SysctlForbidden', 'the pod asks for a sysctl the kubelet does not allow'),
    ('AppArmor', 'the pod''s AppArmor profile cannot be enforced on the node'),
    ('PodFeatureUnsupported', 'the node''s kubelet does not support a feature the pod uses'),
    ('PodLevelResourcesNotSupported', 'the node does not support pod-level resources'),
    ('NodeShutdown', 'the node was shutting down');

-- admission_reason(reason): whether a Failed pod's status.reason is a kubelet rejection
-- (any OutOf<resource>, extended resources included).
CREATE OR REPLACE MACRO admission_reason(r) AS
    starts_with(r, 'OutOf') OR r IN (SELECT reason FROM kubelet_admission_reasons);
