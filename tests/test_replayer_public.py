"""ktrace on data it did not make: public pod objects, watch output and Events pasted in
issue threads or recorded by other projects (tests/data/public/, provenance in SOURCES.md),
against what an expert reads from the raw data (EXPECTED.md, written from the data)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replayer import db
from replayer.analyses.stuck import stuck
from replayer.replay import import_captures
from tests.replayer_data import rows

PUBLIC = Path(__file__).parent / "data" / "public"
# file → {(kind, name): (top cause, what its detail must say)}; files not listed here must
# report nothing stuck (a pod already running, one 0 s old, deletions not past their deadline)
EXPECTED: dict[str, dict[tuple[str, str], tuple[str, str]]] = {
    "unschedulable-memory-1": {("Pod", "foo"): ("unschedulable", "insufficient_memory")},
    "unschedulable-cpu-1": {("Pod", "ticktock1-log-v1-67468fc4cf-7sjhq"):
                            ("unschedulable", "insufficient_cpu")},
    "unschedulable-taint-1": {("Pod", "apache-7f6fddb7df-q229r"):
                              ("unschedulable", "untolerated_taint")},
    "unschedulable-taint-2": {
        ("Pod", "ohsu-7ffd6bcb7f-mnsjf"): ("unschedulable", "untolerated_taint"),
        ("Pod", "organization-violations-scheduler-29018065-v4648"):
            ("unschedulable", "untolerated_taint")},
    "unschedulable-taint-3": {("Pod", "nginx-with-toleration-84559fbfc4-dl7tz"):
                              ("unschedulable", "untolerated_taint")},
    "unschedulable-pvc-1": {("Pod", "drupal-79f84f8697-rmmzw"): ("unschedulable", "unbound_pvc")},
    "unschedulable-affinity-1": {("Pod", "unnamed-klotho-pod"):
                                 ("unschedulable", "node_selector_mismatch")},
    "image-pull-1": {("Pod", "foo"): ("image_pull", "nginx:1.13-invalid")},
    "image-pull-2": {("Pod", "foo-3789350985-pubfill"): ("image_pull", "ImagePullBackOff")},
    # its last watch row (all 7 are loaded: rows without resourceVersion are states, not
    # repeats of one version)
    "image-pull-3": {("Pod", "nginx-d645d84b6-ftbwc"): ("image_pull", "ImagePullBackOff")},
    "run-container-error-1": {("Pod", "foo"): ("run_container_error", "exit 127")},
    "crash-loop-1": {("Pod", "crashloop"): ("crash_loop", "last exit 1 (Error)")},
    "crash-loop-2": {("Pod", "dns-example"): ("crash_loop", "last exit 0 (Completed)")},
    "crash-loop-3": {("Pod", "nsapp-fa868e46640f566de09528-0"): ("crash_loop", "617 restarts")},
    "crash-loop-oom-2": {("Pod", "adsf-78687dd59f-8w42g"): ("oom_killed", "OOMKilled")},
    "container-config-1": {("Pod", "aegis-workload-demo-76f5f7dc46-vfldl"):
                           ("container_config", "couldn't find key VALUE in Secret")},
    "init-container-config-1": {("Pod", "sample-mychart-6bfc89db65-j9g9z"):
                                ("container_config", 'secrets "my-password" not found')},
    "init-crash-1": {("Pod", "unnamed-rtf-app-pod"): ("init_container", "init container init")},
    "volume-mount-1": {("Pod", "besu-node-bootnode-1-0"): ("volume_mount", "besu-genesis")},
    "readiness-1": {("Pod", "podinfo-9589d9bb-dqjbd"): ("readiness", "probe failed")},
    "readiness-2": {("Pod", "gravity-site-xxxxxx"): ("readiness", "statuscode: 503")},
    "not-created-quota-1": {("ReplicaSet", "coder-benzo-my-workspace-6df987574"):
                            ("not_created", "exceeded quota")},
    "sandbox-cni-1": {("Pod", "nfs-client-provisioner-59c5f46f5-d4nds"):
                      ("sandbox", 'plugin type="calico" failed')},
    "init-start-error-1": {("Pod", "unnamed-wordpress-pod"):
                           ("init_container", "executable file not found in $PATH")},
    # issue 25: Jobs and claims (failed Jobs, job-failed-backoff-*, are finished: not stuck)
    "job-not-created-sa-1": {("Job", "fluffy"): ("not_created", 'serviceaccount "idontexist"')},
    # the newer volume's only time is the data's end: not yet threshold_s old (EXPECTED.md)
    "pv-released-1": {("PersistentVolume", "pvc-05ab5701-834e-4181-8401-d02ce444f3f6"):
                      ("pv_released", "reclaim policy Delete")},
    "pvc-storage-class-missing-1": {
        ("PersistentVolumeClaim", "storage0-data-fastdfs-group0-storage0-0"):
            ("storage_class_missing", 'StorageClass "fast" does not exist')},
    "pvc-storage-class-missing-2": {
        ("Pod", "prometheus-0"): ("unschedulable", "unbound_pvc"),
        ("PersistentVolumeClaim", "prometheus-data-prometheus-0"):
            ("storage_class_missing", 'StorageClass "standard" does not exist')},
    # the catalogue's rows on public data (docs/causes.md); not listed, so nothing stuck:
    # volume-multi-attach-1 (the attach succeeded and the container started after the
    # Multi-Attach), pvc-external-provisioning-2 (15 s of waiting, under the threshold),
    # pvc-wait-for-consumer-1, job-suspended-1 (states, not failures), node-memory-pressure-1,
    # node-network-unavailable-1
    "image-pull-invalid-name-1": {("Pod", "hello-release-hello-world-76bc67557d-4g565"):
                                  ("image_pull", "invalid_name — hello-world: InvalidImageName")},
    "image-pull-invalid-name-2": {("Pod", "12factor-demo-adcc188eef-0"):
                                  ("image_pull", "invalid_name — InspectFailed ×3")},
    "volume-mount-2": {("Pod", "unnamed-kvaps-pod"):
                       ("volume_mount", "volume attachment is being deleted; FailedMount ×544")},
    "volume-attach-1": {("Pod", "miop-mysql-app-0"):
                        ("volume_mount", "AttachVolume.Attach failed")},
    "pvc-external-provisioning-1": {("PersistentVolumeClaim", "unnamed-nacos-pvc"):
                                    ("external_provisioning", 'provisioner "fuseim.pri/ifs"')},
    "rollout-stalled-1": {("Deployment", "xxx-gui"):
                          ("rollout_stalled", 'ReplicaSet "xxx-gui-5cd74fc875" has timed out')},
    "not-created-podsecurity-1": {("Job", "tekton-resource-pruner-mnf9n-27829440"):
                                  ("not_created", 'violates PodSecurity "restricted:latest"')},
    # the runtime could not create the container: a volume's mount, not a command
    "create-container-error-1": {("Pod", "unnamed-image-registry-pod"):
                                 ("run_container_error", "create — unnamed-registry-container: "
                                  "CreateContainerError, failed to resolve symlink")},
    "post-start-hook-1": {("Pod", "fedora389ds-74fc7d99b6-t2zrl"):
                          ("run_container_error", "post_start_hook — FailedPostStartHook")},
    # a Lost claim names the volume it was bound to
    "pvc-lost-1": {("PersistentVolumeClaim", "pvcclaim6"):
                   ("pvc_lost", "phase Lost — its volume demosc5-a7e8483a-cd6b-11e8-a0ae-0242ac110010")},
    # the runtime could not inspect an image it was not to pull: not the registry, not the name
    "image-inspect-error-1": {("Pod", "cnb-reloader-5db69cb8c6-2bqqv"):
                              ("image_pull", "inspect_failed — InspectFailed ×8")},
    # the runtime's CRI error RegistryUnavailable in the kubelet's Failed Event
    "image-registry-unavailable-1": {("Pod", "unnamed-kube-image-keeper-pod"):
                                     ("image_pull", "registry_unreachable — Failed")},
    # the runtime's signature policy refused the image: not a back-off to wait out
    "image-signature-rejected-1": {("Pod", "pod"): ("image_pull", "signature_rejected — container")},
    # common failures from sources not used before: a GPU no node has free beside a cordoned
    # node; a webhook's TLS Secret cert-manager has not issued
    "unschedulable-gpu-1": {("Pod", "gpu-gtx-1050"):
                            ("unschedulable", "node_unschedulable, insufficient_nvidia.com/gpu")},
    "volume-mount-secret-1": {("Pod", "alidns-webhook-79f76779c7-8chd8"):
                              ("volume_mount", 'secret "alidns-webhook-webhook-tls" not found')},
    # not listed: namespace-discovery-failed-1 (5 s past its deletion in the data: under the
    # margin, judged below), node-not-ready-1 (its node_not_ready is 0 s old at the data's
    # end, under the threshold: judged below)
}
SPECIMENS = sorted(p.stem for p in PUBLIC.glob("*.json"))


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("public")
    empty = folder / "empty.duckdb"
    db.open_db(str(empty)).close()  # the schema once; each specimen gets a copy
    cons = {}
    for name in SPECIMENS:
        path = folder / f"{name}.duckdb"
        shutil.copy(empty, path)
        con = db.open_db(str(path))
        import_captures([str(PUBLIC / f"{name}.json")], con, cluster="public")
        cons[name] = con
    yield cons
    for con in cons.values():
        con.close()


def test_every_specimen_is_judged():
    assert set(EXPECTED) <= set(SPECIMENS) and len(SPECIMENS) >= 20


@pytest.mark.parametrize("name", SPECIMENS)
def test_stuck_names_what_an_expert_reads(loaded, name: str):
    found = {(kind, obj): (top, detail) for kind, obj, top, detail in rows(
        loaded[name], "SELECT kind, name, top_cause, causes[1].detail FROM problems")}
    expected = EXPECTED.get(name, {})
    assert set(found) == set(expected)
    for key, (cause, says) in expected.items():
        assert found[key][0] == cause, found[key]
        assert says in found[key][1], found[key]


@pytest.mark.parametrize("name", SPECIMENS)
def test_no_time_is_made_up(loaded, name: str):
    """A pod stub without timestamps takes a time from the capture, never the epoch."""
    assert rows(loaded[name], "SELECT count(*) FROM raw_events "
                              "WHERE received_at < TIMESTAMP '2000-01-01'") == [(0,)]


def test_a_container_that_never_ran_has_no_running_step(loaded):
    steps = [s for (s,) in rows(loaded["run-container-error-1"],
                                "SELECT step FROM pod_transitions ORDER BY step_no")]
    assert "running" not in steps and "restarted" in steps


def test_a_pod_first_seen_mid_life_gets_derived_steps_and_no_verdict(loaded):
    con = loaded["crash-loop-oom-1"]
    steps = rows(con, "SELECT step, time::VARCHAR, derived FROM pod_transitions "
                      "ORDER BY step_no")
    assert steps[0] == ("created", "2020-11-26 12:30:38", True)  # its startTime
    assert ("first_seen", "2021-01-18 10:31:57", False) in steps
    restarted = rows(con, "SELECT detail FROM pod_transitions WHERE step = 'restarted'")
    assert restarted == [("jumpserver-reader: 21 restarts before first seen; last exit 137 "
                          "(OOMKilled)",)]
    assert rows(con, "SELECT count(*) FROM gaps WHERE category = 'slow'") == [(0,)]


# file → the exact finding rows (kind, name, problem, cause, detail, evidence as record
# positions in the file, 1-based) of pods that ended (pod_outcomes_at) or are held
# (problems) by the causes issue 25 added; read from the raw data (EXPECTED.md)
OUTCOMES: dict[str, list[tuple]] = {
    "evicted-1": [("outcome", "unnamed-cstor-pool-pod", "evicted",
                   "memory — Evicted: The node was low on resource: memory. Container "
                   "cstor-pool-mgmt was using 27484Ki, which exceeds its request of 0. Container "
                   "maya-exporter was using 9736Ki, which exceeds its request of 0. Container "
                   "cstor-pool was using 51480Ki, which exceeds its request of 0. — the node's "
                   "MemoryPressure condition: not recorded", [1])],
    "evicted-2": [
        ("outcome", "egg-unnamed-1", "evicted",
         "memory — Evicted: The node was low on resource: memory. Container egg was using "
         "5053216Ki, which exceeds its request of 0. — the node's MemoryPressure condition: "
         "not recorded", [3]),
        ("outcome", "egg-unnamed-2", "evicted",
         "node_condition — Evicted: The node had condition: [MemoryPressure]. — the node's "
         "MemoryPressure condition: not recorded", [7])],
    "evicted-3": [("outcome", "maintenancepage-765549c948-p76fh", "evicted",
                   "ephemeral-storage — Evicted: The node was low on resource: ephemeral-storage. "
                   "Threshold quantity: 1Gi, available: 0. — node kaapana's DiskPressure "
                   "condition: not recorded", [1])],
    "evicted-4": [("outcome", "infras-logstash-d484d57fc-rkx95", "evicted",
                   "ephemeral-storage — Evicted: The node was low on resource: ephemeral-storage. "
                   "Threshold quantity: 30Gi, available: 24094024Ki. Container infras-logstash "
                   "was using 2456Ki, request is 0, has larger consumption of ephemeral-storage. "
                   "— node 192.168.250.5's DiskPressure condition: not recorded", [1])],
    # a limit of the pod's own, not a shortage of the node
    "evicted-5": [("outcome", "kubeplus-deployment-dbd87546-kttck", "evicted",
                   'limit — Evicted: Container consumerui exceeded its local ephemeral storage '
                   'limit "20Mi". — its own ephemeral-storage limit, not a shortage of the node',
                   [1])],
    "evicted-6": [("outcome", "neuvector-scanner-pod-7468c8c8c8-26r4z", "evicted",
                   "limit — Evicted: Pod ephemeral local storage usage exceeds the total limit of "
                   "containers 2Gi. — its own ephemeral-storage limit, not a shortage of the node",
                   [1])],
    "admission-outofcpu-1": [("outcome", "batch-101-job-2751-90f13d", "admission",
                              "OutOfcpu: Pod Node didn't have enough resource: cpu, requested: "
                              "600, used: 7371, capacity: 7910 (on node "
                              "gke-vdc-non-preemptible-pool-0106a51b-5znv)", [1])],
    "admission-outofcpu-2": [("outcome", "vm-stress-0050-dz557", "admission",
                              "OutOfcpu: Node didn't have enough resource: cpu, requested: 1000, "
                              "used: 94939, capacity: 95690 (on node "
                              "i-08d5967318f466dd4.eu-west-1.compute.internal)", [1, 5])],
    "admission-outofmemory-1": [("outcome", "unnamed-kpo-pod", "admission",
                                 "OutOfmemory: Pod was rejected: Node didn't have enough "
                                 "resource: memory, requested: 547356672, used: 6619660288, "
                                 "capacity: 7068438528", [1])],
    "admission-unexpected-1": [("outcome", "coredns-578bdc569f-g87nk", "admission",
                                "UnexpectedAdmissionError: Pod Unexpected error while attempting "
                                "to recover from admission failure: preemption: error finding a "
                                "set of pods to preempt: no set of running pods found to reclaim "
                                "resources: [(res: pods, q: 1), ]", [1])],
    # a device plugin with no healthy device: the device manager's message decides
    "admission-unexpected-2": [("outcome", "dpdk", "admission",
                                "device_plugin — UnexpectedAdmissionError: Pod was rejected: Allocate failed due to no "
                                "healthy devices present; cannot allocate unhealthy devices "
                                "dsa.intel.com/wq-user-dedicated, which is unexpected", [1])],
    "preempted-1": [("outcome", "pause1", "preempted",
                     "DisruptionTarget PreemptionByKubeScheduler: Kube-scheduler: preempting to "
                     "accommodate a higher priority pod: default/pause2", [1])],
    "sandbox-cni-1": [("pending", "nfs-client-provisioner-59c5f46f5-d4nds", "sandbox",
                       'cni — FailedCreatePodSandBox, 2022-12-30T11:58:19Z: Failed to create pod '
                       'sandbox: rpc error: code = Unknown desc = failed to setup network for '
                       'sandbox "cb8a846be7902a752bae7f4cdee280111ba8f005e90b6b68c7062bd1cb68a7b4":'
                       ' plugin type="calico" failed (add): connection is unauthorized: '
                       'Unauthorized', [3])],
    "init-start-error-1": [("pending", "unnamed-wordpress-pod", "init_container",
                            'run_container_error — init container init-command: '
                            'RunContainerError, last exit 128 (StartError): failed to create '
                            'containerd task: OCI runtime create failed: container_linux.go:370: '
                            'starting container process caused: exec: "echo demo-wordpress": '
                            'executable file not found in $PATH: unknown', [1])],
    "image-pull-invalid-name-1": [
        ("unknown", "hello-release-hello-world-76bc67557d-4g565", "image_pull",
         'invalid_name — hello-world: InvalidImageName, Failed to apply default image tag '
         '"redacted.dkr.ecr.us-east-1.amazonaws.com/redacted/redacted:": couldn\'t parse image '
         'reference "redacted.dkr.ecr.us-east-1.amazonaws.com/redacted/redacted:": invalid '
         'reference format', [1])],
    # the kubelet's InspectFailed names the reference; its "Error: InvalidImageName" only
    # repeats the reason
    "image-pull-invalid-name-2": [
        ("pending", "12factor-demo-adcc188eef-0", "image_pull",
         "invalid_name — InspectFailed ×3, 2019-10-23T11:59:36Z – 11:59:50Z: Failed to apply "
         'default image tag "/cloudfoundry/75f129a0-d8c9-415a-9a8a-f514002f1459:'
         'a28a05709747165a9c25c14f1b77d5c4db260d48": couldn\'t parse image reference '
         '"/cloudfoundry/75f129a0-d8c9-415a-9a8a-f514002f1459:'
         'a28a05709747165a9c25c14f1b77d5c4db260d48": invalid reference format', [4, 3])],
    "volume-attach-1": [
        ("pending", "miop-mysql-app-0", "volume_mount",
         'FailedAttachVolume ×9, 2020-09-30T11:56:39Z – 11:58:47Z: AttachVolume.Attach failed '
         'for volume "pvc-ed79cf0c-7d59-427f-b64b-8ad8815421b0" : volume attachment is being '
         'deleted; FailedMount ×2, 2020-09-30T11:56:44Z – 11:58:46Z: MountVolume.WaitForAttach '
         'failed for volume "pvc-ed79cf0c-7d59-427f-b64b-8ad8815421b0" : volume attachment is '
         'being deleted; FailedMount, 2020-09-30T11:58:30Z: Unable to mount volumes for pod '
         '"miop-mysql-app-0_miop-dev(ce6f2222-28ad-4da0-9f69-f7c44b042100)": timeout expired '
         'waiting for volumes to attach or mount for pod "miop-dev"/"miop-mysql-app-0". list of '
         'unmounted volumes=[miop-mysql-data]. list of unattached volumes=[miop-mysql-data '
         'miop-mysql-conf miop-compose-conf default-token-2lx6j]', [5, 4, 3])],
    "pvc-external-provisioning-1": [
        ("claim_pending", "unnamed-nacos-pvc", "external_provisioning",
         'ExternalProvisioning: waiting for a volume to be created, either by external '
         'provisioner "fuseim.pri/ifs" or manually created by system administrator (×22)',
         [1, 2])],
    # ImageInspectError (k3s-io/k3s#12540): the shim's error decides; "Error: ImageInspectError"
    # only repeats the reason
    "image-inspect-error-1": [
        ("unknown", "cnb-reloader-5db69cb8c6-2bqqv", "image_pull",
         'inspect_failed — InspectFailed ×8, 2025-06-24T11:53:00Z – 11:54:18Z: Failed to inspect '
         'image "": rpc error: code = Unknown desc = unable to convert a nil pointer to a runtime '
         'API image', [3])],
    # SignatureValidationFailed (the kubernetes.io blog's CRI-O capture): the runtime's Failed
    # message decides, the waiting reason and the back-off only follow it
    "image-signature-rejected-1": [
        ("unknown", "pod", "image_pull",
         'signature_rejected — container: SignatureValidationFailed; Failed ×3, '
         '2023-06-29T11:59:05Z – 11:59:54Z: Failed to pull image "quay.io/crio/unsigned": '
         'SignatureValidationFailed: Source image rejected: A signature was required, but no '
         'signature exists; BackOff ×2, 2023-06-29T11:59:05Z – 11:59:38Z: Back-off pulling image '
         '"quay.io/crio/unsigned"', [1, 6, 3, 4])],
    # GKE 1.21 (capactio/capact#679): the kubelet refused a pod while its node shut down,
    # and stopped another for the shutdown (status Terminated, no DisruptionTarget before 1.26)
    "node-shutdown-gke-1": [("outcome", "unnamed-capact-pod-rejected", "admission",
                             "node_shutdown — NodeShutdown: Pod was rejected as the node is shutting down.", [1]),
                            ("outcome", "unnamed-capact-pod-terminated", "node_shutdown",
                             "Terminated: Pod was terminated in response to imminent node shutdown. "
                             "— its node shutting down: its Shutdown Event not recorded", [2])],
    # the back-off's message only repeats "Back-off pulling image": the ErrImagePull before
    # it (record 4) names the missing manifest
    "image-pull-1": [("pending", "foo", "image_pull",
                      'not_found — nginx: ImagePullBackOff, Back-off pulling image "nginx:1.13-invalid"; '
                      'the pull before it: ErrImagePull, rpc error: code = Unknown desc = Error response '
                      'from daemon: manifest for nginx:1.13-invalid not found: manifest unknown: manifest '
                      'unknown', [5, 4])],
    "init-crash-1": [("pending", "unnamed-rtf-app-pod", "init_container",
                      "crash_loop — init container init: CrashLoopBackOff, 16 restarts, last exit "
                      "1 (Error): Failed to fetch /opt/mule/conf/rtfv1.yml. statusCode=403", [1])],
}
FINDINGS = ("SELECT 'outcome', name, c.cause, c.detail, c.evidence FROM pod_outcomes_at(data_end()), "
            "unnest(causes) u(c) UNION ALL SELECT problem, name, c.cause, c.detail, c.evidence "
            "FROM problems, unnest(causes) u(c) ORDER BY 2, 3")


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_the_whole_finding_row(loaded, name: str):
    """Cause, detail with the decisive message, and the evidence records (by their position
    in the file: the loader numbers records in file order)."""
    con = loaded[name]
    first = rows(con, "SELECT min(event_id) - 1 FROM raw_events")[0][0]
    found = [(p, n, c, d, [e - first for e in ev]) for p, n, c, d, ev in rows(con, FINDINGS)]
    assert found == OUTCOMES[name]


def test_advice_fits_the_case(loaded):
    """A container that never started has no logs: its advice names the command."""
    con = loaded["init-start-error-1"]
    advice = rows(con, "SELECT finding_advice(c.cause, c.detail) FROM problems, "
                       "unnest(causes) u(c)")[0][0]
    assert "never started, so it has no logs" in advice and "read" not in advice
    assert rows(loaded["evicted-5"], "SELECT finding_advice(c.cause, c.detail) FROM "
                                     "pod_outcomes_at(data_end()), unnest(causes) u(c)")[0][0] \
        .startswith("the pod used more local storage than a limit of its own allows")
    assert rows(loaded["sandbox-cni-1"], "SELECT finding_advice(c.cause, c.detail) "
                                         "FROM problems, unnest(causes) u(c)")[0][0].startswith(
        "the network plugin failed")
    # the device manager found no healthy device: the device plugin, not the pod's spec
    device = rows(loaded["admission-unexpected-2"], "SELECT finding_advice(c.cause, c.detail) FROM "
                                                     "pod_outcomes_at(data_end()), unnest(causes) u(c)")[0][0]
    assert device.startswith("the kubelet's device manager could not allocate the device resource")
    # the other UnexpectedAdmissionError (preemption's recovery failed) keeps admission's advice
    assert rows(loaded["admission-unexpected-1"], "SELECT finding_advice(c.cause, c.detail) = a.advice "
                                                   "FROM pod_outcomes_at(data_end()), unnest(causes) u(c), "
                                                   "cause_advice a WHERE a.cause = 'admission'") == [(True,)]


def test_a_node_under_pressure_is_a_node_finding(loaded):
    assert rows(loaded["node-pressure-1"], "SELECT name, conditions, since::VARCHAR, detail "
                                           "FROM node_pressure_at(data_end())") == [
        ("kubernetes-master", ["DiskPressure"], "2020-08-04 17:32:06",
         "DiskPressure=True since 2020-08-04T17:32:06Z (KubeletHasDiskPressure)")]
    # still holding when the capture ends (its newest time, 2020-08-05T03:42:31Z): how long,
    # a lower bound (no receive clock), from the condition's own lastTransitionTime
    from replayer.analyses.explain import explain
    [node] = explain(loaded["node-pressure-1"], "node/kubernetes-master")
    assert [f.sentence for f in node.findings] == [
        "DiskPressure=True since 2020-08-04T17:32:06Z, still at the end of the data, held at least 10h10m "
        "(derived from its lastTransitionTime): KubeletHasDiskPressure; no EvictionThresholdMet Event "
        "recorded; no pod evicted for it recorded."]


def test_a_node_without_its_route_is_a_node_finding(loaded):
    """node-network-unavailable-1: NetworkUnavailable=True NoRouteCreated from the route
    controller — a node finding with the controller's message, nothing stuck."""
    con = loaded["node-network-unavailable-1"]
    assert rows(con, "SELECT name, conditions, since::VARCHAR, detail FROM node_pressure_at(data_end())") == [
        ("unnamed-aws-node", ["NetworkUnavailable"], "2017-01-23 16:32:44",
         "NetworkUnavailable=True since 2017-01-23T16:32:44Z (NoRouteCreated: RouteController failed to "
         "create a route)")]
    assert rows(con, "SELECT count(*) FROM problems") == [(0,)]
    from replayer.analyses.explain import explain
    [node] = explain(con, "node/unnamed-aws-node")
    # held "at least 0s": the capture's newest time is the condition's own transition
    assert [(f.sentence, f.evidence) for f in node.findings] == [
        ("NetworkUnavailable=True since 2017-01-23T16:32:44Z, still at the end of the data, held at least 0s "
         "(derived from its lastTransitionTime): NoRouteCreated: "
         "RouteController failed to create a route; no EvictionThresholdMet Event recorded; no pod evicted for "
         "it recorded.", [node.timeline[-1]["evidence_event_id"]])]  # the one record: its condition step
    # the route controller's reason: its advice is the cloud route, not a generic network plugin
    assert node.findings[0].advice.startswith("the cloud route controller")


