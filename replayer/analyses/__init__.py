"""Questions answered from a replay database: timelines, stuck deletions, races, gaps.

Each analysis is a function of an open connection returning (columns, rows); the CLI only
prints them. The SQL they run lives in ../sql/ as views and table macros.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterator, Sequence

if TYPE_CHECKING:  # the CLI reads this module's defaults without starting DuckDB
    import duckdb

from replayer.analyses.record_ids import public_ids

Rows = tuple[list[str], list[tuple[Any, ...]]]
#: DuckDB optimizer passes that cost more on the largest macro trees than they save: planning
#: problems_at (some 250 operators) spent most of its optimizer time in these two, a quarter
#: of the whole call's CPU at 100k and 1M events; its plan runs as fast without them.
COSTLY_OPTIMIZERS = "projection_pullup,deliminator"


def data_end(con: duckdb.DuckDBPyConnection) -> datetime | None:
    """The last record's receive time: where analyses judge by default, and ``end-30m``
    counts back from."""
    return con.execute("SELECT data_end()").fetchone()[0]


def fetch(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> Rows:
    """The columns and rows of ``sql``, evidence ids as record ids (analyses.record_ids)."""
    cursor = con.execute(sql, list(params))
    columns = [d[0] for d in cursor.description]
    return columns, public_ids(con, cursor.description, cursor.fetchall())


@contextlib.contextmanager
def planned_lightly(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """``con`` plans without COSTLY_OPTIMIZERS inside the block, as before it after."""
    before = con.execute("SELECT current_setting('disabled_optimizers')").fetchone()[0]
    con.execute(f"SET disabled_optimizers = '{COSTLY_OPTIMIZERS}'")
    try:
        yield
    finally:
        con.execute(f"SET disabled_optimizers = '{before}'")
