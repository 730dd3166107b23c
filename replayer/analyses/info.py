"""``ktrace info``: what a database holds before asking about any of it — each cluster's
recorded window, the recorder sessions, the kinds and how many objects of each, and the
stretches the recording did not see."""

from __future__ import annotations

import duckdb

from replayer.analyses import Rows, fetch
from replayer.analyses.findings import Section
from replayer.analyses.scope import of_cluster_session


#: per type, the time the stretches ``u`` cover, overlaps counted once: stretches sorted by
#: start join the island before them while they start before its furthest end
COVERED = """
reach AS (SELECT type, start_at, end_at, max(end_at) OVER (PARTITION BY type
              ORDER BY start_at, end_at ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
              AS furthest FROM u),
islands AS (SELECT *, count(*) FILTER (WHERE furthest IS NULL OR start_at > furthest)
                OVER (PARTITION BY type ORDER BY start_at, end_at ROWS UNBOUNDED PRECEDING)
                AS island FROM reach),
covered AS (SELECT type, sum(seconds) AS covered_s FROM (
                SELECT type, epoch(max(end_at) - min(start_at)) AS seconds FROM islands
                GROUP BY type, island) GROUP BY type)"""


#: A window's own records: not the state at its start (each object's last version before
#: it, loaded first: window_start_state), which is counted apart.
_OWN = "FILTER (WHERE NOT window_start_state(source_id, received_at))"


def info(con: duckdb.DuckDBPyConnection, *, cluster: str | None = None) -> list[Section]:
    only = [cluster, cluster]
    return [
        Section("info_clusters", "Clusters", *fetch(con,
            f"SELECT cluster, min(received_at) {_OWN} AS first_received_at, "
            f"  max(received_at) {_OWN} AS last_received_at, "
            f"  epoch(max(received_at) {_OWN} - min(received_at) {_OWN}) AS window_s, "
            f"  count(*) {_OWN} AS records, "
            "  count(*) FILTER (WHERE window_start_state(source_id, received_at)) "
            "    AS state_at_start, "
            "  count(DISTINCT uid) AS objects, count(DISTINCT session) AS sessions "
            "FROM raw_events WHERE ? IS NULL OR cluster = ? GROUP BY cluster ORDER BY cluster",
            only)),
        Section("info_sessions", "Sessions", *fetch(con,
            f"SELECT cluster, session, min(received_at) {_OWN} AS first_received_at, "
            f"  max(received_at) {_OWN} AS last_received_at, "
            f"  count(*) {_OWN} AS records, bool_or(type = 'SESSION_END') AS ended "
            "FROM raw_events WHERE ? IS NULL OR cluster = ? GROUP BY cluster, session "
            "ORDER BY cluster, first_received_at NULLS FIRST", only)),
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
    """The stretches the recording did not see, by type: how many, the time they cover
    (overlaps counted once), when."""
    return fetch(con,
        f"WITH u AS (SELECT * FROM unseen_stretches WHERE session IS NULL OR "
        f"  {of_cluster_session()}), {COVERED} "
        "SELECT type, count(*) AS stretches, any_value(c.covered_s) AS total_s, "
        "  min(start_at) AS first_start_at, max(end_at) AS last_end_at, "
        "  list(DISTINCT topic ORDER BY topic) "
        "  FILTER (WHERE topic IS NOT NULL) AS topics "
        "FROM u JOIN covered c USING (type) GROUP BY type ORDER BY type", [cluster, cluster])