def test_containers_the_kubelet_lost_ended_unseen(loaded):
    """ContainerStatusUnknown's exit 137 is the kubelet's stand-in, not a SIGKILL seen."""
    assert rows(loaded["evicted-3"], "SELECT stop_verdict FROM pod_lifecycle") == [
        ("ended unseen (ContainerStatusUnknown: the kubelet could not locate them)",)]


def test_a_gated_pod_waits_on_its_named_gates(loaded):
    """Not a failure (score 40): reported only past the threshold. The capture's AGE column
    says `kubectl get` ran 7 s after creation; judged then with a 5 s threshold."""
    con = loaded["scheduling-gated-1"]
    found = rows(con, "SELECT name, problem, stuck_for_s, c.cause, c.detail, c.evidence "
                      "FROM not_running_at(data_end() + INTERVAL 7 SECOND, threshold_s := 5), "
                      "unnest(causes) u(c)")
    first = rows(con, "SELECT min(event_id) FROM raw_events")[0][0]
    assert found == [("test-pod", "pending", 7.0, "scheduling_gated",
                      "waiting on scheduling gates foo, bar — PodScheduled=False SchedulingGated"
                      " — Scheduling is blocked due to non-empty scheduling gates", [first])]


def test_explain_tells_how_a_pod_ended_and_what_fits(loaded):
    from replayer.analyses.explain import explain
    [story] = explain(loaded["evicted-3"], "maintenancepage-765549c948-p76fh")
    outcome = [f for f in story.findings if f.topic == "outcome"]
    assert [f.sentence for f in outcome] == [
        "Evicted at 2024-01-22T16:57:07Z: evicted — ephemeral-storage — Evicted: The "
        "node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 0. — "
        "node kaapana's DiskPressure condition: not recorded"]
    assert outcome[0].advice.startswith("the node ran short of the resource named above")
    assert not [f for f in story.findings if f.topic == "stuck"]  # terminal, never stuck
    [story] = explain(loaded["init-start-error-1"], "unnamed-wordpress-pod")
    [stuck] = [f for f in story.findings if f.topic == "stuck"]
    assert 'exec: "echo demo-wordpress": executable file not found in $PATH' in stuck.sentence
    assert stuck.advice.startswith("the container never started, so it has no logs")


