"""``ktrace report``: the picture of an incident — one self-contained offline HTML file
(per-pod swimlanes, findings, rollouts, evidence) and a Chrome/Perfetto trace — drawn from
the database alone (typed tables and analyses, never the recording or the object JSON)."""

from __future__ import annotations

import duckdb

from replayer.report import gather
from replayer.report.gather import Incident, Selection


def collect(con: duckdb.DuckDBPyConnection, sel: Selection) -> Incident:
    """Everything the report draws for the selected pods and window."""
    unseen, slow_steps = gather.gaps(con, sel)
    return Incident(
        selection=sel, header=gather.header(con, sel), pods=gather.pods(con, sel),
        steps=gather.steps(con, sel), endpoints=gather.endpoints(con, sel),
        containers=gather.containers(con, sel), holds=gather.finalizer_holds(con, sel),
        races=gather.races(con, sel), problems=gather.problems(con, sel),
        capacity_dips=gather.capacity_dips(con, sel), slow_steps=slow_steps, unseen=unseen,
        rollouts=gather.rollouts(con, sel), replica_series=gather.replica_series(con, sel))
