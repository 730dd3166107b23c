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
