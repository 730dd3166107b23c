"""The projections, declared as models: one object per ``sql/<name>.sql``, made in the order
their dependencies give, the ones kept as tables maintained by each load.

A model's first line says what it is and what it reads, e.g.
``-- model: table; key: uid; depends: projection_scope, raw_events``:

- ``state``: a bookkeeping table the loads write (its body: the column list), kept across
  SQL changes;
- ``seed``: a table of settings (thresholds, scores), its column list and its ``VALUES``;
- ``view``, ``macro(params)``: a SELECT, or a macro's expression or SELECT (a table macro);
- ``table``: a projection kept as a table, its SELECT made the view ``<name>_computed``. With
  ``key: COLUMN`` the SELECT computes the rows of the uids in ``projection_scope`` and a
  refresh replaces just those; without, it computes the whole table again from the records
  after ``projected_through`` and the table's own rows (their columns listed first).

``depends`` names the models (and typed tables, sql/typed/) it reads: the order in which the
models are made and refreshed, checked for unknown names and cycles.

The per-object and per-pod projections (``object_versions``, ``pod_transitions``, …) cost
seconds to compute over a large recording; an analysis reads them as tables instead, and
opening a database for analysis writes nothing. The records loaded since the last refresh add
the objects they hold versions of and the pods they touched to ``projection_scope``
(``sql/typed/_touched_pods.sql``); the load's last step refreshes every table model and
records how far the projections reach (``projected_through``, an event_id), so an
interrupted load is noticed: a loader catches up on its next open, an analysis says so.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from typing import Iterator

import duckdb

from replayer import typed
from schemas.errors import KtraceError

PROJECTED_THROUGH = "projected_through"
#: How far the projections reach into duplicate_sequence (a rowid: the table only grows).
DUPLICATES_PROJECTED = "duplicates_projected"
#: The variable a keyed table model's refresh names the first rowid of its rows by
#: (followed by the model's name; read by sql/refreshed_from.sql).
REFRESHED_FROM = "ktrace_refreshed_from_"
TOUCHED = "_touched_pods"
#: The first step of a refresh: the objects to recompute found.
SCOPE_STEP = "(scope)"
#: What the typed tables are parsed with (sql/typed/_parsed.sql): made before them.
TYPED_READ = "object_shape"
MATERIALISATIONS = ("state", "seed", "view", "macro", "table")
_HEADER = re.compile(r"-- model: (\w+)(\([^)]*\))?((?:; [^\n]*)?)\n")
#: A table macro's body is a query; a scalar macro's an expression.
_QUERY = re.compile(r"(SELECT|WITH|FROM|UNPIVOT|PIVOT)\b", re.I)


class ModelError(KtraceError):
    """The packaged models cannot be ordered or read (a header, a dependency, a cycle)."""


@dataclass(frozen=True)
class Model:
    name: str
    materialisation: str
    depends: tuple[str, ...]
    #: The SQL after the header: columns, a SELECT, or a macro's body.
    body: str
    #: A macro's parameters, with their parentheses.
    params: str = ""
    #: A keyed table's column of uids: its rows in projection_scope are refreshed.
    key: str | None = None

    def statements(self) -> list[str]:
        """The SQL that makes it."""
        name = self.name
        if self.materialisation == "view":
            return [f"CREATE OR REPLACE VIEW {name} AS {self.body}"]
        if self.materialisation == "macro":
            table = "TABLE " if _QUERY.match(_code(self.body)) else ""
            return [f"CREATE OR REPLACE MACRO {name}{self.params} AS {table}{self.body}"]
        columns, rest = _columns(self.body)
        if self.materialisation == "state":
            return [f"CREATE TABLE IF NOT EXISTS {name} {columns}"]
        if self.materialisation == "seed":
            return [f"CREATE OR REPLACE TABLE {name} {columns}", f"INSERT INTO {name} {rest}"]
        computed = f"CREATE OR REPLACE VIEW {name}_computed AS {rest}"
        if columns:  # it reads its own rows: the table first
            return [f"CREATE OR REPLACE TABLE {name} {columns}", computed]
        return [computed, f"CREATE OR REPLACE TABLE {name} AS FROM {name}_computed LIMIT 0"]

    def refresh(self) -> list[str]:
        """The SQL that brings a table model up to the records loaded (nothing for others)."""
        name = self.name
        if self.materialisation != "table":
            return []
        if self.key:  # the scope's rows appended after every other: see sql/refreshed_from.sql
            return [f"SET VARIABLE {REFRESHED_FROM}{name} = "
                    f"(SELECT coalesce(max(rowid) + 1, 0) FROM {name})",
                    f"DELETE FROM {name} WHERE {self.key} IN (SELECT uid FROM projection_scope)",
                    f"INSERT INTO {name} SELECT * FROM {name}_computed"]
        # its SELECT reads the table: computed aside before the table is emptied
        return [f"CREATE OR REPLACE TEMP TABLE refreshed_{name} AS FROM {name}_computed",
                f"DELETE FROM {name}", f"INSERT INTO {name} FROM temp.refreshed_{name}",
                f"DROP TABLE temp.refreshed_{name}"]


def _code(body: str) -> str:
    """The body without its leading comment lines."""
    return re.sub(r"\A(?:\s*--[^\n]*\n)*\s*", "", body)


def _columns(body: str) -> tuple[str, str]:
    """(the column list the body starts with, or "", what follows it)."""
    code = _code(body)
    if not code.startswith("("):
        return "", code
    depth = 0
    for at, char in enumerate(code):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return code[:at + 1], code[at + 1:].strip()
    raise ValueError("unbalanced column list")


def parse(name: str, text: str) -> Model:
    """The model of ``sql/<name>.sql``."""
    header = _HEADER.match(text)
    if not header or header[1] not in MATERIALISATIONS:
        raise ModelError(f"sql/{name}.sql: its first line must be '-- model: "
                         f"{'|'.join(MATERIALISATIONS)}[; key: COLUMN][; depends: a, b]'")
    settings = dict(part.split(": ", 1) for part in header[3].split("; ")[1:])
    if set(settings) - {"key", "depends"} or (header[2] is not None) != (header[1] == "macro"):
        raise ModelError(f"sql/{name}.sql: cannot read its header {header[0].strip()!r}")
    depends = tuple(d.strip() for d in settings.get("depends", "").split(",") if d.strip())
    return Model(name, header[1], depends, text[header.end():].strip().rstrip(";").rstrip(),
                 header[2] or "", settings.get("key"))


@functools.cache
def models() -> dict[str, Model]:
    folder = resources.files("replayer") / "sql"
    return {p.name[:-4]: parse(p.name[:-4], p.read_text("utf-8"))
            for p in folder.iterdir() if p.name.endswith(".sql")}


@functools.cache
def order() -> tuple[str, ...]:
    """Every model and typed table, each after what it depends on (the bookkeeping tables
    first, then by name among those ready)."""
    graph = {name: set(m.depends) for name, m in models().items()}
    graph.update({m.table: {TYPED_READ} for m in typed.models()})
    states = {n for n, m in models().items() if m.materialisation == "state"}
    return dependency_order(graph, first=states)


def dependency_order(graph: dict[str, set[str]], first: set[str] = frozenset()) -> tuple[str, ...]:
    """The names of ``graph`` (name → the names it depends on), each after its
    dependencies; among those ready, the ones in ``first``, then by name."""
    for name, depends in graph.items():
        if unknown := sorted(depends - graph.keys()):
            raise ModelError(f"model {name} depends on {', '.join(unknown)}: no such model")
    waiting = {name: set(depends) for name, depends in graph.items()}
    ready = [(n not in first, n) for n, depends in waiting.items() if not depends]
    heapq.heapify(ready)
    ordered: list[str] = []
    while ready:
        name = heapq.heappop(ready)[1]
        ordered.append(name)
        for other, depends in waiting.items():
            if name in depends:
                depends.discard(name)
                if not depends:
                    heapq.heappush(ready, (other not in first, other))
    if len(ordered) < len(graph):
        raise ModelError(f"models depend on each other in a cycle: {_cycle(waiting, ordered)}")
    return tuple(ordered)


def _cycle(waiting: dict[str, set[str]], done: list[str]) -> str:
    """One cycle among the models left unordered, as 'a → b → a'."""
    path = [min(n for n in waiting if n not in done)]
    while path.count(path[-1]) < 2:
        path.append(min(d for d in waiting[path[-1]] if d not in done))
    return " → ".join(path[path.index(path[-1]):])


def ordered_models() -> list[Model]:
    """The models (typed tables aside) in the order they are made."""
    return [models()[n] for n in order() if n in models()]


def loaded_through(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT coalesce(max(event_id), 0) FROM raw_events").fetchone()[0]


def projected_through(con: duckdb.DuckDBPyConnection) -> int | None:
    row = con.execute("SELECT value FROM ktrace_meta WHERE key = ?", [PROJECTED_THROUGH]).fetchone()
    return int(row[0]) if row else None


def current(con: duckdb.DuckDBPyConnection) -> bool:
    return projected_through(con) == loaded_through(con)


def mark_touched(con: duckdb.DuckDBPyConnection) -> None:
    """Add the objects of the records loaded since the last refresh, and the pods they
    touched, to the scope. One pass over them all when the projections are refreshed,
    not one per load batch (each scanned the history: 30-85 ms a batch at 1M events);
    every clause only grows with the data, so it holds each batch's scope."""
    con.execute("SET VARIABLE ktrace_scope_after = ?", [projected_through(con) or 0])
    con.execute("CREATE OR REPLACE TEMP VIEW loaded AS FROM raw_events "
                "WHERE event_id > getvariable('ktrace_scope_after')")
    con.execute("INSERT OR IGNORE INTO projection_scope "
                "SELECT DISTINCT uid FROM loaded WHERE uid IS NOT NULL;\n"
                "INSERT OR IGNORE INTO projection_scope " + typed.read_sql(TOUCHED))
    con.execute("DROP VIEW temp.loaded")


