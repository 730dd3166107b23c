"""The typed tables: each declared once, as a SELECT in ``sql/typed/<table>.sql``.

A model selects from two relations of the load batch: ``batch`` (the envelope rows, see
``envelope.py``) and ``parsed`` (each object parsed once into ``object_shape()``, made by
``sql/typed/_parsed.sql``). The table's columns are the model's: the table is created from
the model over an empty batch, and every batch is inserted by name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import duckdb
import pyarrow as pa

from replayer.envelope import EnvelopeBatch

PARSE = "_parsed"
#: raw_events first: the other tables' rows point at its event_ids.
FIRST = "raw_events"


@dataclass(frozen=True)
class Model:
    table: str
    select: str


@functools.cache
def read_sql(name: str) -> str:
    """The text of ``sql/typed/<name>.sql``."""
    return (resources.files("replayer") / "sql" / "typed" / f"{name}.sql").read_text("utf-8")


@functools.cache
def models() -> tuple[Model, ...]:
    folder = resources.files("replayer") / "sql" / "typed"
    names = sorted(p.name[:-4] for p in folder.iterdir()
                   if p.name.endswith(".sql") and not p.name.startswith("_"))
    names.sort(key=lambda n: n != FIRST)
    return tuple(Model(n, read_sql(n).strip().rstrip(";")) for n in names)


def parse_batch(con: duckdb.DuckDBPyConnection, batch: pa.Table) -> None:
    """Register ``batch`` (``EnvelopeBatch.table()``) and parse its objects: the inputs
    every model reads."""
    con.register("batch", batch)
    con.execute("SET VARIABLE ktrace_unparsable = []::BIGINT[]")
    try:
        con.execute(read_sql(PARSE))
    except (duckdb.InvalidInputException, duckdb.ConversionException):
        con.execute("SET VARIABLE ktrace_unparsable = (SELECT coalesce(list(event_id), []) "
                    "FROM batch WHERE object IS NOT NULL "
                    "AND NOT coalesce(json_valid(try(decode(object))), false))")
        con.execute(read_sql(PARSE))


def create_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create every typed table that does not exist yet, with the columns of its model;
    the tables whose existing columns are not their model's (an older ktrace made them)."""
    parse_batch(con, EnvelopeBatch().table())
    stale = []
    try:
        for model in models():
            con.execute(f"CREATE TABLE IF NOT EXISTS {model.table} AS "
                        f"FROM ({model.select}) LIMIT 0")
            if _columns(con, f"({model.select})") != _columns(con, model.table):
                stale.append(model.table)
    finally:
        release_batch(con)
    return stale


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in con.execute(f"DESCRIBE FROM {relation}").fetchall()]


def insert_batch(con: duckdb.DuckDBPyConnection) -> None:
    """Derive and insert every typed table's rows of the parsed batch."""
    for model in models():
        con.execute(f"INSERT INTO {model.table} BY NAME {model.select}")


def release_batch(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("DROP TABLE IF EXISTS temp.parsed")
    con.unregister("batch")
