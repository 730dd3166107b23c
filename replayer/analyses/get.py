"""``ktrace get KIND``: what the database holds at a moment, as ``kubectl get`` shows it —
pods with READY, STATUS, RESTARTS, AGE and NODE; workloads with their replica counts; nodes,
namespaces, events, and any other recorded kind by name and age. Read from ``state_at`` and
the typed tables, never from object JSON. Each object's AGE is taken at ``at`` or at the end
of its cluster's data, whichever is earlier (after that, ktrace knows nothing of it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

import duckdb

from replayer.analyses import Rows
from replayer.analyses.selectors import field_condition, label_condition
from replayer.objects import objects_of, parsed
from transports.kafka.settings import KafkaSettings
from schemas.kinds import kind_name

#: every kind's rows: the object, its cluster's data end as ``seen_until``, its age
_OBJECTS = """
WITH ends AS (SELECT cluster, max(received_at) AS data_end FROM raw_events GROUP BY cluster)
SELECT s.* EXCLUDE (type), s.type AS last_event, least(?::TIMESTAMP, e.data_end) AS seen_until,
       epoch(least(?::TIMESTAMP, e.data_end) - s.created_at) AS age_s
FROM state_at(?::TIMESTAMP) s JOIN ends e USING (cluster)
WHERE s.kind = ? AND (? IS NULL OR s.namespace = ?) AND (? IS NULL OR s.cluster = ?)
  AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], s.name))"""

#: fields every kind can be selected on (``--field-selector``), and the columns behind them
COMMON_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace"}


@dataclass(frozen=True)
class Listing:
    """How one kind is listed: its SELECT over ``o`` (the objects), the columns shown, the
    extra ``--field-selector`` fields, and a Python step for what kubectl computes."""

    select: str
    columns: tuple[str, ...]
    fields: dict[str, str]
    finish: Callable[[dict[str, Any]], dict[str, Any]] | None = None


def _exit_reason(c: dict[str, Any]) -> str:
    """A terminated container's reason, else its signal or exit code."""
    if c["reason"]:
        return c["reason"]
    return f"Signal:{c['signal']}" if c["signal"] else f"ExitCode:{c['exit_code']}"


def pod_status(row: dict[str, Any]) -> dict[str, Any]:
    """READY, STATUS and RESTARTS as kubectl's printPod derives them (kubernetes
    pkg/printers/internalversion/printers.go): the first init container not done decides
    while the pod initializes (``Init:N/M``, ``Init:<reason>``) and its init restarts count;
    after, the last main container's waiting or terminated reason wins, ``Completed`` with a
    container still running reads ``Running`` (pod Ready), ``NotReady``, or the failed
    container's reason. Sidecars (restartable init containers) count as containers."""
    containers = row["containers"] or []
    init = [c for c in containers if c["init"]]
    main = [c for c in containers if not c["init"]]
    reason = "SchedulingGated" if row["scheduling_gated"] else (
        row["status_reason"] or row["phase"] or "Unknown")
    restarts = sidecar_restarts = ready = 0
    initializing = False
    looked_at = init  # the init containers kubectl's loop reads: up to the first not done
    for i, c in enumerate(init):
        restarts += c["restart_count"]
        sidecar_restarts += c["restart_count"] if c["sidecar"] else 0
        if c["state"] == "terminated" and c["exit_code"] == 0:
            continue
        if c["sidecar"] and c["state"] == "running":  # started: it runs beside the others
            ready += 1 if c["ready"] else 0
            continue
        if c["state"] == "terminated":
            reason = "Init:" + _exit_reason(c)
        elif c["state"] == "waiting" and c["reason"] and c["reason"] != "PodInitializing":
            reason = "Init:" + c["reason"]
        else:
            reason = f"Init:{i}/{row['spec_init_containers'] or len(init)}"
        initializing, looked_at = True, init[:i + 1]
        break
    if not initializing or row["initialized"]:
        restarts, reason, ready = _main_status(main, reason, row["pod_ready"], sidecar_restarts,
                                               ready)
    if row["deletion_at"] is not None and row["status_reason"] == "NodeLost":
        reason = "Unknown"
    elif row["deletion_at"] is not None and row["phase"] not in ("Succeeded", "Failed"):
        reason = "Terminating"
    total = (row["spec_containers"] or len(main)) + sum(1 for c in init if c["sidecar"])
    return {**row, "ready": f"{ready}/{total}", "status": reason, "restarts": restarts,
            "last_restart_at": restarts and _last_stop(
                looked_at if initializing and not row["initialized"]
                else [c for c in looked_at if c["sidecar"]] + main) or None}


