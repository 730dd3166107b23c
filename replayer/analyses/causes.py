"""The cause vocabulary: every cause a finding can name, its rank and what to do about it,
as the SQL declares it (``cause_scores`` and ``cause_advice``, replayer/sql/58_causes.sql;
docs/causes.md maps Kubernetes' reason strings onto it)."""

from __future__ import annotations

import duckdb

from replayer.analyses import Rows, fetch


def causes(con: duckdb.DuckDBPyConnection) -> Rows:
    """One row per cause: its score (None for a deletion cause, ranked in its own SQL), its
    meaning and its advice, each where the SQL gives one."""
    return fetch(con,
                 "SELECT cause, s.score, s.meaning, a.advice "
                 "FROM cause_scores s FULL JOIN cause_advice a USING (cause) ORDER BY cause")
