"""Every finding of a database at once: what ``incident`` and ``demo`` print."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from replayer.analyses import fetch
from replayer.analyses.gaps import gaps
from replayer.analyses.races import capacity_dips, race_summary, races
from replayer.analyses.stuck import stuck


@dataclass(frozen=True)
class Section:
    title: str
    columns: list[str]
    rows: list[tuple[Any, ...]]


def findings(con: duckdb.DuckDBPyConnection, *, namespace: str | None = None) -> list[Section]:
    raced_cols, raced = races(con, namespace=namespace)
    verdict = raced_cols.index("verdict")
    sections = [
        Section("Recording", *fetch(con,
            "SELECT count(*) AS records, count(DISTINCT uid) AS objects, min(received_at) "
            "AS first, max(received_at) AS last FROM raw_events")),
        Section("Stuck",
                *stuck(con, namespace=namespace).rows),
        Section("Rollout races (containers stopped before or just after the endpoint went off)",
                raced_cols, [r for r in raced if r[verdict] in
                             ("stopped_before_endpoint_off", "within_margin")]),
        Section("Race distribution and suggested preStop delay",
                *race_summary(con, namespace=namespace)),
        Section("Capacity dips", *capacity_dips(con, namespace=namespace)),
        Section("Gaps", *gaps(con, namespace=namespace)),
    ]
    return sections


def as_json(sections: list[Section]) -> dict[str, list[dict[str, Any]]]:
    return {s.title: [dict(zip(s.columns, r)) for r in s.rows] for s in sections}
