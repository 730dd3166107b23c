"""``ktrace stuck``: what is stuck — deletions that never finished, pods that do not run or
get Ready, workloads that cannot make their pods — with ranked causes and evidence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads this module's defaults without starting DuckDB
    import duckdb

from replayer.analyses import Rows, data_end, fetch

DEFAULT_MARGIN_S = 30.0
DEFAULT_THRESHOLD_S = 60.0
TERMINATING = ("terminating",)
PENDING = ("pending", "not_ready", "not_created", "rollout_stalled")



@dataclass(frozen=True)
class Judged:
    """The rows, and the moment they were judged at (the data's end when ``at`` was later)."""

    rows: Rows
    at: datetime
    clamped: bool


def stuck(con: duckdb.DuckDBPyConnection, *, at: datetime | None = None,
          namespace: str | None = None, margin_s: float = DEFAULT_MARGIN_S,
          threshold_s: float = DEFAULT_THRESHOLD_S,
          problems: tuple[str, ...] = TERMINATING + PENDING) -> Judged:
    """One row per stuck object at ``at`` (default, and at most: the end of the data —
    after it, ktrace cannot know what happened)."""
    end = data_end(con)
    clamped = at is not None and end is not None and at > end
    when = end if at is None or clamped else at
    rows = fetch(con,
                 "SELECT kind, namespace, name, uid, problem, since, stuck_for_s, top_cause, "
                 "  causes, evidence_event_id "
                 "FROM problems_at(?::TIMESTAMP, margin_s := ?, threshold_s := ?) "
                 "WHERE list_contains(?, problem) "
                 "  AND (? IS NULL OR namespace = ? OR (kind = 'Namespace' AND name = ?)) "
                 "ORDER BY problem = 'terminating' DESC, kind, namespace, name",
                 [when, margin_s, threshold_s, list(problems), namespace, namespace, namespace])
    return Judged(rows, when, clamped)
