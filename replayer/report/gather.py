"""What a report shows, read from the typed tables and the analyses' views (never the
object JSON). Each function runs one parameterised query over the selected pods; the
queries the projections do not already answer (container runs, finalizer holds, replica
series) are written here, on the typed tables."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

import duckdb

from replayer.analyses.races import DEFAULT_MARGIN_S
from replayer.analyses.record_ids import RECORD_ID_SQL, internal_dicts
from replayer.analyses.scope import in_cluster, of_cluster_records
from replayer.analyses.stuck import stuck
from replayer.analyses.timeline import pod_uids

Row = dict[str, Any]
#: A Deployment as the report tells them apart: (cluster, namespace, name).
DeploymentKey = tuple[str, str, str]


@dataclass(frozen=True)
class Selection:
    """Which pods and which stretch of time the report covers."""

    start: datetime
    end: datetime
    namespace: str | None
    uids: list[str]
    cluster: str | None = None


@dataclass
class Incident:
    """Everything the report draws, keyed by pod uid where it belongs to a pod."""

    selection: Selection
    header: Row
    pods: list[Row]
    steps: dict[str, list[Row]]
    endpoints: dict[str, list[Row]]
    containers: dict[str, list[Row]]
    holds: dict[str, list[Row]]
    races: list[Row]
    problems: list[Row]
    capacity_dips: list[Row]
    slow_steps: list[Row]
    unseen: list[Row]
    rollouts: list[Row]
    replica_series: dict[DeploymentKey, list[Row]]

    @cached_property
    def races_by_uid(self) -> dict[str, list[Row]]:
        return _by_uid(self.races)

    @cached_property
    def top_causes(self) -> dict[str, str]:
        """The top cause of each stuck object, by uid."""
        return {p["uid"]: p["top_cause"] for p in self.problems}


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[Row]:
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r)) for r in cursor.fetchall()]


def _by_uid(rows: list[Row], key: str = "uid") -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        grouped[row[key]].append(row)
    return dict(grouped)


def select(con: duckdb.DuckDBPyConnection, *, since: datetime | None = None,
           until: datetime | None = None, namespace: str | None = None,
           targets: tuple[str, ...] = (), cluster: str | None = None) -> Selection:
    """The window (default: the whole recording of ``cluster``, or of all) and the pods
    with a step inside it."""
    first, last = con.execute("SELECT min(received_at), max(received_at) FROM raw_events "
                              "WHERE ? IS NULL OR cluster = ?", [cluster, cluster]).fetchone()
    start, end = since or first, until or last
    chosen = sorted({u for t in targets for u in pod_uids(con, t, namespace, cluster)}) or None
    # a pod is the cluster's whose steps' records are: one seen only through its Events too
    uids = [r[0] for r in con.execute(
        "SELECT uid FROM pod_transitions WHERE (? IS NULL OR namespace = ?) "
        "AND (?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], uid)) "
        f"AND {of_cluster_records('evidence_event_id')} "
        "GROUP BY uid HAVING min(time) <= ? AND max(time) >= ? ORDER BY min(time), uid",
        [namespace, namespace, chosen, chosen, cluster, cluster, end, start]).fetchall()]
    return Selection(start, end, namespace, uids, cluster)


SELECTED = "SELECT unnest(?::VARCHAR[]) AS uid"


def header(con: duckdb.DuckDBPyConnection, sel: Selection) -> Row:
    row = _rows(con,
                "SELECT list(DISTINCT cluster ORDER BY cluster) FILTER (WHERE cluster IS NOT NULL)"
                "   AS clusters, list(DISTINCT kind ORDER BY kind) FILTER (WHERE kind IS NOT NULL)"
                "   AS kinds, count(*) AS records, min(received_at) AS first, "
                "   max(received_at) AS last FROM raw_events", [])[0]
    return {**row, "start": sel.start, "end": sel.end, "namespace": sel.namespace,
            "pods": len(sel.uids)}


def pods(con: duckdb.DuckDBPyConnection, sel: Selection) -> list[Row]:
    """One row per pod with its workload and revision (the owning ReplicaSet's controller,
    a Deployment, when there is one) and the lifecycle facts the lanes mark."""
    return _rows(con, f"""
        WITH selected AS ({SELECTED}),
        spec AS (SELECT r.uid, any_value(r.cluster) AS cluster,
                        arg_max(p.has_prestop, r.rv) AS has_prestop,
                        arg_max(p.grace_s, r.rv) AS grace_s, arg_max(p.node_name, r.rv) AS node
                 FROM pods p JOIN raw_events r USING (event_id)
                 JOIN selected s ON s.uid = r.uid GROUP BY r.uid),
        rs_owner AS (SELECT DISTINCT o.uid AS rs_uid, o.owner_kind, o.owner_name
                     FROM owner_refs o JOIN raw_events r USING (event_id)
                     WHERE r.kind = 'ReplicaSet' AND o.controller)
        SELECT l.uid, spec.cluster, l.namespace, l.pod, l.owner, l.node, l.created_at, l.first_seen_at,
               l.deletion_requested_at, l.deadline_at, l.deleted_at, l.stop_verdict,
               l.restarts, spec.has_prestop, spec.grace_s,
               coalesce(w.owner_kind || '/' || w.owner_name, l.owner, 'Pod') AS workload,
               CASE WHEN w.owner_kind IS NOT NULL THEN split_part(l.owner, '/', 2) END
                   AS revision
        FROM pod_lifecycle l JOIN selected s USING (uid) LEFT JOIN spec USING (uid)
        LEFT JOIN (SELECT DISTINCT o.uid, o.owner_uid FROM owner_refs o WHERE o.controller) po
               ON po.uid = l.uid
        LEFT JOIN rs_owner w ON w.rs_uid = po.owner_uid
        ORDER BY l.namespace, workload,
                 min(l.created_at) OVER (PARTITION BY l.namespace, workload, revision),
                 revision NULLS FIRST, l.created_at, l.pod""",
        [sel.uids])


def steps(con: duckdb.DuckDBPyConnection, sel: Selection) -> dict[str, list[Row]]:
    return _by_uid(_rows(con, f"""
        SELECT t.uid, step_no, step, time, server_at, component, evidence_event_id, detail,
               derived
        FROM pod_transitions t JOIN ({SELECTED}) s USING (uid) ORDER BY t.uid, step_no""",
        [sel.uids]))


def endpoints(con: duckdb.DuckDBPyConnection, sel: Selection) -> dict[str, list[Row]]:
    return _by_uid(_rows(con, f"""
        SELECT pod_uid AS uid, service, state, since_at, until_at, since_event_id
        FROM endpoint_membership m JOIN ({SELECTED}) s ON s.uid = m.pod_uid
        ORDER BY pod_uid, service, since_at""", [sel.uids]))


def containers(con: duckdb.DuckDBPyConnection, sel: Selection) -> dict[str, list[Row]]:
    """One row per run of a container: its start, its end (NULL while running at the end
    of what was seen), exit code and reason, and the first record that showed each. Runs a
    restart replaced are read from ``last_*`` (lastState.terminated)."""
    return _by_uid(_rows(con, f"""
        WITH selected AS ({SELECTED}),
        seen AS (
            SELECT c.uid, c.name, c.init, c.started_at, c.finished_at, c.exit_code, c.reason,
                   c.state, r.event_id, r.rv
            FROM containers c JOIN raw_events r USING (event_id) JOIN selected s ON s.uid = c.uid
            WHERE c.started_at IS NOT NULL
            UNION ALL
            SELECT c.uid, c.name, c.init, c.last_started_at, c.last_finished_at,
                   c.last_exit_code, c.last_reason, 'terminated', r.event_id, r.rv
            FROM containers c JOIN raw_events r USING (event_id) JOIN selected s ON s.uid = c.uid
            WHERE c.last_started_at IS NOT NULL)
        SELECT uid, name, bool_or(init) AS init, started_at, max(finished_at) AS finished_at,
               arg_max(exit_code, rv) FILTER (WHERE state = 'terminated') AS exit_code,
               arg_max(reason, rv) FILTER (WHERE state = 'terminated') AS reason,
               min(event_id) AS started_event_id,
               min(event_id) FILTER (WHERE state = 'terminated') AS finished_event_id
        FROM seen GROUP BY uid, name, started_at ORDER BY uid, init DESC, name, started_at""",
        [sel.uids]))


def finalizer_holds(con: duckdb.DuckDBPyConnection, sel: Selection) -> dict[str, list[Row]]:
    """A pod whose deletion was requested while it carried finalizers is held from the
    request until the first version without them (or its deletion; open if neither)."""
    return _by_uid(_rows(con, f"""
        WITH v AS (
            SELECT r.uid, r.rv, r.event_id, r.received_at, r.type, r.deletion_at,
                   r.finalizers FROM raw_events r JOIN ({SELECTED}) s USING (uid)
            WHERE r.kind = 'Pod'),
        held AS (SELECT uid, min(rv) AS rv, arg_min(event_id, rv) AS event_id,
                        arg_min(received_at, rv) AS since_at,
                        list(DISTINCT f ORDER BY f) AS finalizers
                 FROM (SELECT *, unnest(finalizers) AS f FROM v
                       WHERE deletion_at IS NOT NULL AND len(finalizers) > 0)
                 GROUP BY uid)
        SELECT h.uid, h.since_at, h.finalizers, h.event_id,
               min(v.received_at) AS until_at, arg_min(v.event_id, v.rv) AS until_event_id
        FROM held h LEFT JOIN v ON v.uid = h.uid AND v.rv > h.rv
             AND (len(v.finalizers) = 0 OR v.type LIKE '%DELETED')
        GROUP BY h.uid, h.since_at, h.finalizers, h.event_id""", [sel.uids]))


def races(con: duckdb.DuckDBPyConnection, sel: Selection) -> list[Row]:
    """The ``races`` rows of the selected pods, each with its namespace's suggested preStop
    (what ``race_summary_with`` says, computed in the same pass over every pod)."""
    return _rows(con, f"""
        SELECT r.* FROM (
            SELECT *, suggested_prestop_s(quantile_cont(request_to_endpoint_off_s, 0.99)
                          OVER (PARTITION BY namespace), ?) AS suggested_prestop_s
            FROM races_with(?)) r JOIN ({SELECTED}) s USING (uid)
        ORDER BY r.namespace, r.deletion_requested_at, r.pod""",
                 [DEFAULT_MARGIN_S, DEFAULT_MARGIN_S, sel.uids])


def problems(con: duckdb.DuckDBPyConnection, sel: Selection) -> list[Row]:
    """What ``ktrace stuck`` says at the window's end: the selected pods, and every
    other kind of object (workloads, namespaces, volumes)."""
    names, rows = stuck(con, at=sel.end, namespace=sel.namespace, cluster=sel.cluster).rows
    selected = set(sel.uids)
    found = internal_dicts(con, [dict(zip(names, r)) for r in rows])  # the page joins on ints
    return [p for p in found if p["kind"] != "Pod" or p["uid"] in selected]


def capacity_dips(con: duckdb.DuckDBPyConnection, sel: Selection) -> list[Row]:
    return _rows(con, "SELECT * FROM capacity_dips WHERE (? IS NULL OR namespace = ?) "
                 f"AND {in_cluster()} AND start_at <= ? AND coalesce(end_at, start_at) >= ? "
                 "ORDER BY start_at",
                 [sel.namespace, sel.namespace, sel.cluster, sel.cluster, sel.end, sel.start])


def gaps(con: duckdb.DuckDBPyConnection, sel: Selection) -> tuple[list[Row], list[Row]]:
    """``gaps`` rows overlapping the window: (unseen stretches — of the whole recording or
    of a topic, so they belong to every namespace —, slow or unknown steps of the selected
    pods)."""
    rows = _rows(con, "SELECT * FROM gaps WHERE (? IS NULL OR namespace IS NULL OR namespace = ?) "
                 "AND start_at <= ? AND end_at >= ? ORDER BY start_at, topic, type",
                 [sel.namespace, sel.namespace, sel.end, sel.start])
    selected = set(sel.uids)
    return ([r for r in rows if r["category"] == "unseen"],
            [r for r in rows if r["category"] != "unseen" and r["uid"] in selected])


def rollouts(con: duckdb.DuckDBPyConnection, sel: Selection) -> list[Row]:
    return _rows(con, "SELECT * FROM rollouts WHERE (? IS NULL OR namespace = ?) "
                 f"AND {in_cluster()} ORDER BY namespace, deployment, started_at",
                 [sel.namespace, sel.namespace, sel.cluster, sel.cluster])


def replica_series(con: duckdb.DuckDBPyConnection, sel: Selection
                   ) -> dict[DeploymentKey, list[Row]]:
    """Per Deployment (cluster, namespace, name): each ReplicaSet version's desired and
    ready counts, in the order they were received."""
    series: dict[DeploymentKey, list[Row]] = defaultdict(list)
    for row in _rows(con, f"""
        SELECT r.cluster, r.namespace, o.owner_name AS deployment, r.name AS replicaset,
               r.received_at AS at, w.replicas AS desired, w.ready_replicas AS ready,
               r.event_id
        FROM workloads w JOIN raw_events r USING (event_id)
        JOIN owner_refs o ON o.event_id = r.event_id AND o.owner_kind = 'Deployment'
        WHERE r.kind = 'ReplicaSet' AND (? IS NULL OR r.namespace = ?)
          AND {in_cluster("r.cluster")}
          AND r.type NOT LIKE '%DELETED' AND r.received_at <= ?
        ORDER BY r.cluster, r.namespace, deployment, replicaset, r.rv""",
                     [sel.namespace, sel.namespace, sel.cluster, sel.cluster, sel.end]):
        series[(row["cluster"], row["namespace"], row["deployment"])].append(row)
    return dict(series)


def evidence(con: duckdb.DuckDBPyConnection, event_ids: set[int]) -> dict[int, Row]:
    """The record behind each mark: who sent what, when it arrived and where it is stored,
    with the typed fields of its kind (as stored: redacted before storage)."""
    rows = _rows(con, f"""
        WITH ids AS (SELECT unnest(?::BIGINT[]) AS event_id)
        SELECT r.event_id,
               (SELECT {RECORD_ID_SQL} FROM raw_events x WHERE x.event_id = r.event_id) AS id,
               r.kind, r.namespace, r.name, r.uid, r.type, r.resource_version, r.component,
               r.attribution, r.received_at, r.time_source, r.topic, r.partition, r."offset",
               r.session, r.seq, r.deletion_at, r.finalizers,
               p.phase, p.node_name, p.grace_s, p.status_reason,
               (SELECT list(c.name || ': ' || coalesce(c.state, '?')
                            || coalesce(' ' || c.reason, '')
                            || coalesce(' exit ' || c.exit_code, '') ORDER BY c.name)
                FROM containers c WHERE c.event_id = r.event_id) AS containers,
               (SELECT list(coalesce(e.target_name, '?')
                            || ' ready=' || coalesce(e.ready::VARCHAR, '?')
                            || ' serving=' || coalesce(e.serving::VARCHAR, '?')
                            || ' terminating=' || coalesce(e.terminating::VARCHAR, '?')
                            ORDER BY e.target_name)
                FROM endpoints e WHERE e.event_id = r.event_id) AS endpoints,
               k.reason AS event_reason, k.message AS event_message,
               k.regarding_kind || '/' || k.regarding_name AS event_regarding
        FROM ids JOIN raw_events r USING (event_id)
        LEFT JOIN pods p ON p.event_id = r.event_id
        LEFT JOIN k8s_events k ON k.event_id = r.event_id ORDER BY r.event_id""",
                 [sorted(event_ids)])
    return {r["event_id"]: {k: v for k, v in r.items() if v not in (None, [])} for r in rows}
