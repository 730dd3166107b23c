"""Which part of a database an analysis looks at: one cluster (``--cluster``) or all.

A database may hold several recordings, each with its cluster name in every record. An
object belongs to the cluster of its records (uids are cluster-unique), an unseen stretch
to the cluster of its session. Each cluster's data ends at its own last record: judging a
cluster at another's end would make everything in it look stuck for the difference.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads this module's names without starting DuckDB
    import duckdb

#: ``uid`` of an object of cluster ``?`` (or any cluster when ``?`` is NULL); two parameters
CLUSTER_UIDS = ("(?::VARCHAR IS NULL OR {uid} IN "
                "(SELECT uid FROM raw_events WHERE cluster = ?::VARCHAR))")
#: ``event_id`` of a record of cluster ``?`` (or any cluster when NULL); two parameters
CLUSTER_RECORDS = ("(?::VARCHAR IS NULL OR {event_id} IN "
                   "(SELECT event_id FROM raw_events WHERE cluster = ?::VARCHAR))")
#: a row whose ``{column}`` is cluster ``?`` (or any when NULL); two parameters
CLUSTER_COLUMN = "(?::VARCHAR IS NULL OR {column} = ?::VARCHAR)"
#: ``session`` of cluster ``?`` (or any when NULL); two parameters
CLUSTER_SESSIONS = ("(?::VARCHAR IS NULL OR {session} IN "
                    "(SELECT session FROM raw_events WHERE cluster = ?::VARCHAR))")


def of_cluster(uid: str = "uid") -> str:
    """The SQL condition that ``uid`` is an object of the cluster parameter (two ``?``)."""
    return CLUSTER_UIDS.format(uid=uid)


def of_cluster_records(event_id: str = "event_id") -> str:
    """The SQL condition that the record ``event_id`` is of the cluster parameter (two ``?``)."""
    return CLUSTER_RECORDS.format(event_id=event_id)


def in_cluster(column: str = "cluster") -> str:
    """The SQL condition that a row's ``column`` names the cluster parameter (two ``?``)."""
    return CLUSTER_COLUMN.format(column=column)


def of_cluster_session(session: str = "session") -> str:
    return CLUSTER_SESSIONS.format(session=session)


def clusters(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The clusters the database holds."""
    rows = con.execute("SELECT DISTINCT cluster FROM raw_events WHERE cluster IS NOT NULL "
                       "ORDER BY cluster").fetchall()
    return [r[0] for r in rows]


def data_end(con: duckdb.DuckDBPyConnection, cluster: str | None = None) -> datetime | None:
    """The last receive time of ``cluster``'s records (of all records when None)."""
    return recorded_span(con, cluster)[1]


def recorded_span(con: duckdb.DuckDBPyConnection,
                  cluster: str | None = None) -> tuple[datetime | None, datetime | None]:
    """The first and last receive time of ``cluster``'s records (of all when None)."""
    return con.execute("SELECT min(received_at), max(received_at) FROM raw_events "
                       "WHERE ? IS NULL OR cluster = ?", [cluster, cluster]).fetchone()


def clock_known(con: duckdb.DuckDBPyConnection, cluster: str | None = None) -> bool:
    """Whether ``cluster``'s end is a receive time. An import takes its times from the
    objects (the newest timestamp each carries): its end is when the last object says
    something happened, not when the capture stopped, so a stretch ending there lasted at
    least that long."""
    return bool(con.execute("SELECT bool_and(time_source = 'received') FROM raw_events "
                            "WHERE ? IS NULL OR cluster = ?", [cluster, cluster]).fetchone()[0])


def namespaces_named(con: duckdb.DuckDBPyConnection, kind: str, names: list[str],
                     cluster: str | None = None) -> list[str]:
    """The namespaces holding an object of ``kind`` with one of ``names`` (or uids): more
    than one makes a name without ``-n`` ambiguous."""
    rows = con.execute("SELECT DISTINCT namespace FROM raw_events WHERE kind = ? "
                       "AND (list_contains(?, name) OR list_contains(?, uid)) "
                       f"AND namespace IS NOT NULL AND {in_cluster()} ORDER BY namespace",
                       [kind, names, names, cluster, cluster]).fetchall()
    return [r[0] for r in rows]