def test_states_that_are_not_failures_are_explained_never_stuck(loaded):
    """A suspended Job, a claim waiting for its first consumer and a node under memory
    pressure: findings with their deciding condition or Event, none of them stuck."""
    found = {name: rows(loaded[name], "SELECT kind, name, state, cause, since::VARCHAR, stuck, "
                                      "detail FROM object_findings_at(data_end())")
             for name in ("job-suspended-1", "pvc-wait-for-consumer-1",
                          "pvc-external-provisioning-2")}
    assert found == {
        "job-suspended-1": [("Job", "unnamed-suspended-job", "suspended", "job_suspended",
                             "2024-09-26 11:25:42", False,
                             "JobSuspended: Job suspended — 0 pods active")],
        "pvc-wait-for-consumer-1": [
            ("PersistentVolumeClaim", "data-nfs-app-nfs-server-provisioner-0", "claim_waiting",
             "waiting_for_consumer", "2022-07-15 13:44:24", False,
             "WaitForFirstConsumer: waiting for first consumer to be created before binding "
             "(×7)")],
        # ExternalProvisioning for 15 s of data (first – last Event; the paste's "29s" runs
        # to the moment of the paste, which no record carries): under threshold_s
        "pvc-external-provisioning-2": []}
    assert rows(loaded["pvc-external-provisioning-2"],
                "SELECT name, cause FROM object_findings_at(data_end(), threshold_s := 10)") == [
        ("idlcgrafana-pv", "external_provisioning")]
    assert rows(loaded["node-memory-pressure-1"], "SELECT name, conditions, since::VARCHAR, detail "
                                                  "FROM node_pressure_at(data_end())") == [
        ("10.0.10.132", ["MemoryPressure"], "2022-01-20 03:54:21",
         "MemoryPressure=True since 2022-01-20T03:54:21Z (KubeletHasInsufficientMemory: kubelet "
         "has insufficient memory available)")]
    from replayer.analyses.explain import explain
    [node] = explain(loaded["node-memory-pressure-1"], "node/10.0.10.132")
    assert [(f.topic, f.sentence) for f in node.findings] == [
        ("pressure", "MemoryPressure=True since 2022-01-20T03:54:21Z, still at the end of the data, "
                     "held at least 0s (derived from its lastTransitionTime): KubeletHasInsufficientMemory: kubelet has insufficient memory available; no "
                     "EvictionThresholdMet Event recorded; no pod evicted for it recorded.")]


