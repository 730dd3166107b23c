"""The ktrace image (marker deploy): built from compose/Dockerfile without a Docker engine
(compose/image/build.sh: buildah over a Debian base), run by podman as a user would run it,
hardened (read-only root, every capability dropped, uid 10001), and run as a pod on the
real node with the least-privilege RBAC of compose/kubernetes/rbac.yaml.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.infra.fixtures_image import IMAGE, VERSION
from tests.infra.k8s import Cluster, LocalControlPlane
from tests.infra.node import RealNode, pod_placement
from tests.replayer_data import load_recording, rows

pytestmark = pytest.mark.deploy
REPO = Path(__file__).resolve().parents[1]
PODMAN = REPO / "compose" / "image" / "podman.sh"
HARDENED = ["--read-only", "--cap-drop=all", "--user", "10001:10001", "--security-opt", "no-new-privileges"]


@pytest.fixture
def image(image_archive: Path) -> str:
    return IMAGE


def podman(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PODMAN), *args], capture_output=True, text=True, timeout=timeout)


def test_the_image_runs_hardened(image: str) -> None:
    began = time.monotonic()
    done = podman("run", "--rm", *HARDENED, "--entrypoint", "ktrace", image, "--version")
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ktrace, version {VERSION}"
    assert took < 30  # a cold start of the CLI in a container, including podman's own setup
    inspect = json.loads(podman("image", "inspect", image).stdout)[0]
    assert inspect["Config"]["User"] == "10001:10001"
    assert inspect["Config"]["Entrypoint"] == ["ktrace", "record"]


def test_the_image_records_and_stops_cleanly_on_sigterm(image: str, k8s_cluster: Cluster, k8s_namespace: str,
                                                        tmp_path: Path) -> None:
    """A short `record` against the test control plane from a mounted kubeconfig; podman
    stop sends SIGTERM: ktrace flushes, checkpoints and exits 0; the recording replays."""
    kube = tmp_path / "kube"
    kube.mkdir()
    (kube / "config").write_text(k8s_cluster.kubeconfig.read_text())
    (kube / "config").chmod(0o644)  # read by uid 10001 in the container
    state = tmp_path / "state"
    state.mkdir(mode=0o777)
    state.chmod(0o777)
    name = f"ktrace-smoke-{uuid.uuid4().hex[:8]}"
    started = podman("run", "-d", "--name", name, *HARDENED, "-v", f"{kube}:/kube:ro",
                     "-v", f"{state}:/var/lib/ktrace", image,
                     "--kubeconfig=/kube/config", "--out=/var/lib/ktrace/log", "--state-dir=/var/lib/ktrace",
                     "--kinds=pods,events", f"--namespace={k8s_namespace}", "--log-format=json")
    assert started.returncode == 0, started.stderr
    try:
        k8s_cluster.kubectl("run", "hello", "-n", k8s_namespace, "--image=registry.example/app:1",
                            "--restart=Never")
        time.sleep(8)  # the LIST, the pod's creation and its kwok-driven updates
        stopped = podman("stop", "--time", "30", name)
        assert stopped.returncode == 0, stopped.stderr
        exit_code = podman("inspect", name, "--format", "{{.State.ExitCode}}").stdout.strip()
        logs = podman("logs", name).stderr + podman("logs", name).stdout
        assert exit_code == "0", logs
    finally:
        podman("rm", "--force", name)
    assert "SIGTERM" in logs
    con = load_recording(str(tmp_path / "r.duckdb"), str(state / "log"))
    assert rows(con, "SELECT count(*) > 0 FROM raw_events WHERE kind = 'Pod' AND name = 'hello'") == [(True,)]


RECORDER_NAMESPACE = "ktrace"


def recorder_pod(image: str, plane: LocalControlPlane, watched: str, data: Path) -> dict:
    """The recorder as compose/kubernetes runs it, on the real node. Pods here cannot reach
    the Service network (no kube-proxy), so it runs on the host's network and is told where
    the API server listens; it authenticates with its ServiceAccount's token as in any cluster."""
    container = {
        "name": "recorder", "image": image, "imagePullPolicy": "Never",
        "args": ["--out=/data/log", "--state-dir=/data", "--kinds=pods,events", f"--namespace={watched}",
                 "--log-format=json"],
        "env": [{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"},
                {"name": "KUBERNETES_SERVICE_PORT", "value": str(plane.api_port)}],
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
        "securityContext": {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                            "runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10001,
                            "capabilities": {"drop": ["ALL"]}},
    }
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "recorder", "namespace": RECORDER_NAMESPACE},
        "spec": {"serviceAccountName": "ktrace-recorder", "hostNetwork": True, "containers": [container],
                 "terminationGracePeriodSeconds": 30,
                 "volumes": [{"name": "data", "hostPath": {"path": str(data), "type": "Directory"}}],
                 **pod_placement()},
    }


def test_the_recorder_runs_as_a_pod_on_the_real_node(image_archive: Path,
                                                     node_cluster: tuple[LocalControlPlane, RealNode],
                                                     node_namespace: str, tmp_path: Path) -> None:
    plane, node = node_cluster
    node.import_archive(image_archive)
    image = IMAGE
    plane.kubectl("create", "namespace", RECORDER_NAMESPACE)
    plane.kubectl("apply", "-f", str(REPO / "compose" / "kubernetes" / "rbac.yaml"))
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o777)  # the pod's uid 10001 writes the log here
    try:
        plane.kubectl("apply", "-f", "-", input=json.dumps(recorder_pod(image, plane, node_namespace, data)))
        plane.kubectl("wait", "--for=condition=Ready", "pod/recorder", "-n", RECORDER_NAMESPACE, "--timeout=120s")
        plane.kubectl("run", "workload", "-n", node_namespace, "--image=registry.example/app:1", "--restart=Never")
        time.sleep(8)
        plane.kubectl("delete", "pod", "recorder", "-n", RECORDER_NAMESPACE, "--timeout=60s")
    finally:
        plane.kubectl("delete", "namespace", RECORDER_NAMESPACE, "--wait=false")
    con = load_recording(str(tmp_path / "r.duckdb"), str(data / "log"))
    assert rows(con, "SELECT count(*) > 0 FROM raw_events WHERE kind = 'Pod' AND name = 'workload'") == [(True,)]
    # In-cluster credentials (its ServiceAccount), and the kubelet's SIGTERM ended the session
    # cleanly: a SESSION_END record, no unseen stretch.
    assert rows(con, "SELECT DISTINCT cluster FROM raw_events") == [("in-cluster",)]
    assert rows(con, "SELECT count(DISTINCT topic) FILTER (WHERE type = 'SESSION_END') = count(DISTINCT topic) "
                     "FROM raw_events") == [(True,)]
