"""Questions answered from a replay database: timelines, stuck deletions, races, gaps.

Each analysis is a function of an open connection returning (columns, rows); the CLI only
prints them. The SQL they run lives in ../sql/ as views and table macros.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # the CLI reads this module's defaults without starting DuckDB
    import duckdb

from replayer.analyses.record_ids import public_ids

Rows = tuple[list[str], list[tuple[Any, ...]]]


def data_end(con: duckdb.DuckDBPyConnection) -> datetime | None:
    """The last record's receive time: where analyses judge by default, and ``end-30m``
    counts back from."""
    return con.execute("SELECT data_end()").fetchone()[0]


def fetch(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> Rows:
    """The columns and rows of ``sql``, evidence ids as record ids (analyses.record_ids)."""
    cursor = con.execute(sql, list(params))
    columns = [d[0] for d in cursor.description]
    return columns, public_ids(con, columns, cursor.fetchall())