def test_a_volume_failure_a_later_success_left_behind_is_history(loaded):
    """volume-multi-attach-1: the Multi-Attach FailedAttachVolume, then the same volume's
    SuccessfulAttachVolume and the container's Started: nothing stuck, the failure a step."""
    con = loaded["volume-multi-attach-1"]
    assert rows(con, "SELECT count(*) FROM not_running_at(data_end(), threshold_s := 0)") == [(0,)]
    assert [s for s, in rows(con, "SELECT detail FROM pod_transitions WHERE step = 'warning'")] == [
        'FailedAttachVolume: Multi-Attach error for volume "pvc-7a81d56f-1cf9-11eb-8295-'
        'b6961e0a47ed" Volume is already exclusively attached to one node and can\'t be '
        'attached to another']


def test_a_container_the_runtime_could_not_create_is_no_command_to_fix(loaded):
    """CreateContainerError (openshift/cluster-image-registry-operator#1011): the volume's
    mount path is unreadable (its Ceph storage went down); the advice names the mount."""
    [(detail, advice)] = rows(loaded["create-container-error-1"],
                              "SELECT c.detail, finding_advice(c.cause, c.detail) "
                              "FROM problems, unnest(causes) u(c)")
    assert detail.endswith("/mount: permission denied")
    assert advice.startswith("the runtime could not create the container") and "mount" in advice
    assert "command or executable" not in advice


