"""Every finding of a database at once, as sections: what ``incident`` and ``demo`` print."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from replayer.analyses import fetch
from replayer.analyses.gaps import gaps
from replayer.analyses.races import DEFAULT_MARGIN_S, capacity_dips, race_summary, races
from replayer.analyses.stuck import stuck


@dataclass(frozen=True)
class Section:
    """One part of a sectioned answer: ``key`` names its rows' schema (the same as the command that
    prints them alone), ``title`` heads it in a table."""

    key: str
    title: str
    columns: list[str]
    rows: list[tuple[Any, ...]]


def race_sections(con: duckdb.DuckDBPyConnection, *, namespace: str | None = None,
                  cluster: str | None = None, margin_s: float = DEFAULT_MARGIN_S,
                  since: datetime | None = None) -> list[Section]:
    """What ``ktrace races`` prints: every terminating pod behind a Service, the
    distribution with a suggested preStop delay, and the capacity dips (``since``: of the
    stretch from then on)."""
    scope = {"namespace": namespace, "cluster": cluster, "since": since}
    return [
        Section("races", "Terminating pods behind a Service",
                *races(con, **scope, margin_s=margin_s)),
        Section("race_summary", "Distribution and suggested preStop delay",
                *race_summary(con, **scope, margin_s=margin_s)),
        Section("capacity_dips", "Capacity dips", *capacity_dips(con, **scope)),
    ]


def findings(con: duckdb.DuckDBPyConnection, *, namespace: str | None = None,
             cluster: str | None = None) -> list[Section]:
    scope = {"namespace": namespace, "cluster": cluster}
    raced_cols, raced = races(con, **scope)
    verdict = raced_cols.index("verdict")
    sections = [
        Section("recording", "Recording", *fetch(con,
            "SELECT count(*) AS records, count(DISTINCT uid) AS objects, min(received_at) "
            "AS first_received_at, max(received_at) AS last_received_at FROM raw_events "
            "WHERE (? IS NULL OR cluster = ?) "  # a window's: not the state at its start
            "AND NOT window_start_state(source_id, received_at)", [cluster, cluster])),
        Section("stuck", "Stuck",
                *stuck(con, **scope).rows),
        Section("races", "Rollout races (containers stopped before or just after the endpoint went off)",
                raced_cols, [r for r in raced if r[verdict] in
                             ("stopped_before_endpoint_off", "within_margin")]),
        Section("race_summary", "Race distribution and suggested preStop delay",
                *race_summary(con, **scope)),
        Section("capacity_dips", "Capacity dips", *capacity_dips(con, **scope)),
        Section("gaps", "Gaps", *gaps(con, **scope)),
    ]
    return sections

