"""Records → rows of the replay tables, collected per batch as column arrays.

Rows are plain tuples in the column order of ``sql/00_tables.sql``; a batch turns them into
Arrow tables that DuckDB inserts in one scan (row-by-row INSERTs are ~500x slower).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import pyarrow as pa

from schemas.codec import Record

Row = tuple[Any, ...]
TS = pa.timestamp("us")
STR, I32, I64, BOOL = pa.string(), pa.int32(), pa.int64(), pa.bool_()
STRS = pa.list_(STR)

TABLES: dict[str, list[tuple[str, pa.DataType]]] = {
    "raw_events": [
        ("event_id", I64), ("topic", STR), ("partition", I32), ("offset", I64),
        ("cluster", STR), ("session", STR), ("seq", I64), ("type", STR), ("inferred", BOOL),
        ("api_version", STR), ("kind", STR), ("resource", STR),
        ("namespace", STR), ("name", STR), ("uid", STR),
        ("resource_version", STR), ("rv", I64), ("received_at", TS), ("time_source", STR),
        ("component", STR), ("attribution", STR),
        ("object", pa.binary()), ("object_size", I64), ("truncated", BOOL),
        ("created_at", TS), ("deletion_at", TS), ("deletion_grace_s", I64), ("generation", I64),
        ("finalizers", STRS), ("labels", pa.map_(STR, STR)),
    ],
    "owner_refs": [("event_id", I64), ("uid", STR), ("owner_kind", STR), ("owner_name", STR),
                   ("owner_uid", STR), ("controller", BOOL), ("block_owner_deletion", BOOL)],
    "pods": [("event_id", I64), ("uid", STR), ("phase", STR), ("node_name", STR),
             ("pod_ip", STR), ("start_time", TS), ("grace_s", I64), ("has_prestop", BOOL),
             ("claim_names", STRS)],
    "containers": [("event_id", I64), ("uid", STR), ("name", STR), ("init", BOOL),
                   ("ready", BOOL), ("restart_count", I32), ("state", STR), ("reason", STR),
                   ("exit_code", I32), ("started_at", TS), ("finished_at", TS)],
    "conditions": [("event_id", I64), ("uid", STR), ("kind", STR), ("type", STR),
                   ("status", STR), ("reason", STR), ("message", STR),
                   ("last_transition", TS), ("last_heartbeat", TS)],
    "endpoints": [("event_id", I64), ("slice_uid", STR), ("service", STR),
                  ("address_type", STR), ("addresses", STRS), ("ready", BOOL),
                  ("serving", BOOL), ("terminating", BOOL), ("node_name", STR),
                  ("target_kind", STR), ("target_name", STR), ("target_uid", STR)],
    "k8s_events": [("event_id", I64), ("uid", STR), ("reason", STR), ("message", STR),
                   ("type", STR), ("action", STR), ("component", STR),
                   ("reporting_instance", STR), ("regarding_kind", STR),
                   ("regarding_namespace", STR), ("regarding_name", STR),
                   ("regarding_uid", STR), ("regarding_field_path", STR), ("count", I32),
                   ("first_time", TS), ("last_time", TS)],
    "nodes": [("event_id", I64), ("uid", STR), ("name", STR), ("ready", STR),
              ("unschedulable", BOOL)],
    "taints": [("event_id", I64), ("uid", STR), ("key", STR), ("value", STR),
               ("effect", STR), ("time_added", TS)],
    "leases": [("event_id", I64), ("uid", STR), ("namespace", STR), ("name", STR),
               ("holder", STR), ("duration_s", I32), ("renew_time", TS)],
    "workloads": [("event_id", I64), ("uid", STR), ("kind", STR), ("replicas", I32),
                  ("status_replicas", I32), ("updated_replicas", I32), ("ready_replicas", I32),
                  ("available_replicas", I32), ("unavailable_replicas", I32),
                  ("observed_generation", I64), ("revision", STR), ("pod_template_hash", STR),
                  ("strategy", STR), ("max_surge", STR), ("max_unavailable", STR)],
    "volumes": [("event_id", I64), ("uid", STR), ("kind", STR), ("phase", STR),
                ("volume_name", STR), ("storage_class", STR), ("claim_namespace", STR),
                ("claim_name", STR), ("attacher", STR), ("node_name", STR), ("pv_name", STR),
                ("attached", BOOL), ("attach_error", STR), ("detach_error", STR)],
    "namespaces": [("event_id", I64), ("uid", STR), ("name", STR), ("phase", STR),
                   ("spec_finalizers", STRS)],
    "markers": [("event_id", I64), ("session", STR), ("topic", STR), ("resource", STR),
                ("type", STR), ("cause", STR), ("detail", STR), ("from_rv", STR),
                ("to_rv", STR), ("from_time", TS), ("to_time", TS), ("object_count", I64),
                ("recorder_version", STR), ("kinds", STRS)],
}
SCHEMAS = {name: pa.schema(cols) for name, cols in TABLES.items()}


class RowBatch:
    """Rows of one load batch, per table."""

    def __init__(self) -> None:
        self.rows: dict[str, list[Row]] = {name: [] for name in TABLES}

    def __len__(self) -> int:
        return len(self.rows["raw_events"])

    def add(self, event_id: int, topic: str, partition: int, offset: int, record: Record,
            time_source: str) -> None:
        self.rows["raw_events"].append(
            _raw_row(event_id, topic, partition, offset, record, time_source))
        uid = record.get("uid")
        for owner in (record.get("meta") or {}).get("owners") or ():
            self.rows["owner_refs"].append((event_id, uid, owner["kind"], owner["name"],
                                            owner["uid"], owner["controller"],
                                            owner["blockOwnerDeletion"]))
        facts = record.get("facts")
        if facts:
            FACT_ROWS[facts[0]](self.rows, event_id, record, facts[1])
        if record.get("marker"):
            self.rows["markers"].append(_marker_row(event_id, topic, record))

    def tables(self) -> Iterable[tuple[str, pa.Table]]:
        """Non-empty tables as Arrow, columns built by transposing the row tuples."""
        for name, rows in self.rows.items():
            if rows:
                schema = SCHEMAS[name]
                columns = [pa.array(col, type=schema.field(i).type)
                           for i, col in enumerate(zip(*rows))]
                yield name, pa.Table.from_arrays(columns, schema=schema)


def _raw_row(event_id: int, topic: str, partition: int, offset: int, r: Record,
             time_source: str) -> Row:
    """The object stays bytes here; the insert decodes and validates it in DuckDB."""
    m = r.get("meta") or {}
    labels = m.get("labels")
    return (event_id, topic, partition, offset, r["cluster"], r["session"], r["seq"],
            r["type"], r.get("inferred", False), r["apiVersion"], r["kind"], r["resource"],
            r.get("namespace"), r.get("name"), r.get("uid"), r.get("resourceVersion"),
            r.get("resourceVersionNumber"), r["receivedAt"], time_source,
            r.get("component"), r.get("attribution"), r.get("object"), r.get("objectSize"),
            r.get("truncated", False), m.get("creationTimestamp"), m.get("deletionTimestamp"),
            m.get("deletionGracePeriodSeconds"), m.get("generation"), m.get("finalizers"),
            list(labels.items()) if labels else None)


def _marker_row(event_id: int, topic: str, r: Record) -> Row:
    k = r["marker"]
    return (event_id, r["session"], topic, r["resource"], r["type"], k.get("cause"),
            k.get("detail"), k.get("fromResourceVersion"), k.get("toResourceVersion"),
            k.get("fromTime"), k.get("toTime"), k.get("objectCount"), k.get("recorderVersion"),
            k.get("kinds"))


def _conditions(rows: dict[str, list[Row]], event_id: int, uid: str, kind: str,
                items: list[dict]) -> None:
    rows["conditions"].extend(
        (event_id, uid, kind, c["type"], c["status"], c.get("reason"), c.get("message"),
         c.get("lastTransitionTime"), c.get("lastHeartbeatTime")) for c in items)


def _pod(rows: dict[str, list[Row]], event_id: int, r: Record, f: dict) -> None:
    uid = r["uid"]
    rows["pods"].append((event_id, uid, f.get("phase"), f.get("nodeName"), f.get("podIP"),
                         f.get("startTime"), f.get("terminationGracePeriodSeconds"),
                         f.get("hasPreStop"), f.get("claimNames")))
    rows["containers"].extend(
        (event_id, uid, c["name"], c["init"], c["ready"], c["restartCount"], c.get("state"),
         c.get("reason"), c.get("exitCode"), c.get("startedAt"), c.get("finishedAt"))
        for c in f.get("containers") or ())
    _conditions(rows, event_id, uid, "Pod", f.get("conditions") or [])


def _slice(rows: dict[str, list[Row]], event_id: int, r: Record, f: dict) -> None:
    service, family = f.get("serviceName"), f.get("addressType")
    rows["endpoints"].extend(
        (event_id, r["uid"], service, family, e.get("addresses"), e.get("ready"),
         e.get("serving"), e.get("terminating"), e.get("nodeName"), e.get("targetKind"),
         e.get("targetName"), e.get("targetUid"))
        for e in f.get("endpoints") or ())


def _event(rows: dict[str, list[Row]], event_id: int, r: Record, f: dict) -> None:
    rows["k8s_events"].append(
        (event_id, r["uid"], f.get("reason"), f.get("message"), f.get("type"), f.get("action"),
         f.get("component"), f.get("reportingInstance"), f.get("regardingKind"),
         f.get("regardingNamespace"), f.get("regardingName"), f.get("regardingUid"),
         f.get("regardingFieldPath"), f.get("count"), f.get("firstTime"), f.get("lastTime")))


def _node(rows: dict[str, list[Row]], event_id: int, r: Record, f: dict) -> None:
    uid = r["uid"]
    rows["nodes"].append((event_id, uid, r.get("name"), f.get("ready"), f.get("unschedulable")))
    rows["taints"].extend((event_id, uid, t["key"], t.get("value"), t["effect"],
                           t.get("timeAdded")) for t in f.get("taints") or ())
    _conditions(rows, event_id, uid, "Node", f.get("conditions") or [])


def _lease(rows: dict[str, list[Row]], event_id: int, r: Record, f: dict) -> None:
    rows["leases"].append((event_id, r["uid"], r.get("namespace"), r.get("name"),
                           f.get("holderIdentity"), f.get("leaseDurationSeconds"),
                           f.get("renewTime")))


def _workload(rows: dict[str, list[Row]], event_id: int, r: Record, f: dict) -> None:
    rows["workloads"].append(
        (event_id, r["uid"], r["kind"], f.get("replicas"), f.get("statusReplicas"),
         f.get("updatedReplicas"), f.get("readyReplicas"), f.get("availableReplicas"),
         f.get("unavailableReplicas"), f.get("observedGeneration"), f.get("revision"),
         f.get("podTemplateHash"), f.get("strategy"), f.get("maxSurge"),
         f.get("maxUnavailable")))
    _conditions(rows, event_id, r["uid"], r["kind"], f.get("conditions") or [])


def _volume(rows: dict[str, list[Row]], event_id: int, r: Record, f: dict) -> None:
    rows["volumes"].append(
        (event_id, r["uid"], r["kind"], f.get("phase"), f.get("volumeName"),
         f.get("storageClass"), f.get("claimNamespace"), f.get("claimName"), f.get("attacher"),
         f.get("nodeName"), f.get("pvName"), f.get("attached"), f.get("attachError"),
         f.get("detachError")))


def _namespace(rows: dict[str, list[Row]], event_id: int, r: Record, f: dict) -> None:
    rows["namespaces"].append((event_id, r["uid"], r.get("name"), f.get("phase"),
                               f.get("specFinalizers")))
    _conditions(rows, event_id, r["uid"], "Namespace", f.get("conditions") or [])


FACT_ROWS: dict[str, Callable[[dict[str, list[Row]], int, Record, dict], None]] = {
    "io.ktrace.PodFacts": _pod,
    "io.ktrace.EndpointSliceFacts": _slice,
    "io.ktrace.EventFacts": _event,
    "io.ktrace.NodeFacts": _node,
    "io.ktrace.LeaseFacts": _lease,
    "io.ktrace.WorkloadFacts": _workload,
    "io.ktrace.VolumeFacts": _volume,
    "io.ktrace.NamespaceFacts": _namespace,
}