def test_a_namespace_held_by_an_api_that_does_not_answer(loaded):
    """aws/containers-roadmap#1006: deleted at 23:19:14, and 5 s later the namespace
    controller says discovery of metrics.k8s.io failed; judged with no margin (the data ends
    there). Not the objects: the unavailable APIService holds it."""
    con = loaded["namespace-discovery-failed-1"]
    first = rows(con, "SELECT min(event_id) FROM raw_events")[0][0]
    assert rows(con, "SELECT kind, name, stuck_for_s, c.cause, c.detail, c.evidence, "
                     "finding_advice(c.cause, c.detail) FROM stuck_at(data_end(), margin_s := 0), "
                     "unnest(causes) u(c)") == [
        ("Namespace", "metrics", 5.0, "namespace_content",
         "discovery — NamespaceDeletionDiscoveryFailure: Discovery failed for some groups, 1 "
         "failing: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: "
         "the server is currently unable to handle the request", [first],
         rows(con, "SELECT advice FROM cause_sub_advice WHERE sub = 'discovery'")[0][0])]
    assert rows(con, "SELECT advice FROM cause_sub_advice WHERE sub = 'discovery'")[0][0] \
        .startswith("the namespace controller cannot list an aggregated API")


def test_a_node_the_kubelet_reports_not_ready_says_why(loaded):
    """kubernetes/kubeadm#1031: Ready=False KubeletNotReady, no CNI configuration. What
    node_not_ready reads for a pod on it, and explain's step with the kubelet's message."""
    from replayer.analyses.explain import explain
    con = loaded["node-not-ready-1"]
    assert rows(con, "SELECT name, ready, ready_reason, ready_since::VARCHAR, not_ready "
                     "FROM node_health_at(data_end())") == [
        ("devstats.cncf.io", "False", "KubeletNotReady", "2018-08-02 14:39:49", True)]
    [story] = explain(con, "node/devstats.cncf.io")
    message = ("runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
               "message:docker: network plugin is not ready: cni config uninitialized")
    assert ("condition", f"Ready=False KubeletNotReady: {message}", True) in [
        (s["step"], s["detail"], s["derived"]) for s in story.timeline]
    # the node alone has its finding, the condition's message quoted: 0 s old at the data's
    # end (its only record), so an outcome in explain, and stuck once past the threshold
    detail = (f"kubelet_not_ready — node devstats.cncf.io Ready=False since 2018-08-02T14:39:49Z "
              f"(KubeletNotReady: {message})")
    [node] = story.findings
    assert (node.topic, node.sentence, node.evidence) == (
        "outcome", f"Not Ready since 2018-08-02T14:39:49Z: node_not_ready — {detail}",
        [story.timeline[0]["evidence_event_id"]])
    assert node.advice.startswith("the node's kubelet itself reports it not Ready")
    assert stuck(con).rows[1] == []
    assert [(r[0], r[2], r[4], r[7], r[8][0]["detail"]) for r in stuck(con, threshold_s=0).rows[1]] == [
        ("Node", "devstats.cncf.io", "node_not_ready", "node_not_ready", detail)]


