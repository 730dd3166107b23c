-- model: seed
-- Sub-reasons with their own advice: a finding whose detail starts with "<sub> — " gets this
-- advice instead of its cause's (`ktrace explain`). An init container's failure is named by
-- its own cause (e.g. run_container_error), whose advice applies.
(cause VARCHAR, sub VARCHAR, advice VARCHAR,
                                             PRIMARY KEY (cause, sub))
VALUES
    ('unschedulable', 'scheduler_error', 'the scheduler itself failed (PodScheduled=False SchedulerError), not the nodes: the message names the plugin and its error — a binding (pods/binding) that an admission webhook or policy refuses, an API error, a plugin''s own failure; fix what it names, the scheduler retries with back-off'),
    ('unschedulable', 'pv_missing', 'a claim of the pod is bound to a PersistentVolume that does not exist (deleted, or the claim restored without it): recreate the volume under that name with the claim in its claimRef, or delete and recreate the claim (the old volume''s data is gone with it)'),
    ('node_not_ready', 'kubelet_not_ready', 'the node''s kubelet itself reports it not Ready, for the reason in its message above (a container runtime or CNI network not ready: install or fix the network plugin, or the runtime, on that node); the scheduler places no pod there meanwhile'),
    ('node_not_ready', 'unreachable', 'the control plane no longer hears from the node''s kubelet (Ready=Unknown, Lease not renewed): check the machine, its kubelet and its network to the API server; once the NoExecute taint outlives its pods'' toleration (300 s by default) the taint-eviction controller deletes them'),
    ('image_pull', 'not_found', 'the registry has no such image or tag: check the name and tag (and the architecture) in the message'),
    ('image_pull', 'repository_missing', 'the repository does not exist at that registry (or is private and hides itself): check the image path, or add a pull secret'),
    ('image_pull', 'unauthorized', 'the registry refused the credentials: add or fix the pull secret (imagePullSecrets or the ServiceAccount''s)'),
    ('crash_loop', 'liveness_probe', 'the kubelet restarts the container because its liveness probe fails (exit 137 is its kill, not a crash): check what the probe calls and its timeouts; a slow start needs a startupProbe, not a laxer liveness probe'),
    ('crash_loop', 'startup_probe', 'the container does not pass its startup probe in time and is restarted: raise failureThreshold × periodSeconds to cover the real start, or fix what the probe calls'),
    ('image_pull', 'registry_unreachable', 'the node cannot reach the registry (DNS, connection or TLS, in the message): check the node''s DNS and egress to the registry, or a mirror'),
    ('image_pull', 'rate_limited', 'the registry rate-limits pulls: authenticate the pulls, use a mirror or pre-pull the image'),
    ('image_pull', 'invalid_name', 'the image reference is not valid: fix its spelling (registry/path:tag or @sha256:digest)'),
    ('image_pull', 'inspect_failed', 'the container runtime failed to inspect an image the pull policy says not to pull (ImageInspectError; no pull was tried): the runtime''s own error is in the message — a runtime fault or a runtime and shim that disagree (e.g. cri-dockerd against a newer Docker API), not the registry or the name; fix or upgrade the runtime on that node, or remove and pull the image again'),
    ('image_pull', 'never_pull', 'imagePullPolicy is Never and the image is not on the node: load it onto the node or change the policy'),
    ('image_pull', 'back_off', 'the kubelet is waiting before the next pull attempt; the earlier failure''s message says why (not recorded here)'),
    ('sandbox', 'cni', 'the network plugin failed to set up the pod''s network: check the CNI plugin''s pods and logs on the node named above'),
    ('sandbox', 'runtime_handler', 'the container runtime on the node has no handler for the pod''s RuntimeClass: configure it there, or use another RuntimeClass'),
    ('evicted', 'limit', 'the pod used more local storage than a limit of its own allows (the container''s ephemeral-storage limit, the pod''s total, or an emptyDir sizeLimit, named above): raise the limit or write less there (logs, temporary files, the emptyDir); the node was not short of disk'),
    ('evicted', 'node_condition', 'the kubelet refused the pod because the node was under the pressure named above: wait for it to clear, or place the pod elsewhere'),
    ('run_container_error', 'create', 'the runtime could not create the container, so it never started and has no logs: its message above names what failed — a volume''s mount it cannot read, a device, or a name an old container still holds; fix that on the node or in the storage, not the command'),
    ('readiness', 'readiness_gate', 'the containers are ready; the pod waits for the condition its readinessGates name, which another controller (a load balancer''s, a service mesh''s) must set True on it: that controller is not running or does not know this pod — check it, not the probes'),
    ('starting', 'post_start_hook', 'the container runs, but the kubelet reports it only once its postStart hook returns (the pod stays ContainerCreating and not Ready until then): a hook that waits or sleeps holds the pod — keep hooks short; move the wait into the application or an init container'),
    ('run_container_error', 'post_start_hook', 'the container''s postStart hook failed (its command, exit code and output above), so the kubelet killed the container and restarts it: fix the hook — it runs beside the entrypoint, with no guarantee the application is up yet, and without a terminal (a prompt reads end of file)'),
    ('namespace_content', 'discovery', 'the namespace controller cannot list an aggregated API (the group named above, e.g. metrics.k8s.io of metrics-server), so it cannot empty the namespace: bring that APIService''s backend back or delete the APIService (kubectl get apiservice); the deletion then resumes by itself — do not remove the namespace''s finalizer'),
    ('evicted', 'eviction_api', 'a planned disruption (kubectl drain, an autoscaler, a descheduler) asked the Eviction API and the budget named above allowed it; its owner makes a replacement, placed on another node while this one is cordoned')
