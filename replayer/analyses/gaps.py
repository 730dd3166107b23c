"""``ktrace gaps``: slow lifecycle steps and stretches the recording did not see."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import duckdb

from replayer.analyses import Rows, data_end, fetch
from replayer.analyses.scope import of_cluster, of_cluster_session
from schemas.errors import KtraceError


def gaps(con: duckdb.DuckDBPyConnection, *, namespace: str | None = None,
         cluster: str | None = None, thresholds: Mapping[str, float] | None = None,
         since: datetime | None = None) -> Rows:
    """Every gap; ``thresholds`` (name → seconds) override the defaults for this query only.
    A cluster's gaps are its objects' slow steps and its sessions' unseen stretches (damage
    that names no session is shown for every cluster, as for every namespace). ``since``:
    only the gaps that ended then or later, or are still open (recent)."""
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
    events = one_row_per_event([dict(zip(columns, r)) for r in rows])
    return COLUMNS, events if since is None else recent(events, since, data_end(con))


def recent(events: list[tuple[Any, ...]], since: datetime,
           end: datetime | None) -> list[tuple[Any, ...]]:
    """The gaps that ended at or after ``since`` — a slow step when its late step happened,
    an unseen stretch (one row per event) when the recording saw again — or are still open:
    a stretch nothing ended (a lost session, damage to the end) ends at the data's end
    ``end``, so it is kept whatever ``since`` is. Judged on whole events, so an event's row
    is kept or left out as one."""
    bound = since if end is None else min(since, end)
    at = COLUMNS.index("end_at")
    return [e for e in events if e[at] is None or e[at] >= bound]


#: the analysis' columns: the query's, with the topic a list (one_row_per_event)
COLUMNS = ["category", "type", "namespace", "name", "session", "topics", "start_at", "end_at",
           "seconds", "threshold_s", "detail", "evidence_event_id"]
#: unseen stretches of one type and recorder session whose ends lie this close are one event:
#: the relist after the recorder came back ends every watch's gap within a second or two
SAME_EVENT_S = 5.0
#: the SQL's order of categories: what the recording did not see first
CATEGORIES = ("unseen", "unknown", "slow")


def unseen_events(stretches: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Unseen stretches grouped into the events behind them (the report tells them so too):
    of one type and session, ending within SAME_EVENT_S of the event's first end."""
    events: list[list[dict[str, Any]]] = []
    for g in sorted(stretches, key=lambda g: (g["type"], g["session"] or "", g["end_at"])):
        first = events[-1][0] if events else None
        if (first is not None and (first["type"], first["session"]) == (g["type"], g["session"])
                and (g["end_at"] - first["end_at"]).total_seconds() <= SAME_EVENT_S):
            events[-1].append(g)
        else:
            events.append([g])
    return events


def one_row_per_event(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The unseen stretches one recorder-wide event left in each topic (a 410 Gone on every
    watch) as one row listing the topics: from the first start to the last end, with the
    first stretch's evidence. Other rows keep their topic as a list of one (or none)."""
    unseen = [r for r in rows if r["category"] == "unseen"]
    events = unseen_events(unseen) + [[r] for r in rows if r["category"] != "unseen"]
    joined = [_joined(sorted(e, key=lambda r: (r["start_at"], r["topic"] or ""))) for e in events]
    return [tuple(r[c] for c in COLUMNS) for r in sorted(
        joined, key=lambda r: (CATEGORIES.index(r["category"]), r["start_at"], r["type"],
                               r["namespace"] or "", r["name"] or ""))]


def _joined(event: list[dict[str, Any]]) -> dict[str, Any]:
    first = event[0]
    topics = sorted({r["topic"] for r in event if r["topic"] is not None})
    start, end = min(r["start_at"] for r in event), max(r["end_at"] for r in event)
    detail = first["detail"] if len(event) == 1 else (
        f"{len(event)} topics at once; the first: {first['detail']}")
    return {**first, "topics": topics, "start_at": start, "end_at": end,
            "seconds": first["seconds"] if len(event) == 1 else (end - start).total_seconds(),
            "detail": detail}


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
