"""Record the real node's scenarios (tests/node_workloads.py) with ``ktrace record``.

    .venv/bin/python tests/data/node/capture.py OUT_DIR

Starts a control plane with one kwok node and the real node (kubelet + containerd + runc,
tests/infra/node.py), runs ``ktrace record`` into OUT_DIR/recording, and plays, each in a
namespace of its own:

  race/web       a rollout of an HTTP Deployment: its containers exit on SIGTERM at once
  prestop/web    the same with a 3 s preStop sleep: endpoints go before the containers stop
  sigterm        a pod that ignores SIGTERM, deleted: SIGKILL (137) at its 3 s deadline
  oom            a container past its memory limit: OOMKilled, restarted
  crash          a container, and an init container, failing with a termination message
  initcmd        an init container whose command does not exist (StartError, exit 128)
  image          an image that is not present: pulled (ErrImagePull) and never pulled
  config         an env var from a ConfigMap key that does not exist
  probes         a failing readiness probe, and a failing liveness probe (restarts)
  jobs           a Job failing by its backoff limit, one failed by its podFailurePolicy
  evict          a pod writing past its emptyDir sizeLimit: evicted
  sandbox        a pod whose RuntimeClass handler does not exist
  storage        a pod whose claim names a StorageClass that does not exist

It ends with the failing pods still failing, as an incident would be seen, and writes
OUT_DIR/versions.txt (kubelet, containerd, runc).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests import node_workloads as w  # noqa: E402
from tests.data.replayer.capture import recorder  # noqa: E402
from tests.infra.k8s import LocalControlPlane  # noqa: E402
from tests.infra.node import RealNode  # noqa: E402


def namespace(plane: LocalControlPlane, name: str) -> str:
    plane.kubectl("create", "namespace", name)
    plane.kubectl("wait", "--for=create", "serviceaccount/default", "-n", name, "--timeout=60s")
    return name


def failing_workloads(plane: LocalControlPlane) -> None:
    """Everything that fails by itself, started together: they fail while the rest plays."""
    w.apply(plane, w.oom(namespace(plane, "oom")))
    w.apply(plane, w.crash_loop(namespace(plane, "crash")), w.init_crash_loop("crash"))
    w.apply(plane, w.init_command_missing(namespace(plane, "initcmd")))
    w.apply(plane, w.image_absent(namespace(plane, "image")), w.image_never_pulled("image"))
    w.apply(plane, *w.config_key_missing(namespace(plane, "config")))
    w.apply(plane, *w.probes_failing(namespace(plane, "probes")))
    w.apply(plane, *w.jobs_failing(namespace(plane, "jobs")))
    w.apply(plane, w.ephemeral_storage_filler(namespace(plane, "evict")))
    w.apply(plane, *w.runtime_class_missing(namespace(plane, "sandbox")))
    w.apply(plane, *w.storage_class_missing(namespace(plane, "storage")))


def stop_stubborn(plane: LocalControlPlane) -> None:
    ns = namespace(plane, "sigterm")
    w.apply(plane, w.stubborn(ns))
    plane.kubectl("wait", "--for=condition=Ready", "pod/stubborn", "-n", ns, "--timeout=60s")
    plane.kubectl("delete", "pod", "stubborn", "-n", ns, "--wait=false")


def versions(node: RealNode) -> str:
    def first_line(*argv: str) -> str:
        return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0]

    return "\n".join([
        first_line(str(node.plane.bin_dir / "kubelet"), "--version"),
        first_line("containerd", "--version"),
        first_line("runc", "--version"),
    ]) + "\n"


@contextmanager
def real_node(out: Path, kwok_nodes: int = 1,
              kubelet_settings: Callable[[], Mapping[str, Any]] | None = None) -> Iterator[RealNode]:
    """A control plane with KWOK_NODES kwok nodes and the real node, the node's versions in
    OUT/versions.txt; all stopped after. KUBELET_SETTINGS, called once the control plane
    runs, gives the node's kubelet settings (RealNode's)."""
    plane = LocalControlPlane(work_dir=out / "plane", nodes=kwok_nodes)
    plane.start()
    node = RealNode(plane, work_dir=out / "node", kubelet_settings=kubelet_settings() if kubelet_settings else None)
    try:
        node.start()
        (out / "versions.txt").write_text(versions(node))
        yield node
    finally:
        node.stop()
        plane.stop()


@contextmanager
def node_plane(out: Path, kwok_nodes: int = 1,
               kubelet_settings: Callable[[], Mapping[str, Any]] | None = None) -> Iterator[LocalControlPlane]:
    """real_node's control plane."""
    with real_node(out, kwok_nodes, kubelet_settings) as node:
        yield node.plane


@contextmanager
def recorded_real_node(out: Path, kubelet_settings: Callable[[], Mapping[str, Any]] | None = None,
                       ) -> Iterator[RealNode]:
    """real_node with one kwok node, ``ktrace record`` (default kinds) into OUT/recording."""
    with real_node(out, kubelet_settings=kubelet_settings) as node:
        recording = recorder(node.plane, out / "recording")
        try:
            time.sleep(3)
            yield node
        finally:
            recording.terminate()
            recording.wait(timeout=30)


@contextmanager
def recorded_node(out: Path, kubelet_settings: Callable[[], Mapping[str, Any]] | None = None,
                  ) -> Iterator[LocalControlPlane]:
    """recorded_real_node's control plane."""
    with recorded_real_node(out, kubelet_settings) as node:
        yield node.plane


def main(out: Path) -> None:
    with recorded_node(out) as plane:
        failing_workloads(plane)
        w.rollout(plane, namespace(plane, "race"), prestop_seconds=0)
        w.rollout(plane, namespace(plane, "prestop"), prestop_seconds=3)
        stop_stubborn(plane)
        time.sleep(90)  # back-offs grow, Jobs give up, the eviction comes, the deadline passes


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
