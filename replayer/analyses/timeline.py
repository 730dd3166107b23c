"""``ktrace timeline POD | deploy/NAME``: a pod's lifecycle steps with their deltas."""

from __future__ import annotations

import duckdb

from replayer.analyses import Rows
from schemas.errors import KtraceError

COLUMNS = ["pod", "uid", "step_no", "step", "time", "delta_s", "since_first_s", "component",
           "evidence_event_id", "detail"]


def pod_uids(con: duckdb.DuckDBPyConnection, target: str, namespace: str | None) -> list[str]:
    """The pods a target names: a pod name or uid, or deploy/NAME (its ReplicaSets' pods)."""
    if target.startswith(("deploy/", "deployment/", "deployments/")):
        return _deployment_pods(con, target.split("/", 1)[1], namespace)
    rows = con.execute(
        "SELECT DISTINCT uid FROM raw_events WHERE kind = 'Pod' AND (uid = ? OR name = ?) "
        "AND (? IS NULL OR namespace = ?) ORDER BY uid", [target, target, namespace, namespace]
    ).fetchall()
    if not rows:
        raise KtraceError(f"no pod {target!r} in the database"
                          + (f" (namespace {namespace})" if namespace else ""))
    return [r[0] for r in rows]


def _deployment_pods(con: duckdb.DuckDBPyConnection, name: str, namespace: str | None) -> list[str]:
    rows = con.execute(
        "SELECT DISTINCT p.uid FROM owner_refs d "
        "JOIN raw_events rs ON rs.event_id = d.event_id "
        "JOIN owner_refs p ON p.owner_uid = d.uid AND p.owner_kind = 'ReplicaSet' "
        "JOIN pod_lifecycle l ON l.uid = p.uid "
        "WHERE d.owner_kind = 'Deployment' AND d.owner_name = ? AND rs.kind = 'ReplicaSet' "
        "AND (? IS NULL OR rs.namespace = ?) ORDER BY p.uid", [name, namespace, namespace]
    ).fetchall()
    if not rows:
        raise KtraceError(f"no pods of deployment {name!r} in the database")
    return [r[0] for r in rows]


def timeline(con: duckdb.DuckDBPyConnection, target: str, namespace: str | None = None) -> Rows:
    uids = pod_uids(con, target, namespace)
    rows = con.execute(
        "SELECT pod, uid, step_no, step, time, "
        "  epoch(time - lag(time) OVER (PARTITION BY uid ORDER BY step_no)) AS delta_s, "
        "  epoch(time - min(time) OVER (PARTITION BY uid)) AS since_first_s, "
        "  component, evidence_event_id, detail "
        "FROM pod_transitions WHERE list_contains(?, uid) "
        "ORDER BY min(time) OVER (PARTITION BY uid), uid, step_no", [uids]).fetchall()
    return COLUMNS, rows
