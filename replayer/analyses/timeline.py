"""``ktrace timeline POD | deploy/NAME``: a pod's lifecycle steps with deltas and a bar."""

from __future__ import annotations

from typing import Any

import duckdb

from replayer.analyses import Rows
from schemas.errors import KtraceError

BAR_WIDTH = 30
COLUMNS = ["pod", "step_no", "step", "time", "delta_s", "since_first_s", "component",
           "evidence_event_id", "detail", "bar"]


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
    names = {}
    for row in rows:
        names.setdefault(row[0], set()).add(row[1])
    if all(len(u) == 1 for u in names.values()):  # the uid matters only when a name is reused
        return COLUMNS, _with_bars([(r[0], *r[2:]) for r in rows])
    return ["pod", "uid", *COLUMNS[1:]], _with_bars(rows, first=2)


def _with_bars(rows: list[tuple[Any, ...]], first: int = 1) -> list[tuple[Any, ...]]:
    """An ASCII bar per step: where it falls between the pod's first and last step
    (``first`` is the index of step_no: the columns before it name the pod)."""
    since = first + 4
    spans: dict[Any, float] = {}
    for row in rows:
        key = row[:first]
        spans[key] = max(spans.get(key, 0.0), row[since] or 0.0)
    out = []
    for row in rows:
        span = spans[row[:first]] or 1.0
        at = int(round((row[since] or 0.0) / span * BAR_WIDTH))
        out.append((*row, "·" * at + "█" + "·" * (BAR_WIDTH - at)))
    return out
