"""Record issue 8's recordings on the real control plane (tests/infra/k8s.py).

    .venv/bin/python tests/data/replayer/capture_pending.py OUT_DIR [NAME ...]

Each NAME (default: all) runs on a control plane of its own (3 kwok nodes, stage set
"kubelet": kwok stands in for the kubelets, with compose/k8s/stages/kubelet-*.yaml writing
the container states and Events the kubelet would), while ``kubectl get … --watch
--output-watch-events -o json`` captures into OUT_DIR/NAME/kubectl and ``ktrace record``
records into OUT_DIR/NAME/recording (capture.py's Capture):

  pending  pods that never start or never get Ready: unschedulable (cpu, nodeSelector,
           taint, PVCs; the real scheduler), a Deployment its ResourceQuota forbids, a
           rollout past its progressDeadlineSeconds, and kubelet causes from the kwok
           stages (image pull, crash loops incl. OOMKilled, config and run errors, a
           failing readiness probe, a failing init container) beside pods that are fine
           (a native sidecar, an image pulled in 5.87s, a plain pod)
  midlife  the recording starts 150 s after its workload, whose crash-looping pod
           restarted before and restarts during it; one pod is deleted during it
  crashed  the recorder is SIGKILLed while pods are created, stays down while more are
           created (and a Deployment scaled), and restarts from its checkpoint
  edge     a force delete on a lost node, a PVC deleted while a pod uses it, a namespace
           held by a ConfigMap finalizer, a container killed at its grace deadline
           (exit 137), a pod name reused by a new uid

What an expert concludes from each is in tests/data/replayer/NAME/EXPECTED.md.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.data.replayer.capture import KINDS, HOLD, Capture, Scenario, deployment, pod  # noqa: E402
from tests.infra.k8s import STAGE_DIR, LocalControlPlane  # noqa: E402

SCRIPT = "kubelet.ktrace.test/script"  # the kubelet-*.yaml stages select pods by this label
CRASHLOOP_STAGES = STAGE_DIR / "kubelet-crashloop.yaml"
# Images the stages' fixed Event messages name (compose/k8s/stages/kubelet-*.yaml).
MISSING_IMAGE = "registry.example/missing:1"
PULLED_IMAGE = "registry.example/app:2"
STORAGE_KINDS = KINDS + ["persistentvolumeclaims", "persistentvolumes"]


def scripted(name: str, ns: str, script: str, *, node: str = "kwok-node-0",
             annotations: dict | None = None, **container: object) -> dict:
    """A bare pod whose kubelet is played by the kwok stages labelled `script`."""
    manifest = pod(name, ns, node=node)
    manifest["metadata"]["labels"][SCRIPT] = script
    manifest["metadata"]["annotations"] = annotations or {}
    manifest["spec"]["containers"][0].update(container)
    return manifest


def render_crashloop_stages(pods: list[dict], out: Path) -> Path:
    """kubelet-crashloop.yaml with its {pod} stage copied per pod (the BackOff Event names
    the pod's uid, and kwok's Event messages are fixed text)."""
    rendered = []
    for stage in yaml.safe_load_all(CRASHLOOP_STAGES.read_text()):
        events = [s["event"] for s in stage["spec"]["steps"] if "event" in s]
        if not any(e["message"] == "{pod}" for e in events):
            rendered.append(stage)
            continue
        for p in pods:
            md, spec = p["metadata"], p["spec"]
            failing = (spec.get("initContainers") or spec["containers"])[0]["name"]
            one = copy.deepcopy(stage)
            one["metadata"]["name"] += f"-{md['namespace']}-{md['name']}"
            one["spec"]["selector"]["matchExpressions"].append(
                {"jq": {"key": ".metadata.uid", "operator": "In", "values": [md["uid"]]}})
            for step in one["spec"]["steps"]:
                if step.get("event", {}).get("message") == "{pod}":
                    step["event"]["message"] = (f"Back-off restarting failed container {failing} in pod "
                                                f"{md['name']}_{md['namespace']}({md['uid']})")
            rendered.append(one)
    out.write_text(yaml.safe_dump_all(rendered, sort_keys=False, width=10_000))
    return out


class Play(Scenario):
    def get(self, kind: str, name: str, ns: str) -> dict:
        return json.loads(self.k("get", kind, name, "-n", ns, "-o", "json"))

    def start_crashloops(self, *names: tuple[str, str]) -> None:
        """Once the crash-looping pods are bound (their uids known), give kwok their stages."""
        for name, ns in names:
            self.k("wait", "--for=jsonpath={.spec.nodeName}", f"pod/{name}", "-n", ns, "--timeout=60s")
        pods = [self.get("pod", name, ns) for name, ns in names]
        self.plane.add_stages(render_crashloop_stages(pods, self.plane.work_dir / "kubelet-crashloop.yaml"))
        for name, ns in names:  # kwok is back: it has started them
            self.k("wait", "--for=jsonpath={.status.startTime}", f"pod/{name}", "-n", ns, "--timeout=60s")

    def ready(self, ns: str, *names: str) -> None:
        self.k("wait", "--for=condition=Ready", *(f"pod/{n}" for n in names), "-n", ns, "--timeout=60s")

    # --- pending ----------------------------------------------------------------

    def pending(self) -> None:
        ns = "pending"
        self.namespace(ns)
        self.k("taint", "node", "kwok-node-1", "dedicated=db:NoSchedule")
        self.apply(
            {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
             "metadata": {"name": "no-provisioner"}, "provisioner": "kubernetes.io/no-provisioner",
             "volumeBindingMode": "WaitForFirstConsumer"},
            claim("claim-missing-class", ns, "missing"),
            claim("claim-no-pv", ns, "no-provisioner"))
        # Each with one reason: all but "taint" tolerate kwok-node-1's taint.
        unschedulable = [
            with_spec(pod("cpu", ns), nodeSelector=None, tolerations=TOLERATE_DB,
                      containers=[container(resources={"requests": {"cpu": "64"}})]),
            with_spec(pod("selector", ns), nodeSelector={"disktype": "ssd"}, tolerations=TOLERATE_DB),
            pod("taint", ns, node="kwok-node-1"),
            with_spec(pod("pvc-missing-class", ns), **uses_claim("claim-missing-class")),
            with_spec(pod("pvc-no-pv", ns), nodeSelector=None, tolerations=TOLERATE_DB,
                      **uses_claim("claim-no-pv")),
        ]
        crashloops = [
            scripted("crashloop", ns, "crashloop"),
            scripted("oomkilled", ns, "crashloop", resources={"limits": {"memory": "64Mi"}},
                     annotations={"kubelet.ktrace.test/exit-code": "137",
                                  "kubelet.ktrace.test/exit-reason": "OOMKilled"}),
            with_spec(scripted("init-crashloop", ns, "init-crashloop"),
                      initContainers=[container("init-db", "registry.example/migrate:1", command=["/migrate"])]),
        ]
        kubelet = [
            scripted("image-pull", ns, "image-pull", image=MISSING_IMAGE),
            scripted("config-error", ns, "config-error", envFrom=[{"configMapRef": {"name": "app-config"}}]),
            scripted("run-error", ns, "run-error", command=["/app/server"]),
            scripted("unready", ns, "unready", readinessProbe=PROBE),
            with_spec(scripted("sidecar", ns, "sidecar"),
                      initContainers=[container("proxy", "registry.example/proxy:1", restartPolicy="Always")]),
            scripted("pull-start", ns, "pull-start", image=PULLED_IMAGE),
            pod("running", ns),
        ]
        # The crash loops first: kwok restarts to load their stages, which would hold up
        # (and make look slow) whatever else it was starting.
        self.apply(*crashloops)
        self.start_crashloops(*((p["metadata"]["name"], ns) for p in crashloops))
        self.apply(*unschedulable, *kubelet)
        self.not_created("quota")
        self.rollout_stalled("stalled")
        time.sleep(70)  # crash loops reach restartCount 3 (back-off 40s); image pulls retry

    def not_created(self, ns: str) -> None:
        self.namespace(ns)
        self.apply({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "no-pods", "namespace": ns},
                    "spec": {"hard": {"pods": "0"}}})
        self.k("wait", "--for=jsonpath={.status.hard.pods}=0", "resourcequota/no-pods", "-n", ns, "--timeout=30s")
        self.apply(deployment("web", ns, 2))

    def rollout_stalled(self, ns: str) -> None:
        self.namespace(ns)
        stalled = deployment("web", ns, 1)
        stalled["spec"]["progressDeadlineSeconds"] = 10
        template = stalled["spec"]["template"]
        template["metadata"]["labels"][SCRIPT] = "unready"
        template["spec"]["containers"][0]["readinessProbe"] = PROBE
        self.apply(stalled)

    # --- midlife ----------------------------------------------------------------

    def midlife_workload(self) -> None:
        ns = "midlife"
        self.namespace(ns)
        self.apply(scripted("flaky", ns, "crashloop", annotations={"kubelet.ktrace.test/run-for": "40s"}))
        self.start_crashloops(("flaky", ns))  # before the rest: it restarts kwok
        self.apply(deployment("web", ns, 2), scripted("pulled", ns, "pull-start", image=PULLED_IMAGE),
                   pod("leaving", ns))
        self.k("rollout", "status", "deploy/web", "-n", ns, "--timeout=60s")
        self.ready(ns, "flaky", "pulled", "leaving")

    def midlife_recorded(self) -> None:
        time.sleep(20)
        self.k("delete", "pod", "leaving", "-n", "midlife", "--wait=false")
        time.sleep(65)  # flaky: back-off 40s, then its 4th restart

    # --- crashed ----------------------------------------------------------------

    def crashed(self, capture: Capture) -> None:
        ns = "crashed"
        self.namespace(ns)
        self.apply(deployment("web", ns, 2))
        self.k("rollout", "status", "deploy/web", "-n", ns, "--timeout=60s")
        time.sleep(3)
        self.apply(*(pod(f"before-{i}", ns) for i in range(3)))
        kill_after_write(capture, "pods")
        time.sleep(2)
        self.apply(*(pod(f"during-{i}", ns) for i in range(3)))
        self.k("scale", "deploy/web", "-n", ns, "--replicas=4")
        self.ready(ns, *(f"during-{i}" for i in range(3)))
        self.k("rollout", "status", "deploy/web", "-n", ns, "--timeout=60s")
        time.sleep(8)
        capture.start_recorder()
        time.sleep(5)
        self.apply(*(pod(f"after-{i}", ns) for i in range(3)))
        self.ready(ns, *(f"after-{i}" for i in range(3)))
        time.sleep(5)

    # --- edge -------------------------------------------------------------------

    def edge(self) -> None:
        ns = "edge"
        self.namespace(ns)
        self.apply(
            {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "edge-pv"},
             "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                      "storageClassName": "manual", "hostPath": {"path": "/tmp/edge-pv"}}},
            claim("data", ns, "manual"))
        self.k("wait", "--for=jsonpath={.status.phase}=Bound", "pvc/data", "-n", ns, "--timeout=60s")
        stubborn = pod("stubborn", ns, grace=10)
        stubborn["metadata"]["annotations"] = {"pod-stop.stage.kwok.x-k8s.io/delay": "10s",
                                               "pod-stop.stage.kwok.x-k8s.io/exit-code": "137"}
        self.apply(pod("stranded", ns, node="kwok-node-2"),
                   with_spec(pod("uses-data", ns), **uses_claim("data")),
                   stubborn, pod("reused", ns))
        self.ready(ns, "stranded", "uses-data", "stubborn", "reused")
        self.namespace("doomed")
        self.apply({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "keep", "namespace": "doomed", "finalizers": [HOLD]}})
        time.sleep(3)

        self.plane.lose_node("kwok-node-2")
        self.k("delete", "pvc", "data", "-n", ns, "--wait=false")
        self.k("delete", "namespace", "doomed", "--wait=false")
        self.k("delete", "pod", "stubborn", "-n", ns, "--wait=false")
        self.k("delete", "pod", "reused", "-n", ns, "--wait=true", "--timeout=60s")
        self.apply(pod("reused", ns))
        self.ready(ns, "reused")
        time.sleep(16)  # node-monitor-grace-period 10 s: kwok-node-2 goes NotReady/Unknown
        self.k("delete", "pod", "stranded", "-n", ns, "--wait=false")
        time.sleep(6)  # stays Terminating: no kubelet confirms
        self.k("delete", "pod", "stranded", "-n", ns, "--force", "--grace-period=0")
        time.sleep(8)


TOLERATE_DB = [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]
PROBE = {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5, "periodSeconds": 10}


def container(name: str = "app", image: str = "registry.example/app:1", **fields: object) -> dict:
    return {"name": name, "image": image, **fields}


def with_spec(manifest: dict, **fields: object) -> dict:
    """The pod with these spec fields set (None removes one)."""
    for key, value in fields.items():
        if value is None:
            manifest["spec"].pop(key, None)
        else:
            manifest["spec"][key] = value
    return manifest


def claim(name: str, ns: str, storage_class: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                     "resources": {"requests": {"storage": "1Gi"}}}}


def uses_claim(name: str) -> dict:
    return {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": name}}]}


def kill_after_write(capture: Capture, resource: str, timeout: float = 10) -> None:
    """SIGKILL the recorder the moment it writes records of `resource` to its log, before
    it checkpoints them (it fsyncs every topic first): the next session re-sends them."""
    segments = sorted((capture.out / "recording" / f"ktrace.{resource}").glob("*.avro"))
    size = segments[-1].stat().st_size
    deadline = time.monotonic() + timeout
    while segments[-1].stat().st_size == size:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the recorder wrote no {resource} within {timeout}s")
        time.sleep(0.0005)
    capture.kill_recorder()


def run(out: Path, name: str, play: Callable[[Play, Capture], None], *,
        before: Callable[[Play], None] | None = None, late_by: float = 0) -> None:
    """One recording on a fresh control plane: `before` runs unrecorded, `late_by` seconds
    before the recording starts; then `play` runs while recorded."""
    plane = LocalControlPlane(work_dir=out / name / "plane", nodes=3, stage_set="kubelet")
    plane.start()
    capture = Capture(plane, out / name, STORAGE_KINDS)
    try:
        scenario = Play(plane)
        if before:
            before(scenario)
            time.sleep(late_by)
        capture.start()
        time.sleep(3)
        play(scenario, capture)
    finally:
        capture.stop()
        plane.stop()


RECORDINGS: dict[str, Callable[[Path], None]] = {
    "pending": lambda out: run(out, "pending", lambda s, _: s.pending()),
    "midlife": lambda out: run(out, "midlife", lambda s, _: s.midlife_recorded(),
                               before=Play.midlife_workload, late_by=150),
    "crashed": lambda out: run(out, "crashed", Play.crashed),
    "edge": lambda out: run(out, "edge", lambda s, _: s.edge()),
}


def main(out: Path, names: list[str]) -> None:
    for image in (MISSING_IMAGE, PULLED_IMAGE):
        assert image in (STAGE_DIR / "kubelet-pull.yaml").read_text(), image
    for name in names or list(RECORDINGS):
        RECORDINGS[name](out)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), sys.argv[2:])