def test_a_taint_eviction_without_a_deletion_is_a_step_naming_the_requester(loaded):
    """kubernetes-sigs/node-readiness-controller#164: …-dgb89's stub has no deletionTimestamp;
    the taint-eviction controller's "Marking for deletion" Event (which it writes right before
    its DELETE, pkg/controller/tainteviction) is a step of its timeline, and explain names the
    controller as the requester from it."""
    from replayer.analyses.explain import explain
    con = loaded["unschedulable-taint-3"]
    [story] = explain(con, "pod/nginx-with-toleration-84559fbfc4-dgb89")
    assert [(s["step"], s["component"], s["derived"]) for s in story.timeline] == [
        ("first_seen", "ktrace", False), ("created", None, True),
        ("taint_eviction", "taint-eviction-controller", True), ("killing", "kubelet", True)]
    marked = story.timeline[2]
    assert marked["detail"] == ("Marking for deletion Pod default/nginx-with-toleration-84559fbfc4-dgb89: "
                                "its node's NoExecute taint is not tolerated (or outlived "
                                "tolerationSeconds); the controller deletes it now")
    [deletion] = [f for f in story.findings if f.topic == "deletion"]
    assert (deletion.sentence, deletion.evidence) == (
        "Deletion requested by taint-eviction-controller at 2026-01-15T11:38:00Z (its NoExecute "
        "taint eviction; the deletion itself was not recorded).", [marked["evidence_event_id"]])


