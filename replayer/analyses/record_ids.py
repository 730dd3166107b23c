"""Evidence ids that outlive the database: a record's id is its kind's kubectl short
name (schemas/kinds.py, the API server's own), else its resource where kubectl has none
(``jobs``, ``leases``, ``volumeattachments``), a tag of its recorder session (8 hex digits of md5(cluster/session))
and its sequence number in that session's topic — ``po:3f2a9c1d:42``. The recorder numbers each session's records per
topic without gaps, so the id is the same in every database loaded from the recording,
whatever the load order, the window (``incident --since``) or a ``--rebuild``; a kubectl
import's session is its file's name, its sequence the object's place in the file.

Inside the database, joins stay on the integer ``event_id`` (load order); analyses turn the
ids they print into record ids at the last step (``public_ids``), and ``ktrace evidence``
turns them back (``event_id_of``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable, Sequence

if TYPE_CHECKING:  # the CLI reads this module's names without starting DuckDB
    import duckdb

from schemas.errors import KtraceError
from schemas.kinds import KINDS, UnknownKind, kind_name

#: a raw_events row's session tag, and its record id, in SQL
SESSION_TAG_SQL = "substr(md5(cluster || '/' || session), 1, 8)"
_PREFIX_SQL = ("CASE resource " + " ".join(f"WHEN '{k.resource}' THEN '{k.short[0]}'"
                                           for k in KINDS if k.short) + " ELSE resource END")
RECORD_ID_SQL = f"{_PREFIX_SQL} || ':' || {SESSION_TAG_SQL} || ':' || seq"
#: columns (and keys of nested structs, such as a cause's ``evidence``) holding event ids
EVIDENCE_KEYS = frozenset({"evidence_event_id", "evidence"})
_RECORD_ID = re.compile(r"^([a-z0-9.-]+):([0-9a-f]{8}):(\d+)$")
#: the event ids record_ids looks up, registered for the one query
WANTED = "wanted_event_ids"


class UnknownEvidence(KtraceError):
    """An evidence id that names no record of this database."""


def record_ids(con: duckdb.DuckDBPyConnection, event_ids: Iterable[int]) -> dict[int, str]:
    import pyarrow as pa  # here: the CLI imports this module without starting DuckDB

    wanted = sorted({e for e in event_ids if e is not None})
    if not wanted:
        return {}
    # an Arrow column, not a list parameter: binding tens of thousands of values costs more
    # than the lookup
    con.register(WANTED, pa.table({"event_id": pa.array(wanted, pa.int64())}))
    try:
        rows = con.execute(f"SELECT event_id, {RECORD_ID_SQL} FROM raw_events "
                           f"WHERE event_id IN (SELECT event_id FROM {WANTED})").fetchall()
    finally:
        con.unregister(WANTED)
    return dict(rows)


def _is_id(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


def _collect(value: Any, under_key: bool, found: set, kind: type = int) -> None:
    """Every ``kind`` value under an evidence key of ``value`` into ``found``."""
    if under_key and _is_id(value, kind):
        found.add(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect(item, under_key or key in EVIDENCE_KEYS, found, kind)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, under_key, found, kind)


def _replace(value: Any, under_key: bool, ids: dict) -> Any:
    if under_key and isinstance(value, (int, str)) and not isinstance(value, bool) \
            and value in ids:
        return ids[value]
    if isinstance(value, dict):
        return {k: _replace(v, under_key or k in EVIDENCE_KEYS, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, under_key, ids) for v in value]
    if isinstance(value, tuple):
        return tuple(_replace(v, under_key, ids) for v in value)
    return value


#: DuckDB's integer types (an event id is a BIGINT)
_INTEGERS = frozenset({"tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint",
                       "usmallint", "uinteger", "ubigint", "uhugeint"})
#: where a value holds event ids: ``ID`` (it is one), ``("list", plan)`` (in its items),
#: ``("struct", ((field, plan), …))`` (in those fields), ``("any", under_key)`` (a type
#: without a walk of its own, walked as any value); None: nowhere
Plan = Any
ID = "id"
#: a list of ids (races' evidence): replaced in one comprehension, not one call per id
IDS = ("list", ID)


def _plan(sql_type: Any, under_key: bool) -> Plan:
    """Where a value of ``sql_type`` (a result column's DuckDB type) holds event ids. The
    type says it once for the column, so a large answer's values are walked only along
    those paths (a stuck answer's causes: each one's evidence, not its detail text)."""
    kind = sql_type.id
    if kind in _INTEGERS:
        return ID if under_key else None
    if kind in ("list", "array"):
        inner = _plan(sql_type.child, under_key)
        return None if inner is None else ("list", inner)
    if kind == "struct":
        fields = tuple((name, plan) for name, field_type in sql_type.children
                       if (plan := _plan(field_type, under_key or name in EVIDENCE_KEYS)))
        return ("struct", fields) if fields else None
    if kind in ("map", "union"):
        return ("any", under_key)
    return None  # text, times, other numbers: no ids


def _collect_planned(value: Any, plan: Plan, found: set) -> None:
    if value is None:
        return
    if plan == ID:
        found.add(value)
    elif plan == IDS:
        found.update(value)
    elif plan[0] == "list":
        for item in value:
            _collect_planned(item, plan[1], found)
    elif plan[0] == "struct":
        for name, inner in plan[1]:
            _collect_planned(value[name], inner, found)
    else:
        _collect(value, plan[1], found)


def _replace_planned(value: Any, plan: Plan, ids: dict) -> Any:
    if value is None:
        return None
    if plan == ID:
        return ids.get(value, value)
    if plan == IDS:
        return [ids.get(x, x) for x in value]
    if plan[0] == "list":
        return [_replace_planned(item, plan[1], ids) for item in value]
    if plan[0] == "struct":
        return {**value, **{name: _replace_planned(value[name], inner, ids)
                            for name, inner in plan[1]}}
    return _replace(value, plan[1], ids)


def public_ids(con: duckdb.DuckDBPyConnection, description: Sequence[tuple[Any, ...]],
               rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``rows`` with every event id under an evidence column or key as its record id;
    ``description``: their cursor's (each column's name and DuckDB type)."""
    visit = [(i, plan) for i, (name, sql_type, *_) in enumerate(description)
             if (plan := _plan(sql_type, name in EVIDENCE_KEYS))]
    found: set[int] = set()
    for i, plan in visit:
        for row in rows:
            _collect_planned(row[i], plan, found)
    if not found:
        return rows
    ids = record_ids(con, found)
    out = []
    for row in rows:
        values = list(row)
        for i, plan in visit:
            values[i] = _replace_planned(values[i], plan, ids)
        out.append(tuple(values))
    return out


def public_dicts(con: duckdb.DuckDBPyConnection, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same for rows as dicts (explain's stories)."""
    found: set[int] = set()
    _collect(items, False, found)
    ids = record_ids(con, found)
    return _replace(items, False, ids) if ids else items


def internal_dicts(con: duckdb.DuckDBPyConnection,
                   items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reverse, for a consumer that joins on event ids (the HTML report)."""
    found: set[str] = set()
    _collect(items, False, found, str)
    return _replace(items, False, {i: event_id_of(con, i) for i in found})


def event_id_of(con: duckdb.DuckDBPyConnection, evidence_id: str) -> int:
    """The event_id of a record id (or of an event_id itself, as ``ktrace query`` shows)."""
    text = evidence_id.strip()
    if text.isdigit():
        return int(text)
    m = _RECORD_ID.match(text)
    if m is None:
        raise UnknownEvidence(f"{evidence_id!r} is not an evidence id (RESOURCE:SESSION:SEQ, "
                              "e.g. po:3f2a9c1d:42, as the analyses print them)")
    prefix, tag, seq = m.groups()
    try:
        resource = kind_name(prefix).resource
    except UnknownKind:
        resource = prefix  # a kind outside the table (imports keep any resource)
    rows = con.execute("SELECT event_id FROM raw_events WHERE resource = ? AND seq = ? AND "
                       f"{SESSION_TAG_SQL} = ?",
                       [resource, int(seq), tag]).fetchall()
    if not rows:
        raise UnknownEvidence(f"no record with evidence id {text} in the database")
    return rows[0][0]
