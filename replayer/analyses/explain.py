"""``ktrace explain``: one object's whole story for a person — its timeline and every finding
about it (stuck causes, how a Job or volume ended, the claims a pod waits on, races, slow
steps, restarts, how it stopped, the stretches the recording did not see), each a sentence
with its evidence ids and what to do. Any recorded kind: pods from ``pod_transitions``,
every other kind from ``object_transitions_of``; a workload's pods are explained with it
when they were recorded."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator

import duckdb

from replayer.analyses.races import DEFAULT_MARGIN_S as RACE_MARGIN_S
from replayer.analyses.record_ids import public_dicts
from replayer.analyses.scope import clock_known, clusters, data_end
from replayer.analyses.timeline import POD_OWNERS, pod_uids
from schemas.errors import KtraceError
from schemas.formats import duration, rfc3339
from schemas.kinds import ObjectRef

@dataclass
class Finding:
    topic: str
    sentence: str
    evidence: list[int | str] = field(default_factory=list)
    advice: str | None = None


@dataclass
class Story:
    kind: str
    namespace: str | None
    name: str
    uid: str
    first_seen: datetime | None
    last_seen: datetime | None
    timeline: list[dict[str, Any]]
    findings: list[Finding]

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name,
                "uid": self.uid, "first_seen": self.first_seen, "last_seen": self.last_seen,
                "timeline": self.timeline,
                "findings": [vars(f) for f in self.findings]}


def explain(con: duckdb.DuckDBPyConnection, target: str, namespace: str | None = None,
            cluster: str | None = None) -> list[Story]:
    """``target`` is ``KIND/NAME`` with any kind name kubectl takes; a bare NAME is a pod."""
    ref = ObjectRef.parse(target)
    kind = ref.kind.kind
    if kind == "Pod":
        return _stories(con, pod_uids(con, target, namespace, cluster))
    uids = _uids(con, kind, ref.name, namespace, cluster)
    if kind in POD_OWNERS | {"Deployment"}:
        uids += _owned_pods(con, target, namespace, cluster)
    return _stories(con, uids)


def _owned_pods(con: duckdb.DuckDBPyConnection, target: str, namespace: str | None,
                cluster: str | None) -> list[str]:
    """A workload's recorded pods; none is no error (a capture of the workload alone, or
    pods long gone): the workload's own story stands."""
    try:
        return pod_uids(con, target, namespace, cluster)
    except KtraceError:
        return []


def _uids(con: duckdb.DuckDBPyConnection, kind: str, name: str, namespace: str | None,
          cluster: str | None) -> list[str]:
    rows = con.execute("SELECT DISTINCT uid FROM raw_events WHERE kind = ? AND (name = ? OR uid = ?) "
                       "AND (? IS NULL OR namespace = ?) AND (? IS NULL OR cluster = ?) "
                       "ORDER BY uid",
                       [kind, name, name, namespace, namespace, cluster, cluster]).fetchall()
    if not rows:
        where = ", ".join(f"{k} {v}" for k, v in (("namespace", namespace),
                                                   ("cluster", cluster)) if v)
        raise KtraceError(f"no {kind} {name!r} in the database"
                          + (f" ({where})" if where else ""))
    return [r[0] for r in rows]


def _stories(con: duckdb.DuckDBPyConnection, uids: list[str]) -> list[Story]:
    """Every analysis runs once for all of ``uids`` (each scans the whole database)."""
    heads = {r["uid"]: r for r in _dicts(
        con, "SELECT uid, any_value(kind) AS kind, any_value(namespace) AS namespace, "
             "any_value(name) AS name, min(received_at) AS first, max(received_at) AS last "
             "FROM raw_events WHERE list_contains(?, uid) GROUP BY uid", [uids])}
    timelines = _by_uid(_dicts(con, "SELECT uid, step_no, step, time, component, derived, "
                                    "detail, evidence_event_id FROM pod_transitions "
                                    "WHERE list_contains(?, uid) UNION ALL "
                                    "SELECT * FROM object_transitions_of(?) "
                                    "ORDER BY uid, step_no", [uids, uids]))
    findings = {uid: [] for uid in uids}
    for collect in (_stuck, _pod_outcome, _object_outcome, _pressure, _drains, _claims, _race, _lifecycle,
                    _finalizers_held, _gaps, _unseen):
        for uid, finding in collect(con, uids):
            findings[uid].append(finding)
    stories = []
    for uid in uids:
        h = heads[uid]
        timeline = [{k: v for k, v in step.items() if k != "uid"} for step in timelines.get(uid, [])]
        stories.append(Story(h["kind"], h["namespace"], h["name"], uid, h["first"], h["last"],
                             timeline, findings[uid]))
    return _with_record_ids(con, stories)


