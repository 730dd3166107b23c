"""Each Deployment's last rollout and how exposed it left the Service: of the old pods it
terminated, how many stopped before their endpoint went off (``races``) and the longest
stretch one of them was still routable while stopped. What the follower's metrics export
(replayer/follower_metrics.py) for alerting on a rollout that raced."""

from __future__ import annotations

import duckdb

from replayer.analyses import Rows, fetch
from replayer.analyses.races import DEFAULT_MARGIN_S

RACED = "stopped_before_endpoint_off"


def rollout_exposure(con: duckdb.DuckDBPyConnection, *,
                     margin_s: float = DEFAULT_MARGIN_S) -> Rows:
    """One row per Deployment with a rollout seen: its last rollout's revision and start,
    the old pods it terminated, how many of them raced, and the longest exposure (0 when
    none raced)."""
    return fetch(con,
        "WITH last AS ("
        "  SELECT cluster, namespace, deployment, max(started_at) AS started_at, "
        "    arg_max(revision, started_at) AS revision, "
        "    arg_max(replicaset, started_at) AS replicaset, "
        "    arg_max(completed_at, started_at) AS completed_at "
        "  FROM rollouts GROUP BY cluster, namespace, deployment), "
        "replicasets AS ("
        "  SELECT DISTINCT r.cluster, r.namespace, o.owner_name AS deployment, r.uid, r.name "
        "  FROM owner_refs o JOIN raw_events r USING (event_id) "
        "  WHERE r.kind = 'ReplicaSet' AND o.owner_kind = 'Deployment' AND o.controller), "
        "old_pods AS ("
        "  SELECT DISTINCT t.cluster, t.namespace, t.deployment, p.uid "
        "  FROM last t JOIN replicasets s ON s.cluster = t.cluster "
        "    AND s.namespace = t.namespace AND s.deployment = t.deployment "
        "    AND s.name <> t.replicaset "
        "  JOIN owner_refs p ON p.owner_uid = s.uid AND p.owner_kind = 'ReplicaSet' "
        "    AND p.controller) "
        "SELECT t.cluster, t.namespace, t.deployment, t.revision, t.started_at, "
        "  count(r.uid) AS pods_terminated, "
        "  count(r.uid) FILTER (WHERE r.verdict = ?) AS pods_raced, "
        "  coalesce(max(r.exposed_s) FILTER (WHERE r.verdict = ?), 0) AS exposed_s "
        "FROM last t "
        "LEFT JOIN old_pods o ON o.cluster = t.cluster AND o.namespace = t.namespace "
        "  AND o.deployment = t.deployment "
        "LEFT JOIN races_with(?) r ON r.uid = o.uid AND r.deletion_requested_at "
        "  BETWEEN t.started_at AND coalesce(t.completed_at, 'infinity'::TIMESTAMP) "
        "GROUP BY ALL ORDER BY t.cluster, t.namespace, t.deployment",
        [RACED, RACED, margin_s])
