"""``ktrace stuck``: what is stuck — deletions that never finished, pods that do not run or
get Ready, workloads that cannot make their pods — with ranked causes and evidence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads this module's defaults without starting DuckDB
    import duckdb

from replayer.analyses import Rows, fetch, planned_lightly
from replayer.analyses.scope import clock_known, clusters, data_end, of_cluster

DEFAULT_MARGIN_S = 30.0
DEFAULT_THRESHOLD_S = 60.0
#: Which problems ``only`` keeps: deletions that never finished, or every other problem
#: (pods not running or not Ready, workloads and volumes that cannot get on).
TERMINATING = "terminating"
PENDING = "pending"
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
          only: str | None = None) -> Judged:
    """One row per stuck object at ``at`` (default, and at most: the end of its cluster's
    data — after it, ktrace cannot know what happened). Each cluster is judged at its own
    end, so one recorded later does not age the objects of another."""
    rows, whens, clamped = [], [], False
    held = clusters(con)
    for name in [c for c in held if cluster in (None, c)]:
        one = name if len(held) > 1 else None  # one cluster: no filter to pay for
        end = data_end(con, one)
        clamped |= at is not None and at > end
        when = end if at is None or at > end else at
        whens.append(when)
        with planned_lightly(con):  # problems_at's plan costs about as much as its run
            _, found = fetch(con, _problems_sql(), [
                name, clock_known(con, one), when, margin_s, threshold_s, only, only,
                namespace, namespace, namespace, one, one])
        rows += found
    return Judged(([*PROBLEM_COLUMNS, "cluster", "stuck_for_at_least"], rows),
                  max(whens, default=at), clamped)


def _problems_sql() -> str:
    """problems_at's rows of one cluster, filtered as ``stuck`` was asked."""
    return (f"SELECT {', '.join(PROBLEM_COLUMNS)}, ? AS cluster, "
            "NOT ?::BOOLEAN AS stuck_for_at_least "
            "FROM problems_at(?::TIMESTAMP, margin_s := ?, threshold_s := ?) "
            "WHERE (? IS NULL OR (problem = 'terminating') = (? = 'terminating')) "
            "  AND (? IS NULL OR namespace = ? OR (kind = 'Namespace' AND name = ?)) "
            f"  AND {of_cluster()} "
            "ORDER BY problem = 'terminating' DESC, kind, namespace, name")
