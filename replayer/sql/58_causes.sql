-- The causes of pods that do not run or get Ready, and of workloads that cannot make
-- them, with the score that ranks them (highest first) and what each means. A seed table:
-- change a ranking here, not in the analyses. Documented in docs/projections.md.
CREATE TABLE IF NOT EXISTS cause_scores (
    cause VARCHAR PRIMARY KEY, score INTEGER, meaning VARCHAR);
INSERT OR REPLACE INTO cause_scores VALUES
    ('not_created', 95, 'the ReplicaSet/Job cannot create its pods (FailedCreate: quota, admission webhook, Pod Security)'),
    ('unschedulable', 90, 'the scheduler finds no node (FailedScheduling, parsed into its reasons)'),
    ('rollout_stalled', 88, 'the Deployment exceeded its progress deadline (Progressing=False ProgressDeadlineExceeded)'),
    ('image_pull', 85, 'a container image cannot be pulled (ErrImagePull, ImagePullBackOff, InvalidImageName)'),
    ('container_config', 85, 'a container cannot be configured (CreateContainerConfigError: missing ConfigMap, Secret or key)'),
    ('crash_loop', 84, 'a container keeps exiting and is restarted (CrashLoopBackOff, restarts, last exit code and reason)'),
    ('run_container_error', 82, 'a container cannot be started (RunContainerError, StartError, exit 127/128)'),
    ('init_container', 80, 'an init container has not completed (waiting, running or failing)'),
    ('node_not_ready', 78, 'the pod''s node is not Ready or its Lease is not renewed'),
    ('volume_mount', 75, 'a volume cannot be attached or mounted (FailedMount, FailedAttachVolume)'),
    ('readiness', 70, 'containers run but the pod is not Ready (Unhealthy probe Events)'),
    ('starting', 20, 'still starting: scheduled, containers being created, no failure seen yet'),
    ('recording_gap', 30, 'an unseen stretch of the recording covers the moment judged'),
    ('unknown', 0, 'no evidence in the recording');

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
    ('crash_loop', 'read the previous run''s logs (kubectl logs --previous); exit 137 with OOMKilled means the memory limit is too low'),
    ('run_container_error', 'the runtime cannot start the container: check the command/entrypoint (exit 127: not found; 128: invalid)'),
    ('init_container', 'the init container named above must finish first: read its logs'),
    ('volume_mount', 'check the volume named above (its ConfigMap/Secret/PVC, the CSI driver)'),
    ('readiness', 'the readiness probe fails: check what it calls and the app''s startup time'),
    ('starting', 'still starting: wait, or look at image pulls and volume mounts if it takes long');
