"""The test control plane behaves like a cluster: scheduling, kwok's fake kubelets,
EndpointSlices, deletion, finalizers and 410 Gone are real."""

from __future__ import annotations

import json
import ssl
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.infra.k8s import Cluster, ControlPlaneError, LocalControlPlane
from tests.infra.polling import eventually

pytestmark = pytest.mark.k8s

Events = list[tuple[float, dict[str, Any]]]  # (time.monotonic() received, watch event)

WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: nginx, ports: [{containerPort: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
"""


def get(cluster: Cluster, *args: str) -> dict[str, Any]:
    return json.loads(cluster.kubectl("get", *args, "-o", "json"))


def condition(obj: dict[str, Any], kind: str) -> str | None:
    found = [c["status"] for c in obj["status"].get("conditions", []) if c["type"] == kind]
    return found[0] if found else None


def running_and_ready(pod: dict[str, Any]) -> bool:
    statuses = pod["status"].get("containerStatuses", [])
    return (
        pod["status"].get("phase") == "Running"
        and condition(pod, "Ready") == "True"
        and bool(pod["status"].get("podIP"))
        and bool(statuses)
        and all("running" in s["state"] for s in statuses)
    )


def watch(cluster: Cluster, path: str) -> Iterator[dict[str, Any]]:
    """Stream a raw watch through kubectl; stops when the caller stops iterating."""
    argv = [str(cluster.kubectl_bin), "--kubeconfig", str(cluster.kubeconfig), "get", "--raw", path]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as process:
        try:
            for line in process.stdout:  # type: ignore[union-attr]
                yield json.loads(line)
        finally:
            process.terminate()


def run_pod(
    cluster: Cluster, namespace: str, name: str, metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **(metadata or {})},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
    }
    cluster.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(pod))

    def running() -> dict[str, Any] | None:
        current = get(cluster, "pod", name, "-n", namespace)
        return current if running_and_ready(current) else None

    return eventually(running, f"pod {name} running")


def delete_and_follow(cluster: Cluster, namespace: str, pod: dict[str, Any]) -> Events:
    """Delete the pod; return its watch events until DELETED."""
    name, rv = pod["metadata"]["name"], pod["metadata"]["resourceVersion"]
    query = f"watch=1&fieldSelector=metadata.name%3D{name}&resourceVersion={rv}&timeoutSeconds=60"
    events: Events = []
    cluster.kubectl("delete", "pod", name, "-n", namespace, "--wait=false")
    for event in watch(cluster, f"/api/v1/namespaces/{namespace}/pods?{query}"):
        events.append((time.monotonic(), event))
        if event["type"] == "DELETED":
            break
    return events


def first(events: Events, test: Callable[[dict[str, Any]], bool]) -> float:
    """When the first event whose object passes test was received."""
    return next(t for t, e in events if test(e["object"]))


def containers_stopped(pod: dict[str, Any]) -> bool:
    statuses = pod["status"].get("containerStatuses", [])
    return bool(statuses) and all(s["state"].get("terminated", {}).get("exitCode") == 143 for s in statuses)


def test_fake_nodes_are_ready(k8s_cluster: Cluster) -> None:
    nodes = get(k8s_cluster, "nodes", "-l", "type=kwok")["items"]
    assert len(nodes) >= 2
    assert all(condition(n, "Ready") == "True" for n in nodes)


def test_token_for_authenticates_as_the_service_account(
    k8s_control_plane: LocalControlPlane, k8s_namespace: str
) -> None:
    token = k8s_control_plane.token_for("default", k8s_namespace)
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    request = urllib.request.Request(
        f"{k8s_control_plane.server}/apis/authentication.k8s.io/v1/selfsubjectreviews",
        data=json.dumps(review).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    context = ssl.create_default_context(cafile=str(k8s_control_plane.pki.ca_cert))
    with urllib.request.urlopen(request, context=context) as response:
        user = json.load(response)["status"]["userInfo"]["username"]
    assert user == f"system:serviceaccount:{k8s_namespace}:default"


def test_a_lost_node_goes_unknown_and_is_tainted(k8s_cluster: Cluster) -> None:
    name = f"lost-{uuid.uuid4().hex[:6]}"
    k8s_cluster.add_node(name)
    try:
        eventually(lambda: condition(get(k8s_cluster, "node", name), "Ready") == "True", "node Ready")
        k8s_cluster.lose_node(name)  # no more heartbeats nor Lease renewals

        def unknown() -> dict[str, Any] | None:
            node = get(k8s_cluster, "node", name)
            return node if condition(node, "Ready") == "Unknown" else None

        eventually(unknown, "node Unknown after the 10s grace period")

        # The node lifecycle controller writes the condition and the taint in two updates:
        # a read between them sees Unknown untainted.
        def tainted() -> bool:
            taints = get(k8s_cluster, "node", name)["spec"].get("taints", [])
            return "node.kubernetes.io/unreachable" in {t["key"] for t in taints}

        eventually(tainted, "node tainted unreachable once Unknown")
    finally:
        k8s_cluster.kubectl("delete", "node", name, "--wait=false")


def test_deployment_pods_are_scheduled_run_and_back_the_service(
    k8s_cluster: Cluster, k8s_namespace: str
) -> None:
    k8s_cluster.kubectl("apply", "-n", k8s_namespace, "-f", "-", input=WEB)

    def pods_ready() -> list[dict[str, Any]] | None:
        pods = get(k8s_cluster, "pods", "-n", k8s_namespace, "-l", "app=web")["items"]
        return pods if len(pods) == 2 and all(map(running_and_ready, pods)) else None

    pods = eventually(pods_ready, "2 web pods running and ready")
    assert all(p["spec"].get("nodeName") for p in pods)  # bound by kube-scheduler

    def endpoints() -> set[str] | None:
        selector = "kubernetes.io/service-name=web"
        slices = get(k8s_cluster, "endpointslices", "-n", k8s_namespace, "-l", selector)
        ready = {
            e["targetRef"]["uid"]
            for s in slices["items"]
            for e in s.get("endpoints") or []
            if e["conditions"].get("ready")
        }
        return ready if len(ready) == 2 else None

    assert eventually(endpoints, "2 ready endpoints") == {p["metadata"]["uid"] for p in pods}


def test_deleted_pod_stops_gracefully_then_goes_away(k8s_cluster: Cluster, k8s_namespace: str) -> None:
    pod = run_pod(k8s_cluster, k8s_namespace, "graceful")
    events = delete_and_follow(k8s_cluster, k8s_namespace, pod)

    requested = first(events, lambda p: "deletionTimestamp" in p["metadata"])
    stopped = first(events, containers_stopped)
    terminal = first(events, lambda p: p["status"]["phase"] == "Failed")
    assert requested + 2.5 < stopped <= terminal  # the graceful stage's 3s pause before the containers exit
    assert events[-1][1]["type"] == "DELETED"


def test_stop_delay_annotation_makes_containers_exit_at_once(
    k8s_cluster: Cluster, k8s_namespace: str
) -> None:
    metadata = {"annotations": {"pod-stop.stage.kwok.x-k8s.io/delay": "0s"}}
    pod = run_pod(k8s_cluster, k8s_namespace, "racy", metadata)
    events = delete_and_follow(k8s_cluster, k8s_namespace, pod)

    requested = first(events, lambda p: "deletionTimestamp" in p["metadata"])
    assert first(events, containers_stopped) < requested + 1.5
    assert events[-1][1]["type"] == "DELETED"


def test_pod_with_a_finalizer_stays_terminating(k8s_cluster: Cluster, k8s_namespace: str) -> None:
    run_pod(k8s_cluster, k8s_namespace, "held", {"finalizers": ["example.com/hold"]})
    k8s_cluster.kubectl("delete", "pod", "held", "-n", k8s_namespace, "--wait=false")

    def let_go() -> dict[str, Any] | None:
        pod = get(k8s_cluster, "pod", "held", "-n", k8s_namespace)
        return pod if pod["metadata"].get("deletionGracePeriodSeconds") == 0 else None

    pod = eventually(let_go, "kwok's delete with grace 0")  # what a kubelet does once containers stopped
    assert containers_stopped(pod) and pod["status"]["phase"] == "Failed"
    time.sleep(2)
    pod = get(k8s_cluster, "pod", "held", "-n", k8s_namespace)
    assert pod["metadata"]["deletionTimestamp"] and pod["metadata"]["finalizers"] == ["example.com/hold"]

    release = '[{"op": "remove", "path": "/metadata/finalizers"}]'
    k8s_cluster.kubectl("patch", "pod", "held", "-n", k8s_namespace, "--type=json", "-p", release)
    k8s_cluster.kubectl("wait", "--for=delete", "pod/held", "-n", k8s_namespace, "--timeout=30s")


def churned_configmaps(cluster: Cluster, namespace: str) -> str:
    """Write some configmaps; return the collection's resourceVersion from before."""
    old = json.loads(cluster.kubectl("get", "--raw", f"/api/v1/namespaces/{namespace}/configmaps"))
    for i in range(3):
        cluster.kubectl("create", "configmap", f"churn-{i}", "-n", namespace)
    return old["metadata"]["resourceVersion"]


def test_compaction_expires_lists_at_an_old_resource_version(
    k8s_control_plane: LocalControlPlane, k8s_namespace: str
) -> None:
    old = churned_configmaps(k8s_control_plane, k8s_namespace)
    assert k8s_control_plane.compact_etcd() > int(old)
    path = f"/api/v1/namespaces/{k8s_namespace}/configmaps?resourceVersion={old}&resourceVersionMatch=Exact"

    def expired() -> str | None:  # once the API server drops its older list snapshots (<= 15s)
        try:
            k8s_control_plane.kubectl("get", "--raw", path)
        except ControlPlaneError as e:
            return str(e)
        return None

    assert "(Expired)" in eventually(expired, "410 on an exact list at the compacted revision", timeout=40)


def test_apiserver_restart_after_compaction_expires_watches(
    k8s_control_plane: LocalControlPlane, k8s_namespace: str
) -> None:
    old = churned_configmaps(k8s_control_plane, k8s_namespace)
    k8s_control_plane.compact_etcd()
    # Until then the watch cache would still replay the history etcd no longer has.
    k8s_control_plane.restart_component("kube-apiserver")

    path = f"/api/v1/namespaces/{k8s_namespace}/configmaps?watch=1&resourceVersion={old}&timeoutSeconds=10"
    event = eventually(lambda: next(watch(k8s_control_plane, path), None), "a watch answer")
    assert event["type"] == "ERROR"
    assert (event["object"]["code"], event["object"]["reason"]) == (410, "Expired")
