"""A graceful drain of the real node through the Eviction API (marker node), blocked by a
PodDisruptionBudget and then allowed (tests/node_workloads.py drain_blocked_then_allowed),
recorded by ``ktrace record``: what the records say while it was blocked and after it
passed, and what ktrace says of both — checked against kubectl's own refusal and the
objects' fields."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pytest

from tests import node_workloads as w
from tests.infra.k8s import LocalControlPlane
from tests.infra.node import NODE_NAME, RealNode
from tests.node_recorder import Recording, get

pytestmark = pytest.mark.node
KINDS = "pods,nodes,poddisruptionbudgets,replicasets,deployments,events"


def at(epoch: float) -> datetime:
    """An epoch time as the recording's receive clock (naive UTC)."""
    return datetime.fromtimestamp(epoch, timezone.utc).replace(tzinfo=None)


def version_at(con: duckdb.DuckDBPyConnection, kind: str, name: str, ts: datetime) -> dict:
    (obj,), = con.execute("SELECT object FROM raw_events WHERE kind = ? AND name = ? AND object IS NOT NULL "
                          "AND received_at <= ? ORDER BY received_at DESC, event_id DESC LIMIT 1",
                          [kind, name, ts]).fetchall()
    return json.loads(obj)


def test_a_drain_blocked_by_a_budget_then_allowed(node_cluster: tuple[LocalControlPlane, RealNode],
                                                  node_namespace: str, tmp_path: Path) -> None:
    plane, _ = node_cluster
    recording = Recording(plane, tmp_path, node_namespace, kinds=KINDS)
    try:
        drain = w.drain_blocked_then_allowed(plane, node_namespace, plane.node_names[0])
        con = recording.replay()
    finally:
        if recording.process.poll() is None:
            recording.process.kill()
            recording.process.wait()
    assert "Cannot evict pod as it would violate the pod's disruption budget." in drain.refused
    node = get(plane, "node", NODE_NAME)  # left as found
    assert not node["spec"].get("unschedulable") and w.DRAIN_TARGET not in node["metadata"]["labels"]
    blocked, passed = at(drain.blocked_at), at(drain.passed_at)

    # While blocked: the node cordoned and tainted, the budget at 0, both pods still on it.
    cordoned = version_at(con, "Node", NODE_NAME, blocked)
    assert cordoned["spec"]["unschedulable"] is True
    assert {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"} in [
        {k: t[k] for k in ("key", "effect")} for t in cordoned["spec"]["taints"]]
    budget = version_at(con, "PodDisruptionBudget", "web", blocked)
    assert budget["status"]["disruptionsAllowed"] == 0
    pods = [r[0] for r in con.execute(
        "SELECT name FROM state_at(?) WHERE kind = 'Pod' ORDER BY name", [blocked]).fetchall()]
    assert len(pods) == 2
    found = con.execute("SELECT kind, name, top_cause, causes[1].detail FROM drain_blocked_at(?, threshold_s := 5) "
                        "ORDER BY kind", [blocked]).fetchall()
    assert [(k, n, c) for k, n, c, _ in found] == [("Node", NODE_NAME, "drain_blocked"),
                                                   ("PodDisruptionBudget", "web", "drain_blocked")]
    detail = found[0][3]
    assert f"node {NODE_NAME} cordoned (spec.unschedulable; taint node.kubernetes.io/unschedulable:NoSchedule)" in detail
    assert (f"PodDisruptionBudget {node_namespace}/web allows 0 disruptions" in detail
            and "minAvailable 2; 2 healthy of 2 needed" in detail and "InsufficientPods" in detail)
    assert detail.endswith(f"covers 2 pod(s) still on it: {', '.join(pods)} — the Eviction API refuses to evict them")

    # Once relaxed: the budget allowed evictions, and the drain passed — no finding then.
    allowed = con.execute("SELECT max(d.disruptions_allowed) FROM raw_events r JOIN disruption_budgets d "
                          "USING (event_id) WHERE r.received_at BETWEEN ? AND ?", [blocked, passed]).fetchone()[0]
    assert allowed >= 1
    assert con.execute("SELECT count(*) FROM drain_blocked_at(?, threshold_s := 0)", [passed]).fetchone() == (0,)

    # Both pods evicted through the Eviction API: the condition the API server wrote, and
    # ktrace's outcome naming it, the budget that counted it and the cordoned node.
    for pod in pods:
        conditions = [c for (o,) in con.execute(
            "SELECT object FROM raw_events WHERE kind = 'Pod' AND name = ? AND object IS NOT NULL", [pod]).fetchall()
            for c in json.loads(o)["status"].get("conditions", []) if c["type"] == "DisruptionTarget"]
        assert {(c["status"], c["reason"], c["message"]) for c in conditions} == {
            ("True", "EvictionByEvictionAPI", "Eviction API: evicting")}
    outcomes = dict(con.execute("SELECT name, causes[1].detail FROM pod_outcomes_at(?) WHERE top_cause = 'evicted'",
                                [passed]).fetchall())
    assert sorted(outcomes) == pods
    for detail in outcomes.values():
        assert detail.startswith("eviction_api — DisruptionTarget EvictionByEvictionAPI: Eviction API: evicting — "
                                 f"PodDisruptionBudget {node_namespace}/web allowed it (the pod in its disruptedPods")
        assert detail.endswith(f"node {NODE_NAME} cordoned (spec.unschedulable): a drain")
