"""``ktrace stuck``: objects whose deletion never finished, with ranked causes."""

from __future__ import annotations

from datetime import datetime

import duckdb

from replayer.analyses import Rows, fetch

DEFAULT_MARGIN_S = 30.0
CAUSES = ("finalizers", "node_not_ready", "node_deleted", "containers_not_exiting",
          "prestop_hook", "volume_detach", "foreground_dependents", "namespace_content",
          "recording_gap", "unknown")


def stuck(con: duckdb.DuckDBPyConnection, *, at: datetime | None = None,
          namespace: str | None = None, margin_s: float = DEFAULT_MARGIN_S) -> Rows:
    """One row per stuck object at ``at`` (default: the end of the data)."""
    return fetch(con,
                 "SELECT kind, namespace, name, uid, deletion_requested_at, stuck_since, "
                 "  stuck_for_s, top_cause, causes, evidence_event_id "
                 "FROM stuck_at(coalesce(?::TIMESTAMP, data_end()), margin_s := ?) "
                 "WHERE ? IS NULL OR namespace = ? OR (kind = 'Namespace' AND name = ?) "
                 "ORDER BY kind, namespace, name",
                 [at, margin_s, namespace, namespace, namespace])
