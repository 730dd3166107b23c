"""pytest fixtures for tests on the real node (tests/infra/node.py): a control plane of
their own, with one kwok node and the real kubelet beside it, started once per session.

A control plane of their own, not the k8s tests' one: a real node joining that cluster would
change what its tests see (another Node, its Lease and Events in every recording).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.infra.k8s import LocalControlPlane
from tests.infra.node import RealNode


@pytest.fixture(scope="session")
def node_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalControlPlane, RealNode]]:
    plane = LocalControlPlane(work_dir=tmp_path_factory.mktemp("node-plane"), nodes=1)
    plane.start()
    node = RealNode(plane, work_dir=tmp_path_factory.mktemp("node"))
    try:
        node.start()
        yield plane, node
    finally:
        node.stop()
        plane.stop()


@pytest.fixture
def node_namespace(node_cluster: tuple[LocalControlPlane, RealNode]) -> Iterator[str]:
    """A fresh namespace of the node's cluster, ready for pods; deleted afterwards."""
    plane, _ = node_cluster
    name = f"n-{uuid.uuid4().hex[:8]}"
    plane.kubectl("create", "namespace", name)
    plane.kubectl("wait", "--for=create", "serviceaccount/default", "-n", name, "--timeout=60s")
    yield name
    plane.kubectl("delete", "namespace", name, "--wait=false")
