"""The projections kept as tables: what every analysis reads, refreshed by each load.

Per-pod projections (``pod_transitions``, ``pod_lifecycle``) cost seconds to compute over a
large recording; an analysis reads them as tables instead, and opening a database for
analysis stays free. A load refreshes them in its last transaction and records how far they
reach (``projected_through``, an event_id), so an interrupted load is noticed: a loader
refreshes them on its next open, an analysis says so.
"""

from __future__ import annotations

import duckdb

PROJECTED_THROUGH = "projected_through"


def loaded_through(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT coalesce(max(event_id), 0) FROM raw_events").fetchone()[0]


def projected_through(con: duckdb.DuckDBPyConnection) -> int | None:
    row = con.execute("SELECT value FROM ktrace_meta WHERE key = ?", [PROJECTED_THROUGH]).fetchone()
    return int(row[0]) if row else None


def current(con: duckdb.DuckDBPyConnection) -> bool:
    return projected_through(con) == loaded_through(con)


def refresh(con: duckdb.DuckDBPyConnection) -> None:
    """Recompute every materialized projection from its ``<name>_computed`` view, in the
    caller's transaction."""
    for (name,) in con.execute("SELECT name FROM materialized ORDER BY refresh_order").fetchall():
        con.execute(f"DELETE FROM {name}")
        con.execute(f"INSERT INTO {name} SELECT * FROM {name}_computed")
    con.execute("INSERT OR REPLACE INTO ktrace_meta VALUES (?, ?)",
                [PROJECTED_THROUGH, str(loaded_through(con))])
