"""``ktrace timeline POD | KIND/NAME``: a pod's lifecycle steps with their deltas — or those
of every pod of a workload (``deploy/web``, ``rs/…``, ``sts/…``, ``ds/…``, ``job/…``)."""

from __future__ import annotations

import duckdb

from replayer.analyses import Rows, fetch
from replayer.analyses.scope import of_cluster
from schemas.errors import KtraceError
from schemas.kinds import ObjectRef

#: workloads whose pods they own directly (a Deployment owns them through its ReplicaSets)
POD_OWNERS = frozenset({"ReplicaSet", "StatefulSet", "DaemonSet", "Job"})


def pod_uids(con: duckdb.DuckDBPyConnection, target: str, namespace: str | None,
             cluster: str | None = None) -> list[str]:
    """The pods a target names: ``NAME``/``pod/NAME`` (a name or uid), or a workload's."""
    ref = ObjectRef.parse(target)
    kind = ref.kind.kind
    if kind == "Pod":
        sql = ("SELECT DISTINCT uid FROM raw_events WHERE kind = 'Pod' AND (uid = ? OR name = ?) "
               "AND (? IS NULL OR namespace = ?)")
        params = [ref.name, ref.name, namespace, namespace]
    elif kind == "Deployment":
        sql = ("SELECT DISTINCT p.uid FROM owner_refs d "
               "JOIN raw_events rs ON rs.event_id = d.event_id "
               "JOIN owner_refs p ON p.owner_uid = d.uid AND p.owner_kind = 'ReplicaSet' "
               "JOIN pod_lifecycle l ON l.uid = p.uid "
               "WHERE d.owner_kind = 'Deployment' AND d.owner_name = ? AND rs.kind = 'ReplicaSet' "
               "AND (? IS NULL OR rs.namespace = ?)")
        params = [ref.name, namespace, namespace]
    elif kind in POD_OWNERS:
        sql = ("SELECT DISTINCT o.uid FROM owner_refs o JOIN pod_lifecycle l ON l.uid = o.uid "
               "WHERE o.owner_kind = ? AND o.owner_name = ? AND (? IS NULL OR l.namespace = ?)")
        params = [kind, ref.name, namespace, namespace]
    else:
        raise KtraceError(f"a timeline is of pods: name a pod or a workload "
                          f"(deploy, rs, sts, ds, job), not a {kind}")
    rows = con.execute(f"SELECT uid FROM ({sql}) WHERE {of_cluster()} ORDER BY uid",
                       [*params, cluster, cluster]).fetchall()
    if not rows:
        where = ", ".join(f"{k} {v}" for k, v in (("namespace", namespace),
                                                   ("cluster", cluster)) if v)
        raise KtraceError(f"no {'pod' if kind == 'Pod' else 'pods of ' + kind} {ref.name!r} "
                          "in the database" + (f" ({where})" if where else ""))
    return [r[0] for r in rows]


def timeline(con: duckdb.DuckDBPyConnection, target: str, namespace: str | None = None,
             cluster: str | None = None) -> Rows:
    """One row per step; the namespace and uid say whose (a workload's pods may span
    namespaces, and a reused name is two pods)."""
    uids = pod_uids(con, target, namespace, cluster)
    return fetch(con,
        "SELECT namespace, pod, uid, step_no, step, time, "
        "  epoch(time - lag(time) OVER (PARTITION BY uid ORDER BY step_no)) AS delta_s, "
        "  epoch(time - min(time) OVER (PARTITION BY uid)) AS since_first_s, "
        "  component, evidence_event_id, detail "
        "FROM pod_transitions WHERE list_contains(?, uid) "
        "ORDER BY min(time) OVER (PARTITION BY uid), uid, step_no", [uids])
