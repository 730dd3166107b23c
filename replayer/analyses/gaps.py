"""``ktrace gaps``: slow lifecycle steps and stretches the recording did not see."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Mapping

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
    columns, rows = fetch(con,
                 "SELECT category, type, namespace, name, session, topic, start_at, end_at, "
                 "  seconds, threshold_s, detail, evidence_event_id "
                 "FROM gaps_with(?::VARCHAR[], ?::DOUBLE[]) "
                 "WHERE (? IS NULL OR namespace = ? OR namespace IS NULL) "
                 f"AND (CASE WHEN uid IS NOT NULL THEN {of_cluster()} "
                 f"          ELSE session IS NULL OR {of_cluster_session()} END) "
                 "ORDER BY category DESC, start_at, type, namespace, name, topic, session, "
                 "  evidence_event_id",
                 [names, seconds, namespace, namespace, cluster, cluster, cluster, cluster])
    return COLUMNS, one_row_per_event([dict(zip(columns, r)) for r in rows])


#: the analysis' columns: the query's, with the topic a list (one_row_per_event)
COLUMNS = ["category", "type", "namespace", "name", "session", "topics", "start_at", "end_at",
           "seconds", "threshold_s", "detail", "evidence_event_id"]
#: unseen stretches of one session and cause that end within this of each other are one
#: event of the recorder (its watches expired together, and it relisted them together)
TOGETHER = timedelta(seconds=5)


def one_row_per_event(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The unseen stretches one recorder-wide event left in each topic (a 410 Gone on every
    watch) as one row listing the topics: from the first start to the last end, with the
    first stretch's evidence. Other rows keep their topic as a list of one (or none)."""
    events: list[list[dict[str, Any]]] = []
    open_events: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        key = (row["category"], row["type"], row["session"], row["namespace"],
               (row["detail"] or "").split(":")[0])
        event = open_events.get(key)
        if (row["category"] == "unseen" and row["name"] is None and event is not None
                and abs(row["end_at"] - event[0]["end_at"]) <= TOGETHER):
            event.append(row)
            continue
        events.append([row])
        open_events[key] = events[-1]
    return [_joined(event) for event in events]


def _joined(event: list[dict[str, Any]]) -> tuple[Any, ...]:
    first = event[0]
    topics = sorted({r["topic"] for r in event if r["topic"] is not None})
    start, end = min(r["start_at"] for r in event), max(r["end_at"] for r in event)
    detail = first["detail"] if len(event) == 1 else (
        f"{len(event)} topics at once; the first: {first['detail']}")
    joined = {**first, "topics": topics, "start_at": start, "end_at": end,
              "seconds": first["seconds"] if len(event) == 1 else (end - start).total_seconds(),
              "detail": detail}
    return tuple(joined[c] for c in COLUMNS)


#: steps measured between timestamps the API server writes in whole seconds, and which
STEP_CLOCKS = {
    "create_to_schedule": "creationTimestamp and the PodScheduled condition",
    "schedule_to_run": "the PodScheduled condition and the container's startedAt",
    "run_to_api": "the container's startedAt and the status write's managedFields time",
    "run_to_watch": "the container's startedAt",
}


def whole_second_notes(thresholds: Mapping[str, float]) -> list[str]:
    """Why a threshold under one second on a step of API timestamps finds only steps of a
    second or more: such a step reads 0 s, 1 s, 2 s…"""
    return [f"{name} is measured on API timestamps of whole seconds ({STEP_CLOCKS[step]}): "
            f"it reads 0s, 1s, 2s…, so a threshold under 1s finds only steps of 1s or more"
            for name, value in thresholds.items()
            if (step := name.removesuffix("_s")) in STEP_CLOCKS and value < 1]


def thresholds(con: duckdb.DuckDBPyConnection) -> Rows:
    return fetch(con, "SELECT name, seconds, meaning FROM gap_thresholds ORDER BY name")