def test_a_failed_post_start_hook_names_the_hook_and_its_output(loaded):
    """onosproject/onos-helm-charts#557: the FailedPostStartHook Event alone (a pod stub, no
    status) names the cause — the hook's command exited 1 at a prompt for a Bind DN — and
    the advice is the hook's, not the entrypoint's."""
    con = loaded["post-start-hook-1"]
    first = rows(con, "SELECT min(event_id) FROM raw_events")[0][0]
    [(name, cause, detail, evidence, advice)] = rows(
        con, "SELECT name, c.cause, c.detail, c.evidence, finding_advice(c.cause, c.detail) "
             "FROM not_running_at(data_end(), threshold_s := 0), unnest(causes) u(c)")
    assert (name, cause, evidence) == ("fedora389ds-74fc7d99b6-t2zrl", "run_container_error",
                                       [first + 1])
    assert detail.startswith("post_start_hook — FailedPostStartHook, 2021-11-04T11:59:00Z: "
                             "Exec lifecycle hook ([/bin/sh -c sleep 3 && ")
    assert detail.endswith("exited with 1: , message: \"Enter Bind DN: Error: EOF when reading "
                           "a line\\nEnter Bind DN: Error: EOF when reading a line\\n\"")
    assert advice.startswith("the container's postStart hook failed")


def test_a_runtime_fault_or_an_unavailable_registry_is_not_the_image(loaded):
    """ImageInspectError (k3s-io/k3s#12540: cri-dockerd), the CRI errors RegistryUnavailable
    (enix/kube-image-keeper#529) and SignatureValidationFailed (the kubernetes.io blog's CRI-O
    capture): the advice points at the runtime, the registry's reachability and the signature
    policy, never at the image's name or tag, nor at waiting out the back-off. The RegistryUnavailable Event carries no
    time (none was quoted), so its detail is read around the capture's time."""
    [(detail, advice)] = rows(loaded["image-inspect-error-1"], "SELECT c.detail, finding_advice("
                              "c.cause, c.detail) FROM problems, unnest(causes) u(c)")
    assert advice.startswith("the container runtime failed to inspect an image")
    assert "not the registry or the name" in advice
    [(detail, advice)] = rows(loaded["image-registry-unavailable-1"], "SELECT c.detail, "
                              "finding_advice(c.cause, c.detail) FROM problems, unnest(causes) u(c)")
    assert detail.startswith("registry_unreachable — Failed, ")
    assert detail.endswith(': Failed to pull image "localhost:7439/gitlab.example.com-4567/library/'
                           'test-api:latest": RegistryUnavailable: pinging container registry '
                           'localhost:7439: Get "http://localhost:7439/v2/": dial tcp [::1]:7439: '
                           'connect: connection refused')
    assert advice.startswith("the node cannot reach the registry")
    [(advice,)] = rows(loaded["image-signature-rejected-1"], "SELECT finding_advice(c.cause, "
                       "c.detail) FROM problems, unnest(causes) u(c)")
    assert advice.startswith("the container runtime's signature policy rejected the image")
    assert advice.endswith("pulling again will not help")


def test_a_pod_the_kubelet_stopped_for_a_node_shutdown_says_so(loaded):
    """Before 1.26 the graceful node shutdown wrote no DisruptionTarget: its status reason
    Terminated and fixed message (pkg/kubelet/nodeshutdown) name the path on the terminal
    step. After the node came back, 1.22 restarted such a pod (kubernetes/kubernetes#104798):
    running and Ready with the shutdown's status reason still on it — nothing is stuck, and it
    did not end (the shutdown manager writes its reason with phase Failed)."""
    con = loaded["node-shutdown-gke-1"]
    assert rows(con, "SELECT pod, step, component, detail FROM pod_transitions "
                     "WHERE step = 'terminal' ORDER BY pod") == [
        ("unnamed-capact-pod-rejected", "terminal", "kubelet", "Failed"),
        ("unnamed-capact-pod-terminated", "terminal", "kubelet",
         "Failed — kubelet (graceful node shutdown)")]
    con = loaded["node-shutdown-restarted-1"]
    assert rows(con, "SELECT count(*) FROM pod_outcomes_at(data_end())") == [(0,)]
    assert rows(con, "SELECT step, detail FROM pod_transitions WHERE step = 'restarted'") == [
        ("restarted", "nginx: 1 restarts before first seen")]


