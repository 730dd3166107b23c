"""The projections kept as tables: what every analysis reads, maintained by each load.

The per-object and per-pod projections (``object_versions``, ``endpoint_membership``,
``pod_transitions``, ``pod_lifecycle``) cost seconds to compute over a large recording; an
analysis reads them as tables instead, and opening a database for analysis writes nothing.
The records loaded since the last refresh add the objects they hold versions of and the
pods they touched to ``projection_scope`` (``sql/typed/_touched_pods.sql``); the load's
last step recomputes only those — each table's rows of the scope's uids (its key column:
``materialized.key_column``) deleted and inserted again from its ``<name>_computed`` view,
which computes the uids in scope; the per-session ones (``session_topics``,
``sequence_holes``) merge the records after the last refresh's position — and records how
far the projections reach
(``projected_through``, an event_id), so an interrupted load is noticed: a loader catches
up on its next open, an analysis says so.
"""

from __future__ import annotations

import duckdb

from replayer import typed

PROJECTED_THROUGH = "projected_through"
TOUCHED = "_touched_pods"
#: The projections that follow the records by position (sql/50_gaps.sql): each refresh
#: merges what the records after ``projected_through`` change, before it moves on.
FOLLOWS_POSITION = (
    "CREATE OR REPLACE TEMP TABLE merged_session_topics AS FROM session_topics_computed",
    "DELETE FROM session_topics",
    "INSERT INTO session_topics FROM temp.merged_session_topics",
    "DROP TABLE temp.merged_session_topics",
    "DELETE FROM sequence_holes h USING sequence_rescan s "
    "WHERE h.session = s.session AND h.topic = s.topic AND h.seq > s.after_seq",
    "INSERT INTO sequence_holes FROM sequence_holes_computed",
)


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
    con.execute("DELETE FROM ktrace_meta WHERE key = ?", [PROJECTED_THROUGH])


def refresh(con: duckdb.DuckDBPyConnection) -> None:
    """Recompute the uids in scope of every materialized projection, in the caller's
    transaction, and empty the scope."""
    mark_touched(con)
    for name, key in con.execute("SELECT name, key_column FROM materialized "
                                 "ORDER BY refresh_order").fetchall():
        con.execute(f"DELETE FROM {name} WHERE {key} IN (SELECT uid FROM projection_scope)")
        con.execute(f"INSERT INTO {name} SELECT * FROM {name}_computed")
    for statement in FOLLOWS_POSITION:
        con.execute(statement)
    con.execute("DELETE FROM projection_scope")
    con.execute("INSERT OR REPLACE INTO ktrace_meta VALUES (?, ?)",
                [PROJECTED_THROUGH, str(loaded_through(con))])
