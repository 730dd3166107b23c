"""A replay database as a Parquet directory, and analyses over one read in place.

``export_parquet`` writes every table of the database to ``DIR/<table>/``: raw_events and
the typed tables (rows of one record each) hive-partitioned by the record's kind and
receive date (``kind=Pod/date=2026-12-01/``), so history that outgrows one database lives
in object storage and a reader scans only the kinds and days it asks for; the other
tables (projections, bookkeeping) as one file each. ``manifest.json`` lists each table's
columns in order. ``open_parquet`` opens an in-memory database whose tables are views over
those files (DuckDB reads them in place) with ktrace's views and macros on top: every
analysis runs on it unchanged.
"""

from __future__ import annotations

import glob
import json
import os
import re

import duckdb

from replayer import db, projections
from schemas.errors import KtraceError

_READS_ROWID = re.compile(r"\browid\b", re.I)
MANIFEST = "manifest.json"
#: The partition keys: a record's kind and the UTC date it was received.
PARTITION = ("kind", "date")


class ExportError(KtraceError):
    """A Parquet directory that cannot be written or read as a ktrace export."""


def export_parquet(con: duckdb.DuckDBPyConnection, directory: str) -> dict[str, int]:
    """Write every table of ``con`` under ``directory`` (which must not hold an export
    yet); table → rows written."""
    if os.path.exists(os.path.join(directory, MANIFEST)):
        raise ExportError(f"{directory} already holds an export; choose a new directory")
    os.makedirs(directory, exist_ok=True)
    manifest, written = {}, {}
    for table in _tables(con):
        described = [(r[0], r[1]) for r in con.execute(f'DESCRIBE "{table}"').fetchall()]
        columns = [name for name, _ in described]
        target = os.path.join(directory, table)
        if "event_id" in columns:  # one record's rows: partitioned by its kind and date
            own = ", ".join(f't."{c}"' for c in columns if c not in PARTITION)
            source = ("raw_events t JOIN raw_events r ON r.event_id = t.event_id"
                      if table == "raw_events" else
                      f'"{table}" t JOIN raw_events r ON r.event_id = t.event_id')
            relation = f"SELECT {own}, r.kind, r.received_at::DATE AS date FROM {source}"
            con.execute(f"COPY ({relation}) TO '{_quote(target)}' "
                        f"(FORMAT parquet, PARTITION_BY (kind, date), OVERWRITE_OR_IGNORE)")
        else:
            os.makedirs(target, exist_ok=True)
            con.execute(f"COPY \"{table}\" TO '{_quote(os.path.join(target, 'data.parquet'))}' "
                        "(FORMAT parquet)")
        manifest[table] = {"columns": described, "partitioned": "event_id" in columns}
        written[table] = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    with open(os.path.join(directory, MANIFEST), "w", encoding="utf-8") as fh:
        json.dump({"application": db.APPLICATION, "schema_version": db.SCHEMA_VERSION,
                   "tables": manifest}, fh, indent=1)
    return written


def open_parquet(directory: str) -> duckdb.DuckDBPyConnection:
    """An in-memory database over the export in ``directory``: its tables are views of the
    Parquet files, ktrace's views and macros are defined over them; nothing is copied."""
    manifest = _manifest(directory)
    directory = os.path.abspath(directory)
    # `ktrace query` turns external access off; the export's own files stay readable
    con = duckdb.connect()
    try:
        con.execute("SET allowed_directories = [?]", [directory + os.sep])
        for table, spec in manifest["tables"].items():
            con.execute(f'CREATE VIEW "{table}" AS {_reader(directory, table, spec)}')
        for model in _readable_models():
            for statement in model.statements():
                con.execute(statement)
    except duckdb.Error as exc:
        con.close()
        raise ExportError(f"{directory} cannot be read as a ktrace export: "
                          f"{str(exc).splitlines()[0]}") from exc
    return con


def _readable_models() -> list[projections.Model]:
    """The views and macros over an export's tables, without the parts of a refresh: those
    read the rows a refresh appended by their rowid, which a view of Parquet files does not
    have, and an export's tables are made already."""
    refresh_parts: set[str] = set()
    readable = []
    for model in projections.ordered_models():
        if model.materialisation not in ("view", "macro"):
            continue
        if _READS_ROWID.search(re.sub(r"--[^\n]*", "", model.body)) \
                or refresh_parts.intersection(model.depends):
            refresh_parts.add(model.name)
        else:
            readable.append(model)
    return readable


def _reader(directory: str, table: str, spec: dict) -> str:
    """The SELECT reading one exported table in its columns' order (typed NULLs, no rows,
    for a table that had none: a partitioned table without rows writes no file)."""
    files = glob.glob(os.path.join(directory, table, "**", "*.parquet"), recursive=True)
    if not files:
        return "SELECT " + ", ".join(f'NULL::{t} AS "{c}"' for c, t in spec["columns"]) + " LIMIT 0"
    columns = ", ".join(f'"{c}"' for c, _ in spec["columns"])
    pattern = _quote(os.path.join(directory, table, "**", "*.parquet"))
    options = ("hive_partitioning = true, hive_types = {'kind': VARCHAR, 'date': DATE}"
               if spec["partitioned"] else "hive_partitioning = false")
    return f"SELECT {columns} FROM read_parquet('{pattern}', {options})"


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "AND table_type = 'BASE TABLE' ORDER BY table_name").fetchall()]


def _manifest(directory: str) -> dict:
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        raise ExportError(f"no ktrace export at {directory} (no {MANIFEST}): write one with "
                          "`ktrace export --db DB --parquet DIR`") from None
    except (OSError, ValueError) as exc:
        raise ExportError(f"{path} is unreadable: {exc}") from exc
    if manifest.get("schema_version") != db.SCHEMA_VERSION:
        raise ExportError(f"{directory} was exported with schema version "
                          f"{manifest.get('schema_version')}; this ktrace reads "
                          f"{db.SCHEMA_VERSION}: export it again from its database")
    return manifest


def _quote(text: str) -> str:
    return text.replace("'", "''")