def test_a_rejection_is_dated_by_the_kubelets_own_event(loaded):
    """admission-outofcpu-2: the pod's only time is its creationTimestamp (AGE 48m); the
    kubelet's OutOfcpu Event, written with the status in one step (pkg/kubelet/kubelet.go
    rejectPod), is 5 minutes later: the rejection's time."""
    assert rows(loaded["admission-outofcpu-2"], "SELECT name, since::VARCHAR "
                                                "FROM pod_outcomes_at(data_end())") == [
        ("vm-stress-0050-dz557", "2023-07-04 11:17:00")]


def test_a_pod_exists_before_any_evidence_of_it(loaded):
    """Captures without creationTimestamp: `created` is at or before the earliest step with
    a time of its own (a container's startedAt, an Event), never after it; `scheduled` at or
    before its containers ran."""
    def steps(name: str) -> list[tuple]:
        return rows(loaded[name], "SELECT step, time::VARCHAR, detail FROM pod_transitions "
                                  "WHERE step IN ('created', 'scheduled', 'running', 'warning') "
                                  "ORDER BY step_no")
    assert steps("crash-loop-2") == [
        ("created", "2024-05-02 12:30:41", "at or before (its earliest evidence; no creationTimestamp)"),
        ("running", "2024-05-02 12:30:41", None)]
    assert steps("crash-loop-oom-2") == [
        ("created", "2024-01-04 09:51:18", "at or before (its earliest evidence; no creationTimestamp)"),
        ("warning", "2024-01-04 09:51:18", "BackOff: Back-off restarting failed container"),
        ("running", "2024-01-04 09:52:29", None)]
    assert steps("crash-loop-oom-1") == [
        ("created", "2020-11-26 12:30:38", "at or before (startTime; no creationTimestamp)"),
        ("scheduled", "2020-11-26 12:30:38", "research.center.master.069"),
        ("running", "2020-11-26 12:30:38", None)]


def test_a_capture_without_any_time_says_when_is_unknown(loaded):
    """admission-outofmemory-1 and create-container-error-1 carry no timestamp at all: their
    records take the capture file's time, which explain names as such, not as the moment
    the pod was rejected or began to be stuck."""
    from replayer.analyses.explain import explain
    [story] = explain(loaded["admission-outofmemory-1"], "unnamed-kpo-pod")
    [outcome] = [f.sentence for f in story.findings if f.topic == "outcome"]
    assert outcome.startswith("Rejected by the kubelet (when: unknown — no record of it carries "
                              "a time; the capture file is from ")
    assert outcome.endswith("): admission — OutOfmemory: Pod was rejected: Node didn't have enough "
                            "resource: memory, requested: 547356672, used: 6619660288, capacity: "
                            "7068438528")
    [story] = explain(loaded["create-container-error-1"], "unnamed-image-registry-pod")
    [stuck_finding] = [f.sentence for f in story.findings if f.topic == "stuck"]
    assert stuck_finding.startswith("Not running (its status not recorded) (since when: unknown — no record of it carries a time; ")
    [story] = explain(loaded["evicted-3"], "maintenancepage-765549c948-p76fh")  # a time of its own
    assert [f.sentence for f in story.findings if f.topic == "outcome"][0].startswith(
        "Evicted at 2024-01-22T16:57:07Z: ")


def test_an_object_exists_before_its_events_and_conditions(loaded):
    """Objects other than pods captured without creationTimestamp: `created` is at or before
    the earliest Event about them or condition they report (not-created-quota-1's FailedCreate
    ×6 began 79 s before its last time; rollout-stalled-1 was Available two days before its
    progress deadline passed)."""
    from replayer.analyses.explain import explain
    for name, obj, first in [("not-created-quota-1", "rs/coder-benzo-my-workspace-6df987574",
                              "2023-07-05T11:57:55Z"),
                             ("rollout-stalled-1", "deploy/xxx-gui", "2021-01-20T02:04:24Z")]:
        [story] = explain(loaded[name], obj)
        created, after = story.timeline[0], story.timeline[1]
        assert (created["step"], created["detail"], created["derived"]) == (
            "created", "at or before (its earliest evidence; no creationTimestamp)", True)
        assert created["time"] == after["time"], story.timeline
        assert created["time"].strftime("%Y-%m-%dT%H:%M:%SZ") == first


def test_a_terminating_pod_names_the_finalizer_that_holds_it(loaded):
    """kubernetes#109429: deleted with grace 0 at 02:02:21Z and still there, held by the
    Job's tracking finalizer. The data ends at the deletion, so nothing is stuck; explain
    names the finalizer, the Job, and who removes it (pkg/controller/job)."""
    from replayer.analyses.explain import explain
    con = loaded["terminating-finalizer-1"]
    [story] = explain(con, "pod/ham-36937-20230502-1-h6tn7", namespace="bigdata-qa")
    [held] = [f for f in story.findings if f.sentence.startswith("Held by")]
    assert (held.topic, held.sentence, held.evidence) == (
        "deletion", "Held by finalizer since its deletion at 2023-05-03T02:02:21Z, still there at the end of "
                    "the data: batch.kubernetes.io/job-tracking (owner Job ham-36937-20230502-1) — the Job "
                    "controller (kube-controller-manager) removes it once it has counted the pod in its Job's "
                    "status (succeeded or failed) — at once if the Job is gone.",
        [story.timeline[0]["evidence_event_id"]])
    assert not [f for f in story.findings if f.topic == "stuck"]
