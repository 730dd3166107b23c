"""``ktrace stuck``: what is stuck — deletions that never finished, pods that do not run or
get Ready, workloads that cannot make their pods — with ranked causes and evidence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads this module's defaults without starting DuckDB
    import duckdb

from replayer.analyses import Rows, fetch
from replayer.analyses.scope import clusters, data_end, of_cluster

DEFAULT_MARGIN_S = 30.0
DEFAULT_THRESHOLD_S = 60.0
TERMINATING = ("terminating",)
PENDING = ("pending", "not_ready", "not_created", "rollout_stalled")
PROBLEM_COLUMNS = ("kind", "namespace", "name", "uid", "problem", "since", "stuck_for_s",
                   "top_cause", "causes", "evidence_event_id")


@dataclass(frozen=True)
class Judged:
    """The rows, and the moment they were judged at (the data's end when ``at`` was later)."""

    rows: Rows
    at: datetime
    clamped: bool


def stuck(con: duckdb.DuckDBPyConnection, *, at: datetime | None = None,
          namespace: str | None = None, cluster: str | None = None,
          margin_s: float = DEFAULT_MARGIN_S, threshold_s: float = DEFAULT_THRESHOLD_S,
          problems: tuple[str, ...] = TERMINATING + PENDING) -> Judged:
    """One row per stuck object at ``at`` (default, and at most: the end of its cluster's
    data — after it, ktrace cannot know what happened). Each cluster is judged at its own
    end, so one recorded later does not age the objects of another."""
    rows, whens, clamped = [], [], False
    held = clusters(con)
    for name in [c for c in held if cluster in (None, c)]:
        only = name if len(held) > 1 else None  # one cluster: no filter to pay for
        end = data_end(con, only)
        clamped |= at is not None and at > end
        when = end if at is None or at > end else at
        whens.append(when)
        _, found = fetch(con,
            f"SELECT {', '.join(PROBLEM_COLUMNS)}, ? AS cluster "
            "FROM problems_at(?::TIMESTAMP, margin_s := ?, threshold_s := ?) "
            "WHERE list_contains(?, problem) "
            "  AND (? IS NULL OR namespace = ? OR (kind = 'Namespace' AND name = ?)) "
            f"  AND {of_cluster()} "
            "ORDER BY problem = 'terminating' DESC, kind, namespace, name",
            [name, when, margin_s, threshold_s, list(problems), namespace, namespace,
             namespace, only, only])
        rows += found
    return Judged(([*PROBLEM_COLUMNS, "cluster"], rows), max(whens, default=at), clamped)
