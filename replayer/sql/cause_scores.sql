-- model: seed
-- Every cause the analyses name — of pods that do not run or get Ready, of workloads that
-- cannot make them, of objects stuck in deletion — with the score that ranks them (highest
-- first), what each means, and for some a second score for the situation variant_when
-- names (cause_score). A seed table: change a ranking here, not in the analyses.
-- Documented in docs/projections.md.
(cause VARCHAR PRIMARY KEY, score INTEGER, meaning VARCHAR, variant_score INTEGER,
 variant_when VARCHAR)
VALUES
    ('admission', 93, 'the node''s kubelet rejected the pod at admission (status.reason OutOfcpu, OutOfmemory, OutOfpods, NodeAffinity, UnexpectedAdmissionError, NodeShutdown…; phase Failed)', NULL, NULL),
    ('evicted', 92, 'the pod was evicted: by the kubelet under node pressure (status.reason Evicted; the resource from its message; the node''s pressure condition) or through the Eviction API (DisruptionTarget EvictionByEvictionAPI: a drain, with the budget that allowed it)', NULL, NULL),
    ('drain_blocked', 79, 'a cordoned node''s drain is held: pods still on it whose PodDisruptionBudget allows 0 disruptions (the Eviction API refuses them and writes nothing; the evidence is the node''s version and the budget''s)', NULL, NULL),
    ('preempted', 91, 'the scheduler preempted the pod for a higher-priority one (Preempted Event, DisruptionTarget PreemptionByScheduler)', NULL, NULL),
    ('not_created', 95, 'the ReplicaSet/Job cannot create its pods (FailedCreate: quota, admission webhook, Pod Security)', NULL, NULL),
    ('unschedulable', 90, 'the scheduler finds no node (FailedScheduling, parsed into its reasons)', NULL, NULL),
    ('rollout_stalled', 88, 'the Deployment exceeded its progress deadline (Progressing=False ProgressDeadlineExceeded)', NULL, NULL),
    ('image_pull', 85, 'a container image cannot be pulled (ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull); the detail starts with the sub-reason read from the kubelet''s message (image_pull_patterns)', NULL, NULL),
    ('oom_killed', 86, 'a container was killed for exceeding its memory limit (last termination reason OOMKilled), with the limit', NULL, NULL),
    ('container_config', 85, 'a container cannot be configured (CreateContainerConfigError: missing ConfigMap, Secret or key)', NULL, NULL),
    ('crash_loop', 84, 'a container keeps exiting and is restarted (CrashLoopBackOff, restarts, last exit code and reason)', NULL, NULL),
    ('sandbox', 83, 'the pod''s sandbox cannot be created (FailedCreatePodSandBox: CNI network setup, RuntimeClass handler missing)', NULL, NULL),
    ('run_container_error', 82, 'a container cannot be started (RunContainerError, StartError, exit 127/128)', NULL, NULL),
    ('init_container', 80, 'an init container has not completed (waiting, running or failing)', NULL, NULL),
    ('node_not_ready', 78, 'the pod''s node is not Ready or its Lease is not renewed', 90, 'the object is stuck in deletion: nothing on the node can confirm it stopped'),
    ('node_pressure', 77, 'a node reports MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable (a node finding; evidence for its pods)', NULL, NULL),
    ('volume_mount', 75, 'a volume cannot be attached or mounted (FailedMount, FailedAttachVolume)', NULL, NULL),
    ('readiness', 70, 'containers run but the pod is not Ready (Unhealthy probe Events)', NULL, NULL),
    ('scheduling_gated', 40, 'waiting on scheduling gates (PodScheduled=False SchedulingGated): held on purpose until the named gates are removed, not a failure', NULL, NULL),
    ('starting', 20, 'still starting: scheduled, containers being created, no failure seen yet', NULL, NULL),
    ('recording_gap', 30, 'an unseen stretch of the recording covers the moment judged', 95, 'a stuck deletion''s object was damaged after its last record read: no relist followed, its fate is unknown'),
    ('unknown', 0, 'no evidence in the recording', NULL, NULL),
    ('job_failed', 92, 'the Job failed (Failed condition: BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy, MaxFailedIndexesExceeded, FailedIndexes) — a terminal outcome, never stuck', NULL, NULL),
    ('job_suspended', 10, 'the Job is suspended (Suspended=True, spec.suspend): it runs no pods until resumed — a state, not a failure', NULL, NULL),
    ('statefulset_update_held', 87, 'the StatefulSet''s rolling update waits on a pod that is not Running and Ready', NULL, NULL),
    ('daemonset_pods_missing', 86, 'the DaemonSet has fewer pods available than eligible nodes (FailedCreate, FailedPlacement, pods not Ready)', NULL, NULL),
    ('storage_class_missing', 93, 'the claim names a StorageClass that does not exist (ProvisioningFailed: storageclass … not found)', NULL, NULL),
    ('provisioning_failed', 91, 'the claim cannot be provisioned or bound (ProvisioningFailed, FailedBinding)', NULL, NULL),
    ('external_provisioning', 60, 'the claim waits for an external provisioner (ExternalProvisioning) past the threshold', NULL, NULL),
    ('waiting_for_consumer', 15, 'the claim binds when a pod using it is scheduled (WaitForFirstConsumer, WaitForPodScheduled) — a state, not a failure', NULL, NULL),
    ('pvc_lost', 94, 'the claim lost its volume (phase Lost, ClaimLost): the data on it is gone', NULL, NULL),
    ('pv_released', 12, 'the volume''s claim was deleted (phase Released): kept for an administrator with reclaim policy Retain; with Delete, not yet deleted by its provisioner', NULL, NULL),
    ('pv_failed', 89, 'the volume''s reclamation failed (phase Failed: VolumeFailedDelete, VolumeFailedRecycle)', NULL, NULL),
    ('node_deleted', 100, 'the stuck pod''s node was deleted', NULL, NULL),
    ('foreground_dependents', 85, 'a foreground deletion waits on blocking dependents (the deepest named)', NULL, NULL),
    ('namespace_content', 85, 'a deleted namespace still holds objects or its deletion conditions report a failure', NULL, NULL),
    ('finalizers', 80, 'finalizers still on the object, each with who added it (and the pods or claims a protection finalizer waits for)', 50, 'the pod''s containers still run'),
    ('prestop_hook', 70, 'a preStop hook has not returned and containers still run (FailedPreStopHook Event)', 55, 'no FailedPreStopHook Event'),
    ('containers_not_exiting', 60, 'containers still run past the grace period (ExceededGracePeriod, FailedKillPod Events)', 45, 'no kubelet Event'),
    ('volume_detach', 60, 'a volume cannot be unmounted or detached (FailedUnMount, FailedDetachVolume, FailedMapVolume)', 40, 'only a VolumeAttachment of the pod''s claims still attached to its node')
