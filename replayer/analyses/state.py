"""``ktrace state --at``: every object as it was at a moment."""

from __future__ import annotations

from datetime import datetime

import duckdb

from replayer.analyses import Rows, fetch
from replayer.objects import objects_of, parsed
from transports.kafka.settings import KafkaSettings
from schemas.kinds import kind_name


def state(con: duckdb.DuckDBPyConnection, at: datetime, *, namespace: str | None = None,
          cluster: str | None = None, kind: str | None = None, full: bool = False,
          kafka: KafkaSettings | None = None) -> Rows:
    """``kind`` is any name kubectl takes (``pods``, ``po``, ``Pod``). With ``full``, an
    ``object`` column: each object's JSON as it was (stored, or fetched from the source,
    a Kafka one through ``kafka`` when given: replayer/objects.py)."""
    kind = kind_name(kind).kind if kind else None
    columns, rows = fetch(con,
                 "SELECT kind, namespace, name, uid, type AS last_event, resource_version, "
                 "  received_at AS last_seen_at, deletion_at, finalizers, "
                 "  (SELECT any_value(phase) FROM pods p WHERE p.event_id = s.event_id) AS phase, "
                 "  event_id "
                 "FROM state_at(?::TIMESTAMP) s "
                 "WHERE (? IS NULL OR namespace = ?) AND (? IS NULL OR kind = ?) "
                 "AND (? IS NULL OR cluster = ?) "
                 "AND kind <> 'Event' ORDER BY kind, namespace, name",
                 [at, namespace, namespace, kind, kind, cluster, cluster])
    ids = [row[-1] for row in rows]
    columns, rows = columns[:-1], [row[:-1] for row in rows]
    if not full:
        return columns, rows
    found = objects_of(con, ids, kafka)
    return columns + ["object"], [row + (parsed(found[i]),) for row, i in zip(rows, ids)]
