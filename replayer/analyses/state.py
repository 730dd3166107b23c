"""``ktrace state --at``: every object as it was at a moment."""

from __future__ import annotations

from datetime import datetime

import duckdb
import orjson

from replayer.analyses import Rows, fetch
from replayer.objects import objects_of
from schemas.errors import KtraceError


class UnknownKind(KtraceError):
    """A --kind that names nothing this database holds."""


def resolve_kind(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """The Kind ``name`` means: a Kind (any case) or its resource (``pods``), as recorded."""
    known = con.execute("SELECT DISTINCT kind, resource FROM raw_events WHERE kind IS NOT NULL "
                        "ORDER BY kind").fetchall()
    wanted = name.strip().lower()
    for kind, resource in known:
        if wanted in (kind.lower(), (resource or "").lower()):
            return kind
    kinds = sorted({kind for kind, _ in known})
    raise UnknownKind(f"unknown kind {name!r}: this database holds {', '.join(kinds) or 'none'}")


def state(con: duckdb.DuckDBPyConnection, at: datetime, *, namespace: str | None = None,
          kind: str | None = None, full: bool = False) -> Rows:
    """With ``full``, an ``object`` column: each object's JSON as it was (stored, or fetched
    from the source: replayer/objects.py)."""
    kind = resolve_kind(con, kind) if kind else None
    columns, rows = fetch(con,
                 "SELECT kind, namespace, name, uid, type AS last_event, resource_version, "
                 "  received_at AS last_seen_at, deletion_at, finalizers, "
                 "  (SELECT any_value(phase) FROM pods p WHERE p.event_id = s.event_id) AS phase, "
                 "  event_id "
                 "FROM state_at(?::TIMESTAMP) s "
                 "WHERE (? IS NULL OR namespace = ?) AND (? IS NULL OR kind = ?) "
                 "AND kind <> 'Event' ORDER BY kind, namespace, name",
                 [at, namespace, namespace, kind, kind])
    ids = [row[-1] for row in rows]
    columns, rows = columns[:-1], [row[:-1] for row in rows]
    if not full:
        return columns, rows
    found = objects_of(con, ids)
    return columns + ["object"], [row + (_parsed(found[i]),) for row, i in zip(rows, ids)]


def _parsed(text: bytes | None) -> object:
    return orjson.loads(text) if text else None
