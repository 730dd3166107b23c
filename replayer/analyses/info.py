"""``ktrace info``: what a database holds before asking about any of it — each cluster's
recorded window, the recorder sessions, the kinds and how many objects of each, and the
stretches the recording did not see."""

from __future__ import annotations

import duckdb

from replayer.analyses import Rows, fetch
from replayer.analyses.findings import Section
from replayer.analyses.scope import of_cluster_session


def info(con: duckdb.DuckDBPyConnection, *, cluster: str | None = None) -> list[Section]:
    only = [cluster, cluster]
    return [
        Section("info_clusters", "Clusters", *fetch(con,
            "SELECT cluster, min(received_at) AS first_received_at, "
            "  max(received_at) AS last_received_at, "
            "  epoch(max(received_at) - min(received_at)) AS window_s, count(*) AS records, "
            "  count(DISTINCT uid) AS objects, count(DISTINCT session) AS sessions "
            "FROM raw_events WHERE ? IS NULL OR cluster = ? GROUP BY cluster ORDER BY cluster",
            only)),
        Section("info_sessions", "Sessions", *fetch(con,
            "SELECT cluster, session, min(received_at) AS first_received_at, "
            "  max(received_at) AS last_received_at, "
            "  count(*) AS records, bool_or(type = 'SESSION_END') AS ended "
            "FROM raw_events WHERE ? IS NULL OR cluster = ? GROUP BY cluster, session "
            "ORDER BY cluster, first_received_at", only)),
        Section("info_kinds", "Kinds", *fetch(con,
            "WITH live AS (SELECT kind, count(*) AS n FROM state_at((SELECT max(received_at) "
            "    FROM raw_events WHERE ? IS NULL OR cluster = ?)) "
            "  WHERE ? IS NULL OR cluster = ? GROUP BY kind) "
            "SELECT r.kind, r.resource, count(*) AS records, count(DISTINCT r.uid) AS objects, "
            "  coalesce(any_value(live.n), 0) AS at_end "
            "FROM raw_events r LEFT JOIN live USING (kind) "
            "WHERE r.uid IS NOT NULL AND (? IS NULL OR r.cluster = ?) "
            "GROUP BY r.kind, r.resource ORDER BY records DESC, r.kind", only * 3)),
        Section("info_unseen", "Unseen stretches", *unseen(con, cluster=cluster)),
    ]


def unseen(con: duckdb.DuckDBPyConnection, *, cluster: str | None = None) -> Rows:
    """The stretches the recording did not see, by type: how many, how long in all, when."""
    return fetch(con,
        "SELECT type, count(*) AS stretches, sum(epoch(end_at - start_at)) AS total_s, "
        "  min(start_at) AS first_start_at, max(end_at) AS last_end_at, "
        "  list(DISTINCT topic ORDER BY topic) "
        "  FILTER (WHERE topic IS NOT NULL) AS topics "
        f"FROM unseen_stretches WHERE session IS NULL OR {of_cluster_session()} "
        "GROUP BY type ORDER BY type", [cluster, cluster])
