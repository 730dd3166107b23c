"""ktrace import of a kubectl watch capture taken now, on the real control plane (marker k8s):
one pod behind a Service, rolled out and deleted, comes back with its whole lifecycle."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from replayer import db
from replayer.replay import import_captures
from tests.replayer_data import rows

pytestmark = pytest.mark.k8s


def manifests(ns: str) -> str:
    labels = {"app": "web"}
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": ns},
         "spec": {"selector": labels, "ports": [{"port": 80}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "web", "namespace": ns},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}},
    ]})


def test_a_live_capture_imports_the_whole_lifecycle(k8s_cluster, k8s_namespace: str,
                                                    tmp_path: Path):
    watchers = []
    for kind in ("pods", "endpointslices"):
        argv = [str(k8s_cluster.kubectl_bin), "--kubeconfig", str(k8s_cluster.kubeconfig), "get",
                kind, "-n", k8s_namespace, "--watch", "--output-watch-events", "-o", "json"]
        watchers.append(subprocess.Popen(argv, stdout=open(tmp_path / f"{kind}.json", "wb")))
    try:
        time.sleep(2)
        k8s_cluster.kubectl("apply", "-f", "-", input=manifests(k8s_namespace))
        k8s_cluster.kubectl("rollout", "status", "deploy/web", "-n", k8s_namespace, "--timeout=60s")
        time.sleep(3)  # the EndpointSlice update is batched
        k8s_cluster.kubectl("scale", "deploy/web", "-n", k8s_namespace, "--replicas=0")
        k8s_cluster.kubectl("wait", "--for=delete", "pod", "-l", "app=web", "-n", k8s_namespace,
                            "--timeout=60s")
        time.sleep(3)
    finally:
        for watcher in watchers:
            watcher.terminate()
            watcher.wait(timeout=30)
    con = db.open_db(str(tmp_path / "live.duckdb"))
    summary = import_captures([str(tmp_path / "pods.json"), str(tmp_path / "endpointslices.json")],
                              con, cluster="live")
    assert summary.stats.problem_count() == 0
    steps = [s for (s,) in rows(con, "SELECT step FROM pod_transitions ORDER BY step_no")]
    assert steps[:5] == ["created", "scheduled", "running", "ready", "in_endpoints"]
    assert steps[5] == "deletion_requested"
    assert {"endpoint_not_ready", "containers_stopped", "terminal", "deleted",
            "endpoint_removed"} <= set(steps[6:])
    assert steps.index("deleted") > steps.index("containers_stopped")