def _last_stop(containers: list[dict[str, Any]]) -> Any:
    """When the latest of these containers' previous runs ended (lastState.terminated's
    finishedAt): the time kubectl's RESTARTS says "ago" of."""
    return max((c["last_finished_at"] for c in containers if c["last_finished_at"]),
               default=None)


def _main_status(main: list[dict[str, Any]], reason: str, pod_ready: bool | None,
                 restarts: int, ready: int) -> tuple[int, str, int]:
    running, failed = False, ""
    for c in reversed(main):
        restarts += c["restart_count"]
        if c["state"] == "waiting" and c["reason"]:
            reason = c["reason"]
        elif c["state"] == "terminated":
            reason = _exit_reason(c)
            failed = reason if c["exit_code"] != 0 else failed
        elif c["state"] == "running" and c["ready"]:
            running, ready = True, ready + 1
    if reason == "Completed":
        reason = ("Running" if running and pod_ready else failed or
                  ("NotReady" if running else reason))
    return restarts, reason, ready


def node_status(row: dict[str, Any]) -> dict[str, Any]:
    ready = {"True": "Ready", "False": "NotReady"}.get(row["ready_condition"], "Unknown")
    roles = sorted(k.removeprefix("node-role.kubernetes.io/") for k in (row["labels"] or {})
                   if k.startswith("node-role.kubernetes.io/"))
    return {**row, "status": ready + (",SchedulingDisabled" if row["unschedulable"] else ""),
            "roles": ",".join(roles) or "<none>"}


def _ratio(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "ready": f"{row['ready_replicas'] or 0}/{row['replicas'] or 0}"}


def _desired(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "desired": row["replicas"]}


_WORKLOAD = ("SELECT o.*, w.replicas, coalesce(w.status_replicas, 0) AS current, "
             "coalesce(w.ready_replicas, 0) AS ready_replicas, "
             "coalesce(w.updated_replicas, 0) AS up_to_date, "
             "coalesce(w.available_replicas, 0) AS available, "
             "coalesce(w.unavailable_replicas, 0) AS unavailable "
             "FROM o JOIN workloads w USING (event_id)")
