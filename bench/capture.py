"""Record the benchmark's seed workload from the real control plane (tests/infra/k8s.py).

    .venv/bin/python -m bench.capture   # rewrites bench/data/shop.watch.jsonl.gz

Starts a control plane (kwok, "race" stages), opens a raw watch per kind from the list's
resourceVersion, and writes every watch line exactly as the API server sent it, in arrival
order across kinds, while a small shop runs: two Deployments behind Services (pods of
~6 KB with managedFields, env, probes, a sidecar), rolled, scaled, pods deleted, a pod held
Terminating by a finalizer. The objects stay alive at the end, as in a running cluster.
The benchmark scales this seed by cloning (bench/workload.py).
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.workload import SEED
from recorder.kube.client import ApiClient, WatchStream
from recorder.kube.config import load_config
from tests.infra.k8s import LocalControlPlane
NAMESPACE = "shop"
WATCHES = ("/api/v1/pods", "/apis/apps/v1/replicasets", "/apis/apps/v1/deployments",
           "/apis/discovery.k8s.io/v1/endpointslices", "/apis/events.k8s.io/v1/events",
           "/api/v1/nodes", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
           "/api/v1/namespaces")
HOLD = "example.com/hold"


def container(name: str, image: str, port: int) -> dict:
    env = [{"name": f"SETTING_{i}", "value": f"value-{i}"} for i in range(6)]
    probe = {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 10}
    return {"name": name, "image": image, "ports": [{"name": "http", "containerPort": port}],
            "env": [*env, {"name": "DB_PASSWORD", "value": "hunter2"}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                          "limits": {"cpu": "500m", "memory": "256Mi"}},
            "readinessProbe": probe, "livenessProbe": probe,
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}]}


def deployment(name: str, replicas: int, stop_delay: str | None) -> dict:
    annotations = {"prometheus.io/scrape": "true", "prometheus.io/port": "8080"}
    if stop_delay:
        annotations["pod-stop.stage.kwok.x-k8s.io/delay"] = stop_delay
    labels = {"app": name, "tier": "web", "team": "shop"}
    spec = {"containers": [container("app", f"registry.example/{name}:1.0", 8080),
                           container("proxy", "registry.example/proxy:2.3", 9090)],
            "volumes": [{"name": "config", "configMap": {"name": f"{name}-config"}}],
            "terminationGracePeriodSeconds": 30}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                     "template": {"metadata": {"labels": labels, "annotations": annotations},
                                  "spec": spec}}}


def service(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80,
                                                           "targetPort": 8080}]}}


def held_pod() -> dict:
    spec = {"containers": [container("app", "registry.example/batch:1.0", 8080)],
            "volumes": [{"name": "config", "emptyDir": {}}], "terminationGracePeriodSeconds": 5}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "held", "namespace": NAMESPACE, "labels": {"app": "held"},
                         "finalizers": [HOLD]}, "spec": spec}


class MergedCapture:
    """One raw watch per path, every line appended to one list in arrival order."""

    def __init__(self, api: ApiClient) -> None:
        self.api, self.lines = api, []
        self._lock = threading.Lock()
        self._streams: list[WatchStream] = []
        self._threads: list[threading.Thread] = []

    def start(self, path: str) -> None:
        rv = self.api.get_json(path, {"limit": 1})["metadata"]["resourceVersion"]
        stream = self.api.stream(path, {"watch": "1", "resourceVersion": rv,
                                        "allowWatchBookmarks": "true", "timeoutSeconds": 1800},
                                 read_timeout=1900)
        self._streams.append(stream)
        thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        thread.start()
        self._threads.append(thread)

    def _pump(self, stream: WatchStream) -> None:
        for line in stream.lines():
            with self._lock:
                self.lines.append(line)

    def stop(self) -> list[bytes]:
        for stream in self._streams:
            stream.close()
        for thread in self._threads:
            thread.join(timeout=5)
        with self._lock:
            return list(self.lines)


def play(plane: LocalControlPlane) -> None:
    """The shop's day: deploy, roll, scale, lose a pod, hold one Terminating, scale down."""
    k = plane.kubectl
    k("create", "namespace", NAMESPACE)
    k("wait", "--for=create", "serviceaccount/default", "-n", NAMESPACE, "--timeout=60s")
    items = [service("frontend"), service("checkout"), deployment("frontend", 4, None),
             deployment("checkout", 3, "3s")]
    k("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))

    def rollout(name: str) -> None:
        k("rollout", "status", f"deploy/{name}", "-n", NAMESPACE, "--timeout=180s")

    rollout("frontend")
    rollout("checkout")
    k("set", "env", "deploy/frontend", "-n", NAMESPACE, "VERSION=2")
    rollout("frontend")
    k("scale", "deploy/checkout", "-n", NAMESPACE, "--replicas=5")
    rollout("checkout")
    k("set", "env", "deploy/checkout", "-n", NAMESPACE, "VERSION=2")
    rollout("checkout")
    first = k("get", "pods", "-n", NAMESPACE, "-l", "app=frontend", "-o", "jsonpath={.items[0].metadata.name}")
    k("delete", "pod", first, "-n", NAMESPACE, "--wait=false")
    k("create", "-f", "-", input=json.dumps(held_pod()))
    k("wait", "--for=condition=Ready", "pod/held", "-n", NAMESPACE, "--timeout=60s")
    k("delete", "pod", "held", "-n", NAMESPACE, "--wait=false")
    k("scale", "deploy/frontend", "-n", NAMESPACE, "--replicas=2")
    rollout("frontend")
    time.sleep(20)  # endpoint batches, the last Events, a few node heartbeats


def write_seed(lines: list[bytes], path: Path) -> None:
    """Deterministic gzip (no name, no mtime), one watch line per line."""
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as gz:
        for line in lines:
            gz.write(line + b"\n")


def main() -> int:
    with tempfile.TemporaryDirectory() as work:
        plane = LocalControlPlane(work_dir=Path(work), nodes=3, stage_set="race")
        plane.start()
        try:
            capture = MergedCapture(ApiClient(load_config(str(plane.kubeconfig))))
            for path in WATCHES:
                capture.start(path)
            play(plane)
            lines = capture.stop()
        finally:
            plane.stop()
    SEED.parent.mkdir(exist_ok=True)
    write_seed(lines, SEED)
    print(f"{len(lines)} watch lines → {SEED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
