"""The typed tables: each declared once, as a SELECT in ``sql/typed/<table>.sql``.

A model selects from two relations of the load batch: ``batch`` (the envelope rows, see
``envelope.py``) and ``parsed`` (each object parsed once into ``object_shape()``, made by
``sql/typed/_parsed.sql``). The table's columns are the model's: the table is created from
the model over an empty batch, and every batch is inserted by name.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Iterable

import duckdb
import pyarrow as pa

from replayer.envelope import EnvelopeBatch

PARSE = "_parsed"
#: raw_events first: the other tables' rows point at its event_ids.
FIRST = "raw_events"
#: The in-memory database parsed batches are kept in (every cursor of a connection sees it).
STAGE = "ktrace_stage"
#: Where the tables are created from: the parse of an empty batch.
EMPTY_PARSED = f"{STAGE}.empty"
#: Columns stored with a compression of their own: each object's JSON text, with
#: ``--store-objects all``. DuckDB's default for text (dictionary/FSST, chosen by analysing
#: every segment) spends ~4x the CPU of zstd on ~6 KB JSON documents at checkpoint, and
#: zstd's files are smaller (docs/performance.md).
COMPRESSION = {("raw_events", "object"): "zstd"}


@dataclass(frozen=True)
class Model:
    table: str
    select: str
    #: The kinds of record it derives rows from, None: any. Read from the SQL (the kinds it
    #: compares ``kind`` with), so a batch of other kinds skips the statement (~2-10 ms each).
    kinds: frozenset[str] | None = None


#: ``kind = 'Pod'``, ``kind IN ('Job', 'DaemonSet')``.
_KIND_TEST = re.compile(r"\bkind\s*(?:=\s*'(\w+)'|IN\s*\(([^)]*)\))")


def kinds_read(select: str) -> frozenset[str] | None:
    """The kinds a model's SELECT filters its rows to (None: it reads every record)."""
    found = set()
    for single, listed in _KIND_TEST.findall(select):
        found |= {single} if single else set(re.findall(r"'(\w+)'", listed))
    return frozenset(found) or None


@functools.cache
def read_sql(name: str) -> str:
    """The text of ``sql/typed/<name>.sql``."""
    return (resources.files("replayer") / "sql" / "typed" / f"{name}.sql").read_text("utf-8")


@functools.cache
def kinds_named() -> frozenset[str]:
    """Every kind some model reads by name: the kinds a typed table is made for (the models
    that read every record — raw_events, markers, conditions… — name none)."""
    return frozenset().union(*(m.kinds for m in models() if m.kinds is not None))


@functools.cache
def models() -> tuple[Model, ...]:
    folder = resources.files("replayer") / "sql" / "typed"
    names = sorted(p.name[:-4] for p in folder.iterdir()
                   if p.name.endswith(".sql") and not p.name.startswith("_"))
    names.sort(key=lambda n: n != FIRST)
    selects = {n: read_sql(n).strip().rstrip(";") for n in names}
    return tuple(Model(n, selects[n], kinds_read(selects[n])) for n in names)


def parse_batch(con: duckdb.DuckDBPyConnection, batch: pa.Table, table: str) -> None:
    """Parse the objects of ``batch`` (``EnvelopeBatch.table()``) into ``table``, made
    again: what every model reads as ``parsed``. ``con`` may be another cursor of the
    database than the one the models run on (the loader parses the next batch while the
    last one is inserted)."""
    con.register("batch", batch)
    con.execute("SET VARIABLE ktrace_unparsable = []::BIGINT[]")
    parse = f"CREATE OR REPLACE TABLE {table} AS {read_sql(PARSE)}"
    try:
        con.execute(parse)
    except (duckdb.InvalidInputException, duckdb.ConversionException):
        con.execute("SET VARIABLE ktrace_unparsable = (SELECT coalesce(list(event_id), []) "
                    "FROM batch WHERE object IS NOT NULL "
                    "AND NOT coalesce(json_valid(object), false))")
        con.execute(parse)
    con.unregister("batch")


def attach_stage(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {STAGE}")


def use_batch(con: duckdb.DuckDBPyConnection, batch: pa.Table, parsed: str) -> None:
    """Register ``batch`` and its objects parsed into ``parsed`` (``parse_batch``) as
    the two relations the models read."""
    con.register("batch", batch)
    con.execute(f"CREATE OR REPLACE TEMP VIEW parsed AS FROM {parsed}")


def release_batch(con: duckdb.DuckDBPyConnection, parsed: str) -> None:
    con.execute(f"DROP VIEW IF EXISTS temp.parsed; DROP TABLE IF EXISTS {parsed}")
    con.unregister("batch")


def create_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create every typed table that does not exist yet, with the columns of its model;
    the tables whose existing columns are not their model's (an older ktrace made them)."""
    empty = EnvelopeBatch().table()
    attach_stage(con)
    parse_batch(con, empty, EMPTY_PARSED)
    use_batch(con, empty, EMPTY_PARSED)
    stale = []
    try:
        for model in models():
            columns = _columns(con, f"({model.select})")
            definitions = _definitions(model.table, columns)
            con.execute(f"CREATE TABLE IF NOT EXISTS {model.table} ({definitions})")
            if columns != _columns(con, model.table):
                stale.append(model.table)
    finally:
        release_batch(con, EMPTY_PARSED)
    return stale


def shape() -> str:
    """What, beside the SQL, decides the typed tables' columns: the envelope batch's
    columns they are made from, and the compressions of their own."""
    return f"{EnvelopeBatch().table().schema}\n{sorted(COMPRESSION.items())}"


def _definitions(table: str, columns: list[tuple[str, str]]) -> str:
    """The column list of ``CREATE TABLE`` (a table made ``AS`` a query takes no
    compression)."""
    return ", ".join(f'"{name}" {kind}' + (f" USING COMPRESSION {COMPRESSION[table, name]}"
                                          if (table, name) in COMPRESSION else "")
                     for name, kind in columns)


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in con.execute(f"DESCRIBE FROM {relation}").fetchall()]


def insert_batch(con: duckdb.DuckDBPyConnection, kinds: Iterable[str] | None = None) -> None:
    """Derive and insert every typed table's rows of the parsed batch, which holds records
    of ``kinds`` (None: of any kind)."""
    con.execute(insert_script(None if kinds is None else frozenset(kinds)))


@functools.cache
def insert_script(kinds: frozenset[str] | None) -> str:
    """The INSERT of every model that may have rows of ``kinds``, as one script: one call
    into DuckDB, not one per table (each return to Python waits for the GIL, which the
    loader's reader thread holds)."""
    return "\n;\n".join(f"INSERT INTO {m.table} BY NAME {m.select}" for m in models()
                         if kinds is None or m.kinds is None or m.kinds & kinds)

