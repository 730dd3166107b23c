"""ktrace on the real node (marker node): containers that really start, are probed, get
SIGTERM and die, recorded by ``ktrace record`` and replayed, each answer checked against
what the kubelet itself wrote (container finishedAt, exit codes, its Events) and what the
endpointslice controller did.
"""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests import node_workloads as w
from tests.infra.k8s import LocalControlPlane
from tests.infra.polling import eventually
from tests.infra.node import NODE_NAME, RealNode
from tests.infra.service_network import ServiceNetwork
from tests.node_recorder import Recording, api_time, get

pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def services(node_cluster: tuple[LocalControlPlane, RealNode],
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceNetwork]:
    plane, _ = node_cluster
    network = ServiceNetwork(plane, tmp_path_factory.mktemp("services"))
    network.start()
    yield network
    network.stop()


@pytest.fixture
def recording(node_cluster: tuple[LocalControlPlane, RealNode], node_namespace: str,
              tmp_path: Path) -> Iterator[Recording]:
    plane, _ = node_cluster
    rec = Recording(plane, tmp_path, node_namespace)
    yield rec
    if rec.process.poll() is None:
        rec.process.kill()
        rec.process.wait()


def test_the_node_runs_real_containers(node_cluster: tuple[LocalControlPlane, RealNode],
                                       node_namespace: str) -> None:
    plane, _ = node_cluster
    node = get(plane, "node", NODE_NAME)
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")
    w.apply(plane, w.pod("hello", node_namespace, w.container("app", "echo hello from $(hostname); exec sleep 3600")))
    plane.kubectl("wait", "--for=condition=Ready", "pod/hello", "-n", node_namespace, "--timeout=60s")
    pod = get(plane, "pod", "hello", "-n", node_namespace)
    assert pod["spec"]["nodeName"] == NODE_NAME
    assert pod["status"]["podIP"].startswith("10.250.0.")
    assert pod["status"]["containerStatuses"][0]["containerID"].startswith("containerd://")
    reasons = {e["reason"] for e in get(plane, "events", "-n", node_namespace)["items"]
               if e["involvedObject"]["name"] == "hello"}
    assert {"Scheduled", "Pulled", "Created", "Started"} <= reasons


def test_the_kubelet_answers_through_the_api_server_and_no_one_unauthorized(
        node_cluster: tuple[LocalControlPlane, RealNode], node_namespace: str) -> None:
    plane, node = node_cluster
    w.apply(plane, w.pod("talker", node_namespace, w.container("app", "echo said by talker; exec sleep 3600")))
    plane.kubectl("wait", "--for=condition=Ready", "pod/talker", "-n", node_namespace, "--timeout=60s")
    assert plane.kubectl("logs", "talker", "-n", node_namespace) == "said by talker\n"
    assert plane.kubectl("exec", "talker", "-n", node_namespace, "--", "echo", "said through exec") == \
        "said through exec\n"
    # Directly, with its serving certificate checked against the test CA: no credentials are
    # refused (401); a token the API server vouches for, of an account without rights on the
    # node, is refused by the API server's authorization (403).
    kubelet = f"https://127.0.0.1:{node.kubelet_port}/pods"
    context = ssl.create_default_context(cafile=str(plane.pki.ca_cert))
    token = {"Authorization": f"Bearer {plane.token_for('default', node_namespace)}"}
    for headers, status in (({}, 401), (token, 403)):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(kubelet, headers=headers), context=context, timeout=10)
        assert refused.value.code == status