def rescope_all(con: duckdb.DuckDBPyConnection) -> None:
    """Every object in scope and every record new: the projections' SQL changed (their
    tables were made again, empty), all rows are computed again."""
    con.execute("INSERT OR IGNORE INTO projection_scope "
                "SELECT DISTINCT uid FROM raw_events WHERE uid IS NOT NULL")
    con.execute("DELETE FROM ktrace_meta WHERE key IN (?, ?)",
                [PROJECTED_THROUGH, DUPLICATES_PROJECTED])


def refresh(con: duckdb.DuckDBPyConnection) -> Counter[str]:
    """Refresh every table model in dependency order, in the caller's transaction, and
    empty the scope; the rows each table model wrote."""
    return Counter(dict(refreshing(con)))


def refreshing(con: duckdb.DuckDBPyConnection) -> Iterator[tuple[str, int]]:
    """``refresh`` step by step: the scope marked (named ``SCOPE_STEP``), then each model
    refreshed, each step's name and the rows it wrote yielded once it is done."""
    mark_touched(con)
    yield SCOPE_STEP, 0
    for model in ordered_models():
        written = 0
        for statement in model.refresh():
            result = con.execute(statement).fetchone()
            if statement.startswith("INSERT"):
                written += result[0]
        yield model.name, written
    con.execute("DELETE FROM projection_scope")
    for model in ordered_models():
        if model.key:  # a later statement on this connection reads every row again
            con.execute(f"RESET VARIABLE {REFRESHED_FROM}{model.name}")
    con.execute("INSERT OR REPLACE INTO ktrace_meta VALUES (?, ?), (?, (SELECT "
                "coalesce(max(rowid) + 1, 0)::VARCHAR FROM duplicate_sequence))",
                [PROJECTED_THROUGH, str(loaded_through(con)), DUPLICATES_PROJECTED])
