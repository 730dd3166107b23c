"""Record the replayer's test scenarios on the real control plane (tests/infra/k8s.py).

    .venv/bin/python tests/data/replayer/capture.py OUT_DIR

Starts a control plane (kwok "race" stages: containers stop as soon as a pod is deleted,
unless the pod's annotation asks for a delay), then, while ``kubectl get … --watch
--output-watch-events -o json`` captures every kind into OUT_DIR/kubectl/<resource>.json and
``ktrace record`` records the same into the local log OUT_DIR/recording, plays:

  race/web      a rollout in which old pods stop before their endpoints turn not-ready
  graceful/web  the same rollout with a 3 s preStop-like delay (endpoints turn off first)
  hold/held     a pod held Terminating by a finalizer (finalizers)
  hold/busy     a pod whose containers do not exit (containers_not_exiting)
  hold/hooked   the same with a preStop hook (prestop_hook)
  fg/fg         a Deployment deleted in the foreground while its pod holds a finalizer
                (foreground_dependents, down to the pod)
  doomed        a namespace deleted while a ConfigMap in it holds a finalizer
                (namespace_content)
  lost/victim   a pod deleted on a node that stopped heartbeating (node_not_ready)
  gone/orphan   a pod deleted on a lost node that is then deleted (node_deleted, until
                the pod garbage collector force-deletes it)
  gap/missed    a finalizer-held pod released while the recorder was down (killed, etcd
                compacted, restarted: session_lost, a GAP record, INFERRED_DELETED)

Workloads run on kwok-node-0; kwok-node-1 is deleted, kwok-node-2 lost. It ends with the
stuck objects still stuck, as an incident would be seen.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.infra.k8s import LocalControlPlane  # noqa: E402

KINDS = ["pods", "endpointslices", "replicasets", "deployments", "events", "nodes",
         "namespaces", "configmaps"]
HOLD = "example.com/hold"


def deployment(name: str, ns: str, replicas: int, annotations: dict | None = None,
               prestop: bool = False) -> dict:
    """Pods on kwok-node-0 only, so the node scenarios leave the rollouts alone."""
    container = {"name": "app", "image": "registry.example/app:1"}
    if prestop:
        container["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", "3"]}}}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": name}, "annotations": annotations or {}},
                "spec": {"containers": [container], "terminationGracePeriodSeconds": 30,
                         "nodeSelector": {"kubernetes.io/hostname": "kwok-node-0"}}}}}


def service(name: str, ns: str) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}}


def pod(name: str, ns: str, *, node: str = "kwok-node-0", finalizer: bool = False,
        stop_delay: str | None = None, prestop: bool = False, grace: int = 5) -> dict:
    container = {"name": "app", "image": "registry.example/app:1"}
    if prestop:
        container["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", "600"]}}}
    md: dict = {"name": name, "namespace": ns, "labels": {"app": name}}
    if finalizer:
        md["finalizers"] = [HOLD]
    if stop_delay:
        md["annotations"] = {"pod-stop.stage.kwok.x-k8s.io/delay": stop_delay}
    spec: dict = {"containers": [container], "terminationGracePeriodSeconds": grace,
                  "nodeSelector": {"kubernetes.io/hostname": node}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


class Scenario:
    # The pods of the recorder-crash story (name, namespace, finalizer=…): kwok's by default
    pod = staticmethod(pod)

    def __init__(self, plane: LocalControlPlane) -> None:
        self.plane = plane

    def k(self, *args: str, input: str | None = None) -> str:
        return self.plane.kubectl(*args, input=input)

    def apply(self, *objs: dict) -> None:
        self.k("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                      "items": list(objs)}))

    def namespace(self, ns: str) -> None:
        self.k("create", "namespace", ns)
        self.k("wait", "--for=create", "serviceaccount/default", "-n", ns, "--timeout=60s")

    def rollout(self, ns: str, annotations: dict | None = None) -> None:
        self.namespace(ns)
        self.apply(service("web", ns), deployment("web", ns, 3, annotations))
        self.k("rollout", "status", "deploy/web", "-n", ns, "--timeout=120s")
        time.sleep(3)
        self.k("set", "env", "deploy/web", "-n", ns, "VERSION=2")
        self.k("rollout", "status", "deploy/web", "-n", ns, "--timeout=120s")
        time.sleep(6)

    def holds(self) -> None:
        self.namespace("hold")
        self.apply(pod("held", "hold", finalizer=True),
                   pod("busy", "hold", stop_delay="900s"),
                   pod("hooked", "hold", stop_delay="900s", prestop=True))
        self.k("wait", "--for=condition=Ready", "pod", "--all", "-n", "hold", "--timeout=60s")
        self.k("delete", "pod", "held", "busy", "hooked", "-n", "hold", "--wait=false")

    def foreground(self) -> None:
        self.namespace("fg")
        self.apply(deployment("fg", "fg", 1, {"pod-stop.stage.kwok.x-k8s.io/delay": "1s"}))
        self.k("rollout", "status", "deploy/fg", "-n", "fg", "--timeout=60s")
        name = self.k("get", "pod", "-n", "fg", "-o", "jsonpath={.items[0].metadata.name}")
        self.k("patch", "pod", name, "-n", "fg", "--type=merge",
               "-p", json.dumps({"metadata": {"finalizers": [HOLD]}}))
        self.k("delete", "deploy", "fg", "-n", "fg", "--cascade=foreground", "--wait=false")

    def doomed_namespace(self) -> None:
        self.namespace("doomed")
        self.apply({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "keep", "namespace": "doomed", "finalizers": [HOLD]}})
        self.k("delete", "namespace", "doomed", "--wait=false")

    def lost_nodes(self) -> None:
        """victim on kwok-node-2 (lost), orphan on kwok-node-1 (lost, then deleted)."""
        self.namespace("lost")
        self.namespace("gone")
        self.apply(pod("victim", "lost", node="kwok-node-2"),
                   pod("orphan", "gone", node="kwok-node-1"))
        self.k("wait", "--for=condition=Ready", "pod/victim", "-n", "lost", "--timeout=60s")
        self.k("wait", "--for=condition=Ready", "pod/orphan", "-n", "gone", "--timeout=60s")
        self.plane.lose_node("kwok-node-2")
        self.plane.lose_node("kwok-node-1")
        time.sleep(16)  # node-monitor-grace-period 10 s, then the nodes go Unknown
        self.k("delete", "pod", "victim", "-n", "lost", "--wait=false")
        self.k("delete", "pod", "orphan", "-n", "gone", "--wait=false")
        time.sleep(8)
        self.k("delete", "node", "kwok-node-1", "--wait=false")

    def missed_while_down(self, restart_recorder) -> None:
        """The recorder is killed; a held pod is released and deleted; etcd is compacted;
        the recorder restarts from its checkpoint and must relist."""
        self.namespace("gap")
        self.apply(self.pod("missed", "gap", finalizer=True))
        self.k("wait", "--for=condition=Ready", "pod/missed", "-n", "gap", "--timeout=60s")
        self.k("delete", "pod", "missed", "-n", "gap", "--wait=false")
        time.sleep(12)
        restart_recorder(lambda: self._release_and_compact())

    def _release_and_compact(self) -> None:
        self.k("patch", "pod", "missed", "-n", "gap", "--type=merge",
               "-p", json.dumps({"metadata": {"finalizers": None}}))
        self.apply(self.pod("ghost", "gap"))
        time.sleep(3)
        self.k("delete", "pod", "ghost", "-n", "gap", "--wait=false")
        time.sleep(3)
        self.plane.compact_etcd()
        # The watch cache keeps its own history; a restart makes the old resourceVersion 410.
        self.plane.restart_component("kube-apiserver")


def watchers(plane: LocalControlPlane, out: Path, kinds: list[str] = KINDS) -> list[subprocess.Popen]:
    out.mkdir(parents=True, exist_ok=True)
    procs = []
    for kind in kinds + ["leases"]:
        scope = ["-n", "kube-node-lease"] if kind == "leases" else ["-A"]
        argv = [str(plane.kubectl_bin), "--kubeconfig", str(plane.kubeconfig), "get", kind,
                *scope, "--watch", "--output-watch-events", "-o", "json"]
        procs.append(subprocess.Popen(argv, stdout=open(out / f"{kind}.json", "ab"),
                                      stderr=subprocess.DEVNULL))
    return procs


def recorder(plane: LocalControlPlane, out: Path) -> subprocess.Popen:
    argv = ["record", "--kubeconfig", str(plane.kubeconfig), "--cluster", "capture",
            "--out", str(out), "--state-dir", str(out.parent / "recorder-state")]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    code = "import sys; from ktrace.cli import main; sys.argv[0]='ktrace'; main()"
    return subprocess.Popen([sys.executable, "-c", code, *argv], env=env,
                            stderr=open(out.parent / "recorder.log", "ab"))


class Capture:
    """The kubectl watchers (OUT/kubectl) and the recorder (OUT/recording) of one run."""

    def __init__(self, plane: LocalControlPlane, out: Path, kinds: list[str] = KINDS) -> None:
        self.plane, self.out, self.kinds = plane, out, kinds
        self.kubectl: list[subprocess.Popen] = []
        self.recorder: subprocess.Popen | None = None

    def start(self) -> None:
        self.start_watchers()
        self.start_recorder()

    def start_watchers(self) -> None:
        self.kubectl = watchers(self.plane, self.out / "kubectl", self.kinds)

    def start_recorder(self) -> None:
        self.recorder = recorder(self.plane, self.out / "recording")

    def kill_recorder(self) -> None:
        """SIGKILL: no SESSION_END, no last flush or checkpoint, as in a crash."""
        assert self.recorder is not None
        self.recorder.kill()
        self.recorder.wait()
        self.recorder = None

    def stop_watchers(self) -> None:
        for proc in self.kubectl:
            proc.terminate()
        for proc in self.kubectl:
            proc.wait(timeout=30)
        self.kubectl = []

    def stop(self) -> None:
        if self.recorder is not None:
            self.recorder.terminate()
            self.recorder.wait(timeout=30)
            self.recorder = None
        self.stop_watchers()


def main(out: Path) -> None:
    plane = LocalControlPlane(work_dir=out / "plane", nodes=3, stage_set="race")
    plane.start()
    capture = Capture(plane, out)

    def restart_recorder(while_down) -> None:
        capture.kill_recorder()
        while_down()
        capture.stop_watchers()  # the API server restart ended the kubectl watches too
        capture.start()

    try:
        capture.start()
        time.sleep(3)
        play = Scenario(plane)
        play.rollout("race")
        play.rollout("graceful", {"pod-stop.stage.kwok.x-k8s.io/delay": "3s"})
        play.holds()
        play.foreground()
        play.doomed_namespace()
        play.lost_nodes()
        play.missed_while_down(restart_recorder)
        time.sleep(40)  # past every grace period plus the stuck margin
    finally:
        capture.stop()
        plane.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