def test_a_container_ignoring_sigterm_is_killed_at_its_deadline(
    node_cluster: tuple[LocalControlPlane, RealNode], node_namespace: str, recording: Recording
) -> None:
    plane, _ = node_cluster
    w.apply(plane, w.stubborn(node_namespace, grace=3))
    plane.kubectl("wait", "--for=condition=Ready", "pod/stubborn", "-n", node_namespace, "--timeout=60s")
    plane.kubectl("delete", "pod", "stubborn", "-n", node_namespace, "--wait=false")
    eventually(lambda: not get(plane, "pods", "-n", node_namespace)["items"], "the pod gone")
    con = recording.replay()

    # What the kubelet wrote: the last version of the pod, as recorded.
    last = json.loads(con.execute(
        "SELECT object FROM raw_events WHERE kind = 'Pod' AND name = 'stubborn' AND object IS NOT NULL "
        "ORDER BY rv DESC LIMIT 1").fetchone()[0])
    terminated = last["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 137  # SIGKILL: the SIGTERM was ignored
    deletion = api_time(last["metadata"]["deletionTimestamp"])  # set to request + grace
    assert abs(api_time(terminated["finishedAt"]) - deletion) <= 1.5  # killed at the deadline

    steps = dict(con.execute(
        "SELECT step, epoch(time) FROM pod_transitions WHERE pod = 'stubborn'").fetchall())
    assert {"deletion_requested", "containers_stopped"} <= steps.keys()
    assert 2.5 <= steps["containers_stopped"] - steps["deletion_requested"] <= 6
    killing = con.execute(
        "SELECT message FROM k8s_events WHERE regarding_name = 'stubborn' AND reason = 'Killing'").fetchall()
    assert killing and "Stopping container app" in killing[0][0]


def roll_and_settle(plane: LocalControlPlane, namespace: str, prestop_seconds: int,
                    when_ready: Callable[[], None] = lambda: None) -> None:
    w.rollout(plane, namespace, prestop_seconds, when_ready)
    # the old pods are gone once their containers stopped (preStop included)
    eventually(lambda: len(get(plane, "pods", "-n", namespace)["items"]) == 2, "old pods gone")
    time.sleep(3)


def kubelet_truth(con: duckdb.DuckDBPyConnection, uid: str) -> tuple[float, float]:
    """(deletion requested, container finished) by the objects' own clocks: the deletion
    timestamp minus the grace period, and the kubelet's finishedAt."""
    versions = [json.loads(o) for (o,) in con.execute(
        "SELECT object FROM raw_events WHERE uid = ? AND object IS NOT NULL ORDER BY rv", [uid]).fetchall()]
    deleting = next(v for v in versions if v["metadata"].get("deletionTimestamp"))
    requested = api_time(deleting["metadata"]["deletionTimestamp"]) - deleting["metadata"]["deletionGracePeriodSeconds"]
    finished = max(api_time(s["state"]["terminated"]["finishedAt"])
                   for v in versions for s in v["status"].get("containerStatuses", [])
                   if "terminated" in s.get("state", {}))
    return requested, finished


# kube-proxy applies an EndpointSlice change at its next sync: at most its minSyncPeriod (1 s)
# after the change, plus the time to write the rules.
PROXY_SYNC_S = 2.0


def sent_requests(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("prestop_seconds", [0, 3])
def test_rollout_race_verdicts_agree_with_the_kubelet_and_the_failed_requests(
    node_cluster: tuple[LocalControlPlane, RealNode], node_namespace: str, recording: Recording,
    services: ServiceNetwork, tmp_path: Path, prestop_seconds: int
) -> None:
    """The ground truth: requests sent through the Service's ClusterIP by kube-proxy's rules
    during the rollout, the failed ones set beside ktrace's verdicts pod by pod."""
    plane, _ = node_cluster
    requests_log = tmp_path / "requests.jsonl"
    probers = []

    def probe_when_ready() -> None:
        cluster_ip = get(plane, "service", "web", "-n", node_namespace)["spec"]["clusterIP"]
        eventually(lambda: services.rules_for(cluster_ip), "kube-proxy programs the Service")
        probers.append(services.probe(f"http://{cluster_ip}/", requests_log))

    roll_and_settle(plane, node_namespace, prestop_seconds, probe_when_ready)
    probers[0].stop()
    con = recording.replay()
    rows = con.execute(
        "SELECT uid, pod, verdict, epoch(endpoint_off_at), epoch(containers_stopped_at), exposed_s "
        "FROM races ORDER BY pod").fetchall()
    assert len(rows) == 2, rows  # both old pods were deleted behind the Service
    sent = sent_requests(requests_log)
    failed = [r for r in sent if "error" in r]
    assert any(r.get("backend") == pod for r in sent for _, pod, *_ in rows)  # the old pods served
    for uid, pod, verdict, endpoint_off, stopped, exposed in rows:
        requested, finished = kubelet_truth(con, uid)
        # The container stopped when the kubelet says, within the 1 s of its timestamp and
        # the status update's way to the API server.
        assert finished - 1 <= stopped <= finished + 3
        # No request was answered by a pod after ktrace says its containers stopped.
        assert all(r["end"] <= stopped + 1 for r in sent if r.get("backend") == pod)
        if prestop_seconds:
            assert finished - requested >= prestop_seconds - 1  # the preStop sleep ran first
            assert verdict == "ok" and exposed < 0
        else:
            # SIGTERM ends the server at once, while the endpoint waits for the slice controller's
            # batch: the real containers stopped before the endpoint went off.
            assert finished < endpoint_off + 1
            assert verdict in ("stopped_before_endpoint_off", "within_margin"), (verdict, exposed)
    # Every failed request fell where ktrace says a pod was exposed: after its containers
    # stopped and before kube-proxy applied its endpoint's removal.
    windows = {pod: (stopped - 1, endpoint_off + PROXY_SYNC_S) for _, pod, _, endpoint_off, stopped, _ in rows}
    failed_by_pod = {pod: [r for r in failed if lo <= r["start"] <= hi] for pod, (lo, hi) in windows.items()}
    print(f"preStop {prestop_seconds}s: {len(sent)} requests, {len(failed)} failed "
          f"({sorted({r['error'] for r in failed})});",
          [(pod, verdict, f"exposed {exposed:.3f}s", f"{len(failed_by_pod[pod])} failed")
           for _, pod, verdict, _, _, exposed in rows])
    unexplained = [r for r in failed if not any(r in during for during in failed_by_pod.values())]
    assert not unexplained, (unexplained[:5], windows)
    if prestop_seconds:
        assert not failed  # the preStop kept each pod serving until kube-proxy dropped it
    else:
        assert failed  # the race ktrace found cost real requests
