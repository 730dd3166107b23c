"""The replay database: opening it safely and applying the schema and projections.

A ktrace database says so in ``ktrace_meta`` (application, schema version). Any other DuckDB
file — or a file that is not DuckDB at all — is refused rather than written into.
"""

from __future__ import annotations

import os
from importlib import resources

import duckdb

from schemas.errors import KtraceError

APPLICATION = "ktrace"
SCHEMA_VERSION = 1


class DatabaseError(KtraceError):
    """The database file cannot be used (another program's, too new, unreadable)."""


def sql_files() -> list[tuple[str, str]]:
    """(name, text) of the packaged ``sql/NN_name.sql`` files, in order."""
    folder = resources.files("replayer") / "sql"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
    return [(n, (folder / n).read_text(encoding="utf-8")) for n in names]


def open_db(path: str, *, rebuild: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) a ktrace database and apply the schema and projections."""
    con = _connect(path)
    try:
        _check_ownership(con, path)
        if rebuild:
            con.close()
            _remove(path)
            con = _connect(path)
        apply_sql(con)
    except BaseException:
        con.close()
        raise
    return con


def apply_sql(con: duckdb.DuckDBPyConnection) -> None:
    """Run the sql/ files in order; the database is marked as ktrace's right after the
    tables exist, so a failing projection cannot leave an unclaimed file behind."""
    for name, text in sql_files():
        try:
            con.execute(text)
        except duckdb.Error as exc:
            raise DatabaseError(f"projection {name} failed: {exc}") from exc
        if name.startswith("00_"):
            con.execute("INSERT OR REPLACE INTO ktrace_meta VALUES ('application', ?), "
                        "('schema_version', ?)", [APPLICATION, str(SCHEMA_VERSION)])


def meta(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    row = con.execute("SELECT value FROM ktrace_meta WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute("INSERT OR REPLACE INTO ktrace_meta VALUES (?, ?)", [key, value])


#: DuckDB caches up to 80% of RAM by default; a long replay then grows without bound. Above
#: this it spills to disk instead. KTRACE_DB_MEMORY_LIMIT overrides it.
DEFAULT_MEMORY_LIMIT = "1GB"


def _connect(path: str) -> duckdb.DuckDBPyConnection:
    config = {
        # Checkpoint rarely: each commit is already durable in the WAL, and a checkpoint per
        # batch would rewrite the tables' newest blocks again and again.
        "checkpoint_threshold": "256MB",
        "memory_limit": os.environ.get("KTRACE_DB_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT),
    }
    try:
        return duckdb.connect(path, config=config)
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0]
        raise DatabaseError(f"cannot open {path} as a DuckDB database: {first}") from exc


def _check_ownership(con: duckdb.DuckDBPyConnection, path: str) -> None:
    tables = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    if not tables:
        return
    if "ktrace_meta" not in tables or meta(con, "application") != APPLICATION:
        raise DatabaseError(f"{path} is not a ktrace database (it holds other tables: "
                            f"{', '.join(sorted(tables)[:5])}); refusing to write into it")
    version = int(meta(con, "schema_version") or 0)
    if version > SCHEMA_VERSION:
        raise DatabaseError(f"{path} has schema version {version}; this ktrace reads up to "
                            f"{SCHEMA_VERSION}: upgrade ktrace")


def _remove(path: str) -> None:
    for name in (path, path + ".wal"):
        if os.path.exists(name):
            os.remove(name)
