"""``ktrace query``: users' SQL, read-only unless they opt in.

The database is opened read-only and external access (files, network, extensions) is off,
so a query can read the tables and nothing else; only statements that answer (SELECT,
WITH, EXPLAIN, SHOW, DESCRIBE, SUMMARIZE, PRAGMA table_info) run. ``write`` lifts the
statement check on a writable connection. A timer interrupts a query that runs too long.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    import duckdb

from replayer.analyses import Rows
from schemas.errors import KtraceError
from schemas.formats import duration

READ_TYPES = frozenset({"SELECT", "EXPLAIN"})  # duckdb.StatementType names
READ_PRAGMAS = ("table_info", "show_tables", "show", "database_size", "storage_info")
DEFAULT_TIMEOUT_S = 30.0


class QueryError(KtraceError):
    """The SQL is empty, not allowed, failed or ran out of time. ``limit`` names the limit
    it hit ("read_only", "timeout"), so each front end can say how its user lifts it."""

    def __init__(self, message: str, limit: str | None = None) -> None:
        super().__init__(message)
        self.limit = limit


def run_query(con: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, Any], *,
              write: bool = False, timeout_s: float = DEFAULT_TIMEOUT_S,
              max_rows: int | None = None) -> Rows | None:
    """The result of the last statement of ``sql`` (None when it returns no rows), its
    first ``max_rows`` rows only when given (the rest is never fetched)."""
    import duckdb  # here: the CLI reads DEFAULT_TIMEOUT_S without starting DuckDB
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(f"query failed: {_first_line(exc)}") from exc
    if not statements:
        raise QueryError("no SQL given")
    if not write:
        con.execute("SET enable_external_access = false")
        for statement in statements:
            _check_read_only(statement)
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.start()
    try:
        cursor = None
        for statement in statements:
            cursor = con.execute(statement, dict(params)) if params else con.execute(statement)
        if cursor is None or cursor.description is None:
            return None
        rows = cursor.fetchall() if max_rows is None else cursor.fetchmany(max_rows)
        return [d[0] for d in cursor.description], rows
    except duckdb.InterruptException as exc:
        raise QueryError(f"query stopped after the {duration(timeout_s)} time limit",
                         "timeout") from exc
    except duckdb.Error as exc:
        raise QueryError(f"query failed: {_first_line(exc)}") from exc
    finally:
        timer.cancel()


def _check_read_only(statement: Any) -> None:
    kind = statement.type
    text = statement.query.strip()
    if kind.name in READ_TYPES:
        return
    if kind.name == "PRAGMA" and _pragma_name(text) in READ_PRAGMAS:
        return
    raise QueryError(f"{kind.name} is not allowed: queries are read-only "
                     "(SELECT, WITH, EXPLAIN, SHOW, DESCRIBE, SUMMARIZE, PRAGMA table_info)",
                     "read_only")


def _pragma_name(text: str) -> str:
    body = text.split(None, 1)[1] if " " in text else ""
    return body.split("(")[0].split("=")[0].strip().lower()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