def _with_record_ids(con: duckdb.DuckDBPyConnection, stories: list[Story]) -> list[Story]:
    """The stories with the evidence ids they print as record ids (one lookup for all)."""
    mapped = public_dicts(con, [{"timeline": s.timeline,
                                 "evidence": [f.evidence for f in s.findings]} for s in stories])
    for story, ids in zip(stories, mapped):
        story.timeline = ids["timeline"]
        for finding, evidence in zip(story.findings, ids["evidence"]):
            finding.evidence = evidence
    return stories


def _dicts(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def _by_uid(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["uid"], []).append(row)
    return grouped


Found = list[tuple[str, Finding]]


def _found(rows: list[dict[str, Any]], says: Callable[[dict[str, Any]], Iterable[Finding]]) -> Found:
    """A finder is a query and what one of its rows says: each finding of each row, with the
    row's uid."""
    return [(row["uid"], finding) for row in rows for finding in says(row)]


PROBLEM_STATES = {"terminating": "Stuck Terminating", "pending": "Not running (Pending)",
                  "not_ready": "Running but not Ready",
                  "unknown": "Not running (its status not recorded)",
                  "not_created": "Cannot create its pods",
                  "rollout_stalled": "Rollout stalled", "update_held": "Update held",
                  "pods_missing": "Pods missing", "claim_pending": "Claim not bound",
                  "volume_missing": "Bound to a missing volume",
                  "volume_misbound": "Its volume bound to another claim", "lost": "Lost", "failed": "Failed", "released": "Released, not deleted",
                  "drain_blocked": "Drain blocked", "no_ready_endpoints": "No ready endpoint",
                  "node_not_ready": "Not Ready"}
#: what an operator does about a node's pressure condition (the kubelet evicts until it passes)
PRESSURE_ADVICE = {
    "MemoryPressure": "the pods on the node use more memory than it has: set memory requests that "
                      "match their use, or give the node more memory",
    "DiskPressure": "the node's disk (nodefs or imagefs) is nearly full: remove unused images and "
                    "logs, set ephemeral-storage limits, or give the node more disk",
    "PIDPressure": "a pod starts more processes than the node has free: set pod pid limits "
                   "(podPidsLimit) or find the pod that forks",
    "NetworkUnavailable": "the node's network is not configured: see the network plugin on it"}
#: what to do where the condition's reason says more than its type
PRESSURE_REASON_ADVICE = {
    # the cloud route controller's (k8s.io/cloud-provider controllers/route): it failed to
    # create the route to the node's podCIDR, or has not yet
    "NoRouteCreated": "the cloud route controller (the cloud-controller-manager's, or the "
                      "kube-controller-manager's with --configure-cloud-routes) has not created "
                      "the route to this node's podCIDR: its FailedToCreateRoute Events and logs "
                      "name the cloud's error (permissions, the route table's quota, an "
                      "overlapping CIDR); a network plugin that routes pods itself (Calico, "
                      "Cilium, a VPC CNI) wants --configure-cloud-routes=false and sets the "
                      "condition False itself. Until it is False the scheduler places no pod "
                      "there"}
#: the states of object_findings_at that are not stuck: how an object ended or waits
OUTCOME_STATES = {"failed": "Failed", "complete": "Complete", "suspended": "Suspended",
                  "claim_waiting": "Waiting for a consumer", "released": "Released",
                  "node_not_ready": "Not Ready"}


def _stuck(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    """Judged at the end of each object's cluster's data (as ``ktrace stuck`` judges)."""
    return _found(_causes(con, "problems_at", uids), _stuck_says)


def _stuck_says(row: dict[str, Any]) -> list[Finding]:
    state = PROBLEM_STATES[row["problem"]]
    if row["timeless"]:
        return [Finding("stuck", f"{state} {_unknown_when(row, 'since when')}: {row['cause']} — {row['detail']}",
                        row["evidence"] or [], row["advice"])]
    lasted = "" if row["clock_known"] else "at least "
    return [Finding("stuck", f"{state} for {lasted}{_seconds(row['stuck_for_s'])} (since "
                             f"{_time(row['since'])}{'' if row['clock_known'] else '; the capture has no clock: it ends at its last object time'}):"
                             f" {row['cause']} — {row['detail']}", row["evidence"] or [], row["advice"])]


# the time sources of a capture none of whose objects carries a timestamp: the file's time,
# then each record after it in the file's order (replayer/importer.py)
TIMELESS = "('derived:file-mtime', 'derived:capture-order', 'derived:previous')"

def _causes(con: duckdb.DuckDBPyConnection, macro: str, uids: list[str]) -> list[dict[str, Any]]:
    """Every cause ``macro`` (problems_at, pod_outcomes_at) finds for ``uids`` at the end of
    each cluster's data, with the advice that fits its sub-reason (finding_advice) and whether
    the data has a receive clock (an import without one can only say "at least")."""
    return [row for cluster in clusters(con) for row in _dicts(
        con, "SELECT p.uid, p.problem, p.since, p.stuck_for_s, c.cause, c.detail, "
             "  c.evidence, finding_advice(c.cause, c.detail) AS advice, ? AS clock_known, "
             f"  (SELECT bool_and(r.time_source IN {TIMELESS} AND NOT EXISTS (SELECT 1 "
             f"     FROM raw_events o WHERE o.topic = r.topic AND o.time_source NOT IN {TIMELESS})) "
             "   FROM raw_events r WHERE list_contains(c.evidence, r.event_id)) AS timeless "
             f"FROM {macro}(?::TIMESTAMP) p, unnest(p.causes) AS u(c) "
             "WHERE list_contains(?, p.uid) AND p.uid IN "
             "  (SELECT uid FROM raw_events WHERE cluster = ?) "
             "ORDER BY p.uid, c.score DESC, c.cause",  # ranked as stuck ranks them
        [clock_known(con, cluster), data_end(con, cluster), uids, cluster])]


OUTCOMES = {"evicted": "Evicted", "admission": "Rejected by the kubelet",
            "preempted": "Preempted", "oom_killed": "Ended OOM-killed",
            "node_shutdown": "Stopped by its node's shutdown"}


def _pod_outcome(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    """How a pod ended, when a cause ended it (evicted, rejected, preempted, OOM-killed,
    stopped by its node's shutdown)."""
    return _found(_causes(con, "pod_outcomes_at", uids), lambda r: [
        Finding("outcome", f"{OUTCOMES.get(r['cause'], r['cause'])} "
                           f"{_unknown_when(r, 'when') if r['timeless'] else 'at ' + _time(r['since'])}: "
                           f"{r['cause']} — {r['detail']}",
                r["evidence"] or [], r["advice"])])


def _unknown_when(row: dict[str, Any], asked: str) -> str:
    """An import whose evidence carries no time at all took the capture file's time: that
    is when the file was written, not when it happened."""
    return (f"({asked}: unknown — no record of it carries a time; the capture file is from "
            f"{_time(row['since'])})")


def _findings(con: duckdb.DuckDBPyConnection, uids: list[str], where: str) -> list[dict[str, Any]]:
    """object_findings_at rows of ``uids`` (or of what ``where`` selects), each cluster's
    judged at the end of its data, with the cause's advice."""
    return [row for cluster in clusters(con) for row in _dicts(
        con, "SELECT f.*, finding_advice(f.cause, f.detail) AS advice "
             "FROM object_findings_at(?::TIMESTAMP) f "
             f"WHERE {where} AND f.uid IN "
             "  (SELECT uid FROM raw_events WHERE cluster = ?)",
        [data_end(con, cluster), uids, cluster])]


def _object_outcome(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    """How a finished or waiting workload or volume stands: never stuck (``_stuck`` has the rest)."""
    return _found(_findings(con, uids, "list_contains(?, f.uid) AND NOT f.stuck"), lambda r: [
        Finding("outcome", f"{OUTCOME_STATES.get(r['state'], r['state'])} since "
                           f"{_time(r['since'])}: {r['cause'] or r['state']} — {r['detail']}",
                r["evidence"] or [], r["advice"])])


def _pressure(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    """A Node's pressure conditions, passed or holding: a condition the kubelet reclaims
    from by evicting, never a stuck object."""
    rows = _dicts(con, "SELECT * FROM node_pressure_of(?)", [uids])
    for r in rows:  # a condition still holding is judged at the end of its cluster's data
        r["end"], r["clock_known"] = data_end(con, r["cluster"]), clock_known(con, r["cluster"])
    return _found(rows, _pressure_says)


def _pressure_says(r: dict[str, Any]) -> list[Finding]:
    held = (f"from {_time(r['since'])} to {_time(r['until'])} "
            f"({_seconds((r['until'] - r['since']).total_seconds())})" if r["until"] is not None
            else f"since {_time(r['since'])}, still at the end of the data, {_held(r)}")
    said = f"{r['reason']}: {r['message']}" if r["message"] else r["reason"]
    reclaim = r["reclaim"]
    times = f" (×{reclaim['count']})" if reclaim and (reclaim["count"] or 1) > 1 else ""
    reclaimed = (f"the kubelet's EvictionThresholdMet \"{reclaim['message']}\" at {_time(reclaim['at'])}{times}"
                 if reclaim else "no EvictionThresholdMet Event recorded")
    evicted = ", ".join(f"{e['namespace']}/{e['pod']} at {_time(e['at'])}" for e in r["evicted"] or [])
    return [Finding("pressure", f"{r['type']}=True {held}: {said}; {reclaimed}; "
                                f"{f'evicted or refused for it: {evicted}' if evicted else 'no pod evicted for it recorded'}.",
                    r["evidence"], PRESSURE_REASON_ADVICE.get(r["reason"], PRESSURE_ADVICE.get(r["type"])))]


def _held(r: dict[str, Any]) -> str:
    """How long a condition still holding has held by the end of the data — a lower bound
    where the data has no receive clock, derived where its start is the object's own
    lastTransitionTime."""
    lasted = f"{'' if r['clock_known'] else 'at least '}{_seconds((r['end'] - r['since']).total_seconds())}"
    return f"held {lasted} (derived from its lastTransitionTime)" if r["since_derived"] else f"held {lasted}"


def _drains(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    """A Node's or budget's past drains a PodDisruptionBudget held, and whether each then
    got through (one still held at the end is ``_stuck``'s)."""
    return _found(_dicts(con, "SELECT * FROM drain_holds_of(?)", [uids]), _drain_says)


def _drain_says(r: dict[str, Any]) -> list[Finding]:
    evicted = ", ".join(f"{e['pod']} at {_time(e['at'])}" for e in r["evicted"] or [])
    end = (f"the drain passed at {_time(r['passed_at'])} (every pod it held evicted: {evicted})"
           if r["passed_at"] is not None else
           f"not every pod it held was evicted{f' ({evicted})' if evicted else ''}: the drain did "
           "not get through")
    return [Finding("drain", f"Drain held for {_seconds(r['held_s'])} ({_time(r['since'])} – "
                             f"{_time(r['allowed_at'])}): drain_blocked — {r['detail']}. Then allowed; {end}.",
                    r["evidence"] or [])]


def _claims(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    """A pod's claims followed to their own findings (a pod Pending on an unbound claim:
    the claim's ProvisioningFailed says why)."""
    pods = _dicts(con, "SELECT l.uid, l.namespace, unnest(p.claim_names) AS claim "
                       "FROM latest_versions l JOIN pods p USING (event_id) "
                       "WHERE list_contains(?, l.uid)", [uids])
    if not pods:
        return []
    by_claim = {(p["namespace"], p["claim"]): p["uid"] for p in pods}
    claim_uids = [r[0] for r in con.execute(
        "SELECT DISTINCT uid FROM raw_events WHERE kind = 'PersistentVolumeClaim' "
        "AND list_contains(?, [namespace, name])",
        [[list(k) for k in by_claim]]).fetchall()]
    found = []
    for r in _findings(con, claim_uids, "list_contains(?, f.uid)"):
        pod = by_claim.get((r["namespace"], r["name"]))
        if pod is not None:
            found.append((pod, Finding("storage", f"Its claim {r['namespace']}/{r['name']}: "
                                                  f"{r['cause']} — {r['detail']}",
                                       r["evidence"] or [], r["advice"])))
    return found


def _race(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    return _found(_dicts(con, "SELECT r.*, s.suggested_prestop_s FROM races r "
                              "LEFT JOIN (SELECT namespace, suggested_prestop_s(quantile_cont("
                              "  request_to_endpoint_off_s, 0.99), ?) AS suggested_prestop_s "
                              "  FROM races GROUP BY namespace) s USING (namespace) "
                              "WHERE list_contains(?, r.uid)", [RACE_MARGIN_S, uids]), _race_says)


def _race_says(r: dict[str, Any]) -> list[Finding]:
    if r["verdict"] == "stopped_before_endpoint_off":
        sentence = (f"Race: its containers stopped {_seconds(r['exposed_s'])} before its "
                    f"endpoint in {r['service']} went off ({r['off_state']}): traffic could "
                    f"still be routed to a stopped pod.")
        advice = (f"a preStop delay of {_seconds(r['suggested_prestop_s'])} (the 99th percentile of "
                  f"deletion → endpoint off in namespace {r['namespace']}, plus "
                  f"{_seconds(RACE_MARGIN_S)} for kube-proxy) would have kept it serving until "
                  "its endpoint was gone")
    elif r["verdict"] == "within_margin":
        sentence = (f"Race (narrow): its containers stopped {_seconds(-r['exposed_s'])} after "
                    f"its endpoint in {r['service']} went off — within kube-proxy's margin.")
        advice = f"a preStop delay of {_seconds(r['suggested_prestop_s'])} would give kube-proxy time"
    elif r["verdict"] == "ok":
        sentence = (f"No race: its endpoint in {r['service']} went off "
                    f"{_seconds(-r['exposed_s'])} before its containers stopped.")
        advice = None
    else:
        sentence = "Race: unknown (the endpoint's or the containers' stop was not seen)."
        advice = None
    return [Finding("race", sentence, [e for e in r["evidence"] if e is not None], advice)]


def _lifecycle(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    return _found(_dicts(con, "SELECT l.uid, l.restarts, l.stop_verdict, l.first_seen_at, "
                              "  l.derived_steps, l.pull_s, t.component AS requester, "
                              "  t.detail AS request_detail, t.evidence_event_id AS request_event, "
                              "  m.marked "
                              "FROM pod_lifecycle l LEFT JOIN pod_transitions t "
                              "  ON t.uid = l.uid AND t.step = 'deletion_requested' "
                              "LEFT JOIN (SELECT uid, arg_min({'by': component, 'at': time, "
                              "    'event': evidence_event_id}, step_no) AS marked FROM pod_transitions "
                              "  WHERE step = 'taint_eviction' GROUP BY uid) m ON m.uid = l.uid "
                              "WHERE list_contains(?, l.uid)", [uids]), _lifecycle_says)


def _lifecycle_says(r: dict[str, Any]) -> Iterator[Finding]:
    if r["first_seen_at"] is not None:
        yield Finding("recording", f"First seen at {_time(r['first_seen_at'])}, mid-life: "
                                   f"{', '.join(r['derived_steps']) or 'no step'} happened before and "
                                   "are derived from the object's own timestamps (no slow-step "
                                   "verdicts on them).")
    if r["requester"] is not None:
        yield Finding("deletion", f"Deletion requested by {r['requester']} ({r['request_detail']}).",
                      [r["request_event"]])
    elif r["marked"] is not None:  # the controller's DELETE follows its Event at once
        yield Finding("deletion", f"Deletion requested by {r['marked']['by']} "
                                  f"at {_time(r['marked']['at'])} (its NoExecute "
                                  "taint eviction; the deletion itself was not "
                                  "recorded).", [r["marked"]["event"]])
    if r["stop_verdict"] is not None:
        killed = r["stop_verdict"].startswith("did not exit on SIGTERM")
        yield Finding("deletion", f"Containers {r['stop_verdict']}.", [],
                      "handle SIGTERM in the app, or shorten the grace period" if killed else None)
    if r["restarts"]:
        yield Finding("restarts", f"Containers restarted {r['restarts']} times "
                                  "(see the restarted steps).")
    if r["pull_s"] is not None:
        yield Finding("startup", f"Image pull took {_seconds(r['pull_s'])}.")


def _finalizers_held(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    """The finalizers that hold an object being deleted at the end of its cluster's data,
    each with who removes it — whether or not it is stuck yet."""
    rows = [row for cluster in clusters(con) for row in _dicts(
        con, "SELECT uid, any_value(event_id) AS event_id, any_value(deletion_at) AS deletion_at, "
             "  list({'finalizer': finalizer, 'remover': remover, 'owner': owner_kind || ' ' || owner_name} "
             "    ORDER BY finalizer) AS held "
             "FROM finalizers_held_at(?::TIMESTAMP) WHERE list_contains(?, uid) "
             "  AND uid IN (SELECT uid FROM raw_events WHERE cluster = ?) GROUP BY uid",
        [data_end(con, cluster), uids, cluster])]
    return _found(rows, lambda r: [Finding(
        "deletion", f"Held by finalizer{'s' if len(r['held']) > 1 else ''} since its deletion at "
                    f"{_time(r['deletion_at'])}, still there at the "
                    f"end of the data: {'; '.join(_finalizer_held_by(h) for h in r['held'])}.", [r["event_id"]])])


def _finalizer_held_by(held: dict[str, Any]) -> str:
    if held["remover"] is None:
        return f"{held['finalizer']} (not one of Kubernetes' own: the controller that added it removes it)"
    owner = f" (owner {held['owner']})" if held["owner"] else ""
    return f"{held['finalizer']}{owner} — {held['remover']}"


def _gaps(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    return _found(_dicts(con, "SELECT * FROM gaps WHERE list_contains(?, uid) "
                              "AND category <> 'unseen' ORDER BY start_at", [uids]), lambda r: [
        Finding("slow" if r["category"] == "slow" else "unknown",
                f"{r['type']} took {_seconds(r['seconds'])} (threshold "
                f"{_seconds(r['threshold_s'])}): {r['detail']}",
                [r["evidence_event_id"]] if r["evidence_event_id"] else [])])


def _unseen(con: duckdb.DuckDBPyConnection, uids: list[str]) -> Found:
    rows = _dicts(con, "WITH life AS (SELECT uid, min(received_at) AS first, "
                       "  max(received_at) AS last, list(DISTINCT topic) AS topics "
                       "  FROM raw_events WHERE list_contains(?, uid) GROUP BY uid) "
                       "SELECT DISTINCT l.uid, u.type, u.start_at, u.end_at, u.detail, "
                       "  u.evidence_event_id FROM life l JOIN unseen_stretches u "
                       "  ON (u.topic IS NULL OR list_contains(l.topics, u.topic)) "
                       "  AND u.start_at <= l.last AND u.end_at >= l.first "
                       "ORDER BY l.uid, u.start_at", [uids])
    return _found(rows, lambda r: [
        Finding("recording", f"The recording did not see {_time(r['start_at'])} – "
                             f"{_time(r['end_at'])} ({r['type']}: {r['detail']}); "
                             "what happened to it then is unknown.", [r["evidence_event_id"]])])


def _seconds(value: float | None) -> str:
    return "?" if value is None else duration(value)


def _time(value: datetime | None) -> str:
    return "?" if value is None else rfc3339(value, None)
