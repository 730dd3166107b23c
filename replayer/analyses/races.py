"""``ktrace races``: endpoints still routable after containers stopped, and capacity dips."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads this module's defaults without starting DuckDB
    import duckdb

from replayer.analyses import Rows, fetch
from replayer.analyses.scope import in_cluster, of_cluster

DEFAULT_MARGIN_S = 1.0
#: ``since``: only pods whose deletion was requested at or after it (a dip: one that
#: ended at or after it, or has not ended) — the recent stretch a user asks about, whose cost and answer do
#: not grow with the history recorded before it.
RACE_SINCE = "(?::TIMESTAMP IS NULL OR deletion_requested_at >= ?::TIMESTAMP)"
DIP_SINCE = "(?::TIMESTAMP IS NULL OR coalesce(end_at, 'infinity'::TIMESTAMP) >= ?::TIMESTAMP)"


def races(con: duckdb.DuckDBPyConnection, *, namespace: str | None = None,
          cluster: str | None = None, margin_s: float = DEFAULT_MARGIN_S,
          since: datetime | None = None) -> Rows:
    return fetch(con,
                 "SELECT namespace, pod, service, verdict, greatest(exposed_s, 0) AS exposed_s, "
                 "  greatest(-exposed_s, 0) AS margin_s, deletion_requested_at, "
                 "  endpoint_off_at, off_state, containers_stopped_at, request_to_endpoint_off_s, "
                 "  evidence FROM races_with(?) WHERE (? IS NULL OR namespace = ?) "
                 f"AND {of_cluster()} AND {RACE_SINCE} "
                 "ORDER BY namespace, deletion_requested_at, pod",
                 [margin_s, namespace, namespace, cluster, cluster, since, since])


def race_summary(con: duckdb.DuckDBPyConnection, *, namespace: str | None = None,
                 cluster: str | None = None, margin_s: float = DEFAULT_MARGIN_S,
                 since: datetime | None = None) -> Rows:
    """The distribution and the suggested preStop delay (per namespace; none where no pod
    raced: a delay there would slow every rollout for nothing)."""
    return fetch(con,
                 "SELECT namespace, count(*) AS pods, "
                 "  count(*) FILTER (WHERE verdict = 'stopped_before_endpoint_off') AS raced, "
                 "  count(*) FILTER (WHERE verdict = 'within_margin') AS within_margin, "
                 "  quantile_cont(request_to_endpoint_off_s, 0.5) AS p50_request_to_off_s, "
                 "  quantile_cont(request_to_endpoint_off_s, 0.99) AS p99_request_to_off_s, "
                 "  max(request_to_endpoint_off_s) AS max_request_to_off_s, "
                 "  CASE WHEN count(*) FILTER (WHERE verdict IN ('stopped_before_endpoint_off', "
                 "    'within_margin')) > 0 "
                 "  THEN suggested_prestop_s(quantile_cont(request_to_endpoint_off_s, 0.99), ?) "
                 "  END AS suggested_prestop_s "
                 "FROM races_with(?) WHERE (? IS NULL OR namespace = ?) "
                 f"AND {of_cluster()} AND {RACE_SINCE} "
                 "GROUP BY namespace ORDER BY namespace",
                 [margin_s, margin_s, namespace, namespace, cluster, cluster, since, since])


def capacity_dips(con: duckdb.DuckDBPyConnection, *, namespace: str | None = None,
                  cluster: str | None = None, since: datetime | None = None) -> Rows:
    """Dips of a Service's ready endpoints below its Deployment's replicas."""
    return fetch(con,
                 "SELECT namespace, service, deployment, desired, min_ready, start_at, end_at, "
                 "  duration_s, pods_off FROM capacity_dips WHERE (? IS NULL OR namespace = ?) "
                 f"AND {in_cluster()} AND {DIP_SINCE} "
                 "ORDER BY namespace, service, start_at",
                 [namespace, namespace, cluster, cluster, since, since])
