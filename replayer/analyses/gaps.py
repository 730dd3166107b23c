"""``ktrace gaps``: slow lifecycle steps and stretches the recording did not see."""

from __future__ import annotations

from typing import Mapping

import duckdb

from replayer.analyses import Rows, fetch
from replayer.analyses.scope import of_cluster, of_cluster_session
from schemas.errors import KtraceError


def gaps(con: duckdb.DuckDBPyConnection, *, namespace: str | None = None,
         cluster: str | None = None, thresholds: Mapping[str, float] | None = None) -> Rows:
    """Every gap; ``thresholds`` (name → seconds) override the defaults for this query only.
    A cluster's gaps are its objects' slow steps and its sessions' unseen stretches (damage
    that names no session is shown for every cluster, as for every namespace)."""
    known = {r[0] for r in con.execute("SELECT name FROM gap_thresholds").fetchall()}
    names, seconds = [], []
    for name, value in (thresholds or {}).items():
        key = name if name.endswith("_s") else name + "_s"
        if key not in known:
            raise KtraceError(f"unknown threshold {name!r}; known: "
                              + ", ".join(sorted(k[:-2] for k in known)))
        names.append(key)
        seconds.append(float(value))
    return fetch(con,
                 "SELECT category, type, namespace, name, session, topic, start_at, end_at, "
                 "  seconds, threshold_s, detail, evidence_event_id "
                 "FROM gaps_with(?::VARCHAR[], ?::DOUBLE[]) "
                 "WHERE (? IS NULL OR namespace = ? OR namespace IS NULL) "
                 f"AND (CASE WHEN uid IS NOT NULL THEN {of_cluster()} "
                 f"          ELSE session IS NULL OR {of_cluster_session()} END) "
                 "ORDER BY category DESC, start_at, type, namespace, name, topic, session, "
                 "  evidence_event_id",
                 [names, seconds, namespace, namespace, cluster, cluster, cluster, cluster])


def thresholds(con: duckdb.DuckDBPyConnection) -> Rows:
    return fetch(con, "SELECT name, seconds, meaning FROM gap_thresholds ORDER BY name")