LISTINGS: dict[str, Listing] = {
    "Pod": Listing(
        "SELECT o.*, p.phase, p.node_name AS node, p.pod_ip AS ip, p.status_reason, "
        "  p.spec_containers, p.spec_init_containers, "
        "  (SELECT list({'init': c.init, 'sidecar': c.sidecar, 'ready': c.ready, "
        "    'state': c.state, 'reason': c.reason, 'exit_code': c.exit_code, "
        "    'signal': c.signal, 'restart_count': c.restart_count, "
        "    'last_finished_at': c.last_finished_at} ORDER BY c.name) "
        "    FROM containers c WHERE c.event_id = o.event_id) AS containers, "
        "  (SELECT bool_or(k.status = 'True') FILTER (WHERE k.type = 'Initialized') "
        "    FROM conditions k WHERE k.event_id = o.event_id) AS initialized, "
        "  (SELECT bool_or(k.status = 'True') FILTER (WHERE k.type = 'Ready') "
        "    FROM conditions k WHERE k.event_id = o.event_id) AS pod_ready, "
        "  (SELECT bool_or(k.type = 'PodScheduled' AND k.reason = 'SchedulingGated') "
        "    FROM conditions k WHERE k.event_id = o.event_id) AS scheduling_gated "
        "FROM o JOIN pods p USING (event_id)",
        ("namespace", "name", "ready", "status", "restarts", "last_restart_at", "ip", "node"),
        {"spec.nodeName": "node", "status.phase": "phase", "status.podIP": "ip"},
        pod_status),
    "Deployment": Listing(_WORKLOAD, ("namespace", "name", "ready", "up_to_date", "available"), {}, _ratio),
    "ReplicaSet": Listing(_WORKLOAD, ("namespace", "name", "desired", "current", "ready_replicas"), {}, _desired),
    "StatefulSet": Listing(_WORKLOAD, ("namespace", "name", "ready"), {}, _ratio),
    "DaemonSet": Listing(_WORKLOAD, ("namespace", "name", "desired", "current", "ready_replicas",
                                     "up_to_date", "available"), {},
                         _desired),
    "Job": Listing(_WORKLOAD, ("namespace", "name", "succeeded", "active", "failed"),
                   {}, lambda r: {**r, "succeeded": r["ready_replicas"], "active": r["current"],
                                  "failed": r["unavailable"]}),
    "Node": Listing(
        "SELECT o.*, n.ready AS ready_condition, n.unschedulable FROM o JOIN nodes n USING (event_id)",
        ("name", "status", "roles"), {"spec.unschedulable": "unschedulable::VARCHAR"},
        node_status),
    "Namespace": Listing("SELECT o.*, n.phase AS status FROM o JOIN namespaces n USING (event_id)",
                         ("name", "status"), {"status.phase": "status"}),
    "Event": Listing(
        "SELECT o.*, e.last_time AS last_seen, e.type, e.reason, "
        "  e.regarding_kind || '/' || e.regarding_name AS object, e.message, "
        "  e.regarding_kind, e.regarding_name, e.component AS source "
        "FROM o JOIN k8s_events e USING (event_id)",
        ("namespace", "last_seen", "type", "reason", "object", "message"),
        {"type": "type", "reason": "reason", "involvedObject.kind": "regarding_kind",
         "involvedObject.name": "regarding_name", "regarding.kind": "regarding_kind",
         "regarding.name": "regarding_name", "source": "source"}),
    "PersistentVolumeClaim": Listing(
        "SELECT o.*, v.phase AS status, v.volume_name AS volume, v.storage_class "
        "FROM o JOIN volumes v USING (event_id)",
        ("namespace", "name", "status", "volume", "storage_class"),
        {"status.phase": "status"}),
    "PersistentVolume": Listing(
        "SELECT o.*, v.phase AS status, v.claim_namespace || '/' || v.claim_name AS claim, "
        "  v.storage_class FROM o JOIN volumes v USING (event_id)",
        ("name", "status", "claim", "storage_class"), {"status.phase": "status"}),
}
OTHER = Listing("SELECT o.* FROM o", ("namespace", "name"), {})
#: what every row carries after its kind's columns
IDENTITY = ("age_s", "kind", "uid", "cluster", "created_at", "labels")


def get(con: duckdb.DuckDBPyConnection, kind: str, at: datetime, *,
        names: tuple[str, ...] = (), namespace: str | None = None, cluster: str | None = None,
        labels: str | None = None, fields: str | None = None, full: bool = False,
        kafka: KafkaSettings | None = None) -> Rows:
    """The objects of ``kind`` (any name kubectl takes) as they were at ``at``; with
    ``full``, an ``as_recorded`` column: each one's JSON as it was (replayer/objects.py)."""
    name = kind_name(kind).kind
    listing = LISTINGS.get(name, OTHER)
    label_sql, label_params = label_condition(labels, "o.labels")
    field_sql, field_params = field_condition(fields, {**COMMON_FIELDS, **listing.fields})
    cursor = con.execute(
        f"WITH o AS ({_OBJECTS}), listed AS ({listing.select} WHERE {label_sql}) "
        f"SELECT * FROM listed WHERE {field_sql} ORDER BY namespace NULLS FIRST, name, uid",
        [at, at, at, name, namespace, namespace, cluster, cluster, list(names), list(names),
         *label_params, *field_params])
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, r)) for r in cursor.fetchall()]
    if listing.finish:
        rows = [listing.finish(r) for r in rows]
    shown = [*listing.columns, *IDENTITY]
    if not full:
        return shown, [tuple(r[c] for c in shown) for r in rows]
    found = objects_of(con, [r["event_id"] for r in rows], kafka)
    return [*shown, "as_recorded"], [(*(r[c] for c in shown), parsed(found[r["event_id"]]))
                                for r in rows]


def recorded(con: duckdb.DuckDBPyConnection, kind: str) -> bool:
    """Whether the database holds any record of ``kind`` (a kind the recorder did not
    watch has none: its objects are unknown, not absent)."""
    return con.execute("SELECT count(*) > 0 FROM raw_events WHERE kind = ?",
                       [kind_name(kind).kind]).fetchone()[0]
