"""``ktrace evidence ID``: the record behind an evidence id, where it came from, and what it
says — the facts the typed tables hold about it, and (with ``full``) the object, stored or
fetched from its source (replayer/objects.py)."""

from __future__ import annotations

from typing import Any

import duckdb

from replayer.analyses.record_ids import RECORD_ID_SQL, UnknownEvidence, event_id_of
from replayer.objects import object_json, parsed
from transports.kafka.settings import KafkaSettings

#: typed tables keyed by event_id whose rows describe the record's object
FACT_TABLES = ("pods", "containers", "conditions", "endpoints", "k8s_events", "nodes",
               "taints", "leases", "workloads", "volumes", "namespaces", "owner_refs",
               "markers")


def evidence(con: duckdb.DuckDBPyConnection, evidence_id: str, *, full: bool = False,
             kafka: KafkaSettings | None = None) -> dict[str, Any]:
    """The record an evidence id names (a record id as analyses print it, or an event_id);
    ``kafka``: how to reach the recording's Kafka for the object (replayer/objects.py)."""
    event_id = event_id_of(con, evidence_id)
    cursor = con.execute(
        f"SELECT {RECORD_ID_SQL} AS id, event_id, kind, namespace, name, uid, type, inferred, resource_version, "
        "  received_at, time_source, component, attribution, topic, \"partition\", \"offset\", "
        "  cluster, session, seq, truncated, object_size "
        "FROM raw_events WHERE event_id = ?", [event_id])
    row = cursor.fetchone()
    if row is None:
        raise UnknownEvidence(f"no record with evidence id {evidence_id} in the database")
    record = dict(zip([d[0] for d in cursor.description], row))
    facts = {}
    for table in FACT_TABLES:
        cur = con.execute(f"SELECT * EXCLUDE (event_id) FROM {table} WHERE event_id = ?",
                          [event_id])
        rows = cur.fetchall()
        if rows:
            columns = [d[0] for d in cur.description]
            facts[table] = [dict(zip(columns, r)) for r in rows]
    record["facts"] = facts
    if full:
        record["object"] = parsed(object_json(con, event_id, kafka))
    return record
