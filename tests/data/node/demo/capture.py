"""Record the demo's stories on the real node, with ``ktrace record``.

    .venv/bin/python tests/data/node/demo/capture.py OUT_DIR

The stories of tests/data/replayer/capture.py (the kwok test data), played where a real
kubelet, containerd and runc run the containers (tests/data/node/capture.py node_plane:
the real node real-node-0 and three kwok nodes); ``ktrace record`` (default kinds) records
into OUT_DIR/recording and OUT_DIR/versions.txt names the node's versions:

  race/web      a rollout of the HTTP Deployment of tests/node_workloads.py: its containers
                exit on SIGTERM at once, before their endpoints turn not-ready
  graceful/web  the same rollout with a 3 s preStop sleep (endpoints turn off first)
  hold/held     a pod held Terminating by a finalizer; its container exits on SIGTERM
  hold/busy     a pod whose processes cannot be killed (containers_not_exiting)
  hold/hooked   the same, with a preStop hook that cannot run (prestop_hook)
  fg/fg         a Deployment deleted in the foreground while its pod holds a finalizer
  doomed        a namespace deleted while a ConfigMap in it holds a finalizer
  lost/victim   a pod deleted on a node that stopped heartbeating     } kwok's nodes: a real
  gone/orphan   a pod deleted on a lost node that is then deleted     } node is not lost here
  gap/missed    a finalizer-held pod released while the recorder was down (killed, etcd
                compacted, the API server restarted: the recorder relists)

On a real node a container that ignores SIGTERM, or a preStop hook that does not return,
ends at the grace period's deadline: the kubelet kills it. A pod is held past it only when
the kill fails, as with processes in uninterruptible sleep; here busy's and hooked's pod
cgroups are frozen (cgroup v1 freezer) before their deletion, so the kubelet's SIGTERM and
SIGKILL stay pending (the kubelet's kill waits for its runtimeRequestTimeout, 2 min, then
fails: FailedKillPod), and thawed once the recorder has stopped, so that the node can stop.

It ends with the stuck objects still stuck, as an incident would be seen.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from tests import node_workloads as w  # noqa: E402
from tests.data.node.capture import node_plane  # noqa: E402
from tests.data.replayer.capture import HOLD, Capture, Scenario  # noqa: E402
from tests.infra.k8s import LocalControlPlane  # noqa: E402

# A process that exits at once on SIGTERM (the shell handles it; a plain sleep as PID 1 would not)
EXITS_ON_SIGTERM = "trap 'exit 0' TERM; sleep 3600 & wait"
FREEZER = Path("/sys/fs/cgroup/freezer")


def real_pod(name: str, ns: str, *, finalizer: bool = False, **container: Any) -> w.Manifest:
    """A pod on the real node (grace 5 s); ``finalizer`` holds it Terminating once its
    containers stopped."""
    manifest = w.pod(name, ns, w.container("app", EXITS_ON_SIGTERM, **container))
    if finalizer:
        manifest["metadata"]["finalizers"] = [HOLD]
    return manifest


def set_freezer(cgroup: Path, state: str) -> None:
    """FROZEN or THAWED, and wait until the kernel says so (freezing takes a moment)."""
    (cgroup / "freezer.state").write_text(state)
    deadline = time.monotonic() + 10
    while (cgroup / "freezer.state").read_text().strip() != state:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{cgroup} did not turn {state}")
        time.sleep(0.1)


class RealNodeStories(Scenario):
    """The kwok stories (Scenario), their pods on the real node except the lost nodes'."""

    pod = staticmethod(real_pod)

    def __init__(self, plane: LocalControlPlane) -> None:
        super().__init__(plane)
        self.frozen: list[Path] = []

    def freeze(self, ns: str, name: str) -> None:
        uid = self.k("get", "pod", name, "-n", ns, "-o", "jsonpath={.metadata.uid}")
        (cgroup,) = FREEZER.glob(f"**/pod{uid}")  # the kubelet's cgroupfs name of the pod
        set_freezer(cgroup, "FROZEN")
        self.frozen.append(cgroup)

    def thaw(self) -> None:
        while self.frozen:
            set_freezer(self.frozen.pop(), "THAWED")

    def holds(self) -> None:
        self.namespace("hold")
        hook = {"preStop": {"exec": {"command": ["sleep", "600"]}}}
        self.apply(real_pod("held", "hold", finalizer=True), real_pod("busy", "hold"),
                   real_pod("hooked", "hold", lifecycle=hook))
        self.k("wait", "--for=condition=Ready", "pod", "--all", "-n", "hold", "--timeout=60s")
        self.freeze("hold", "busy")
        self.freeze("hold", "hooked")
        self.k("delete", "pod", "held", "busy", "hooked", "-n", "hold", "--wait=false")

    def foreground(self) -> None:
        self.namespace("fg")
        self.apply(w.web_deployment("fg", "fg", replicas=1))
        self.k("rollout", "status", "deploy/fg", "-n", "fg", "--timeout=60s")
        name = self.k("get", "pod", "-n", "fg", "-o", "jsonpath={.items[0].metadata.name}")
        self.k("patch", "pod", name, "-n", "fg", "--type=merge",
               "-p", json.dumps({"metadata": {"finalizers": [HOLD]}}))
        self.k("delete", "deploy", "fg", "-n", "fg", "--cascade=foreground", "--wait=false")


def main(out: Path) -> None:
    with node_plane(out, kwok_nodes=3) as plane:
        capture = Capture(plane, out)

        def restart_recorder(while_down) -> None:
            capture.kill_recorder()
            while_down()
            capture.start_recorder()

        play = RealNodeStories(plane)
        try:
            capture.start_recorder()
            time.sleep(3)
            for ns, prestop_seconds in (("race", 0), ("graceful", 3)):
                play.namespace(ns)
                w.rollout(plane, ns, prestop_seconds=prestop_seconds)
                time.sleep(6)
            play.holds()
            play.foreground()
            play.doomed_namespace()
            play.lost_nodes()
            play.missed_while_down(restart_recorder)
            # past every grace period plus the stuck margin, and past the kubelet's 2 min
            # runtimeRequestTimeout for the frozen pods' kill: it then says it failed
            time.sleep(100)
        finally:
            capture.stop()
            play.thaw()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
