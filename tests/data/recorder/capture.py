"""Record the raw API streams the recorder's unit tests replay, from the real control plane.

    .venv/bin/python tests/data/recorder/capture.py            # starts a LocalControlPlane
    .venv/bin/python tests/data/recorder/capture.py KUBECONFIG # or uses a running cluster (no 410 capture)

Writes, beside this file: ``deployment/<resource>.list.json`` (the LIST before the scenario)
``deployment/<resource>.watch.jsonl`` (every watch line as the server sent it) while a
Deployment with a Service is created, scaled, rolled to a new image and deleted, with
``pods.pages.json`` (a paged LIST) and ``leases.watch.jsonl`` (heartbeats and BOOKMARKs); and
``gone/pods.watch.jsonl``: a watch from a resourceVersion compacted away (the 410 ERROR line) and ``gone/pods.continue.json``: the 410 for a compacted continue token.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from recorder.kube.catalogue import Target  # noqa: E402
from recorder.kube.client import ApiClient, ApiError, WatchStream  # noqa: E402
from recorder.kube.config import load_config  # noqa: E402
from tests.infra.k8s import Cluster, LocalControlPlane, external_cluster  # noqa: E402

HERE = Path(__file__).resolve().parent
NAMESPACE = "capture"
RESOURCES = (("pods", "", "v1", "Pod"), ("replicasets", "apps", "v1", "ReplicaSet"),
             ("deployments", "apps", "v1", "Deployment"),
             ("endpointslices", "discovery.k8s.io", "v1", "EndpointSlice"),
             ("events", "events.k8s.io", "v1", "Event"))
MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: capture}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: app
        image: nginx:1.25
        env: [{name: PASSWORD, value: hunter2}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: capture}
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""


def targets() -> list[Target]:
    return [Target(r, g, v, k, True, NAMESPACE) for r, g, v, k in RESOURCES]


def capture_watch(api: ApiClient, target: Target, rv: str, out: Path,
                  streams: list[WatchStream]) -> threading.Thread:
    stream = api.stream(target.path, {"watch": "1", "resourceVersion": rv,
                                      "allowWatchBookmarks": "true", "timeoutSeconds": 600},
                        read_timeout=660)
    streams.append(stream)

    def run() -> None:
        with out.open("wb") as fh:
            for line in stream.lines():
                fh.write(line + b"\n")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def wait_pods(cluster: Cluster, want: int, image: str | None = None, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pods = orjson.loads(cluster.kubectl("get", "pods", "-n", NAMESPACE, "-o", "json"))["items"]
        ready = [p for p in pods if any(c["type"] == "Ready" and c["status"] == "True"
                                        for c in p.get("status", {}).get("conditions", []))
                 and (image is None or p["spec"]["containers"][0]["image"] == image)]
        if len(ready) == want and len(pods) == want:
            return
        time.sleep(0.5)
    raise TimeoutError(f"pods not at {want} ready")


def capture_pages(api: ApiClient, out: Path) -> str:
    """Pods listed two at a time (a continue token), while three run; returns the token."""
    path = targets()[0].path
    first = api.get_json(path, {"limit": 2})
    second = api.get_json(path, {"limit": 2, "continue": first["metadata"]["continue"]})
    (out / "pods.pages.json").write_bytes(orjson.dumps([first, second], option=orjson.OPT_INDENT_2))
    return first["metadata"]["continue"]


def scenario(cluster: Cluster, api: ApiClient, out: Path) -> str:
    cluster.kubectl("apply", "-f", "-", input=MANIFEST)
    wait_pods(cluster, 2)
    cluster.kubectl("scale", "deployment/web", "-n", NAMESPACE, "--replicas=3")
    wait_pods(cluster, 3)
    token = capture_pages(api, out)
    cluster.kubectl("set", "image", "deployment/web", "-n", NAMESPACE, "app=nginx:1.26")
    wait_pods(cluster, 3, image="nginx:1.26")
    cluster.kubectl("delete", "deployment/web", "-n", NAMESPACE)
    wait_pods(cluster, 0)
    time.sleep(3)  # let the last EndpointSlice update and Events arrive
    return token


def capture_deployment(cluster: Cluster, api: ApiClient) -> tuple[str, str]:
    cluster.kubectl("create", "namespace", NAMESPACE)
    cluster.kubectl("wait", "--for=create", "serviceaccount/default", "-n", NAMESPACE, "--timeout=60s")
    out = HERE / "deployment"
    out.mkdir(exist_ok=True)
    streams: list[WatchStream] = []
    threads = []
    first_rv = ""
    for target in targets():
        page = api.get_json(target.path, {"limit": 500})
        (out / f"{target.resource}.list.json").write_bytes(orjson.dumps(page, option=orjson.OPT_INDENT_2))
        rv = page["metadata"]["resourceVersion"]
        first_rv = first_rv or rv
        threads.append(capture_watch(api, target, rv, out / f"{target.resource}.watch.jsonl", streams))
    token = scenario(cluster, api, out)
    for stream in streams:
        stream.close()
    for thread in threads:
        thread.join(timeout=5)
    return first_rv, token


def capture_bookmark(api: ApiClient) -> None:
    """A short watch of node Leases (renewed every few seconds): the server sends BOOKMARKs."""
    target = Target("leases", "coordination.k8s.io", "v1", "Lease", True, "kube-node-lease")
    rv = api.get_json(target.path, {"limit": 1})["metadata"]["resourceVersion"]
    stream = api.stream(target.path, {"watch": "1", "resourceVersion": rv,
                                      "allowWatchBookmarks": "true", "timeoutSeconds": 10},
                        read_timeout=40)
    (HERE / "deployment" / "leases.watch.jsonl").write_bytes(
        b"".join(line + b"\n" for line in stream.lines()))
    stream.close()


def capture_gone(plane: LocalControlPlane, api: ApiClient, old_rv: str, token: str) -> None:
    plane.compact_etcd()
    plane.restart_component("kube-apiserver")  # the watch cache forgets what etcd compacted
    out = HERE / "gone"
    out.mkdir(exist_ok=True)
    target = targets()[0]
    stream = api.stream(target.path, {"watch": "1", "resourceVersion": old_rv,
                                      "allowWatchBookmarks": "true", "timeoutSeconds": 5},
                        read_timeout=30)
    with (out / "pods.watch.jsonl").open("wb") as fh:
        for line in stream.lines():
            fh.write(line + b"\n")
    stream.close()
    try:
        api.get_json(target.path, {"limit": 2, "continue": token})
        raise AssertionError("a compacted continue token was accepted")
    except ApiError as exc:
        doc = {"status": exc.status, "reason": exc.reason, "message": exc.message}
        (out / "pods.continue.json").write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))


def main(argv: list[str]) -> int:
    if argv:
        cluster: Cluster = external_cluster(Path(argv[0]))
        api = ApiClient(load_config(argv[0]))
        capture_deployment(cluster, api)
        return 0
    with tempfile.TemporaryDirectory() as work:
        plane = LocalControlPlane(work_dir=Path(work), nodes=2)
        plane.start()
        try:
            api = ApiClient(load_config(str(plane.kubeconfig)))
            old_rv, token = capture_deployment(plane, api)
            capture_bookmark(api)
            capture_gone(plane, api, old_rv, token)
        finally:
            plane.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
