"""creator(kind, managedFields) (sql/creator.sql): who created an object ktrace first saw
mid-life — the earliest main-resource managedFields entry, ties read as Kubernetes writes
them (1 s times, entries sorted by operation, time and name)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from replayer import db

T0, T1 = datetime(2026, 12, 7, 20, 39, 54), datetime(2026, 12, 7, 20, 39, 55)


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    con = db.open_db(str(tmp_path_factory.mktemp("creator") / "empty.duckdb"))
    yield con
    con.close()


def creator(con: duckdb.DuckDBPyConnection, kind: str, entries: list[tuple[str, str | None, datetime]]) -> str | None:
    managed = [{"manager": m, "subresource": s, "time": t} for m, s, t in entries]
    return con.execute("SELECT creator(?, ?::STRUCT(manager VARCHAR, subresource VARCHAR, time TIMESTAMP)[])",
                       [kind, managed]).fetchone()[0]


def test_the_earliest_main_resource_entry_created_it(con):
    # the status subresource cannot create; a later main-resource writer did not
    assert creator(con, "Deployment", [("kube-controller-manager", "status", T0),
                                       ("kube-controller-manager", None, T1),
                                       ("kubectl-client-side-apply", None, T0)]) == "kubectl-client-side-apply"


def test_a_nodes_kubelet_registers_it_when_entries_share_a_second(con):
    """real-node-0 in tests/data/node/pressure: every entry at 20:39:54."""
    entries = [("kube-controller-manager", None, T0), ("kubectl-patch", "status", T0),
               ("kubectl-taint", None, T0), ("kubelet", None, T0), ("kubelet", "status", T0)]
    assert creator(con, "Node", entries) == "kubelet"
    # kubectl's verbs that change an object never create it; the rest by name
    assert creator(con, "ConfigMap", [("kubectl-label", None, T0), ("kubectl-edit", None, T0),
                                      ("helm", None, T0)]) == "helm"


def test_no_managed_fields_no_creator(con):
    assert creator(con, "Node", []) is None
    assert creator(con, "Node", [("kubelet", "status", T0)]) is None
