"""pytest fixtures for tests that need Kubernetes: one real control plane per session.

KTRACE_TEST_KUBECONFIG=<path> makes them use that cluster instead; tests that stop,
restart or compact the control plane (k8s_control_plane) are then skipped.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra.k8s import Cluster, LocalControlPlane, external_cluster


@pytest.fixture(scope="session")
def k8s_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A cluster with two Ready fake Nodes (labels type=kwok) whose pods kwok runs."""
    kubeconfig = os.environ.get("KTRACE_TEST_KUBECONFIG")
    if kubeconfig:
        yield external_cluster(Path(kubeconfig))
        return
    plane = LocalControlPlane(work_dir=tmp_path_factory.mktemp("k8s"), nodes=2)
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture
def k8s_control_plane(k8s_cluster: Cluster) -> LocalControlPlane:
    """The session's local control plane, for tests that restart components or compact etcd."""
    if not isinstance(k8s_cluster, LocalControlPlane):
        pytest.skip("needs the local control plane; KTRACE_TEST_KUBECONFIG points elsewhere")
    return k8s_cluster


@pytest.fixture
def k8s_namespace(k8s_cluster: Cluster) -> Iterator[str]:
    """A fresh namespace, ready for pods (its default ServiceAccount exists); deleted afterwards."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    k8s_cluster.kubectl("create", "namespace", name)
    k8s_cluster.kubectl(
        "wait", "--for=create", "serviceaccount/default", "-n", name, "--timeout=60s"
    )
    yield name
    k8s_cluster.kubectl("delete", "namespace", name, "--wait=false")
