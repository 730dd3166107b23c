"""The report's page model, top-down: findings first, then the picture (lane groups per
workload and revision, rollout charts), then the recording's unseen stretches grouped into
the events that caused them. Everything is drawn on one time axis per page (``Scale``, in
percent of the plot), so lanes, charts and the recording's row line up and scale with the
window. Plain dicts and lists for the template.

Large incidents stay small: pods with findings are drawn first, a few others per revision
after them (``_drawn_pods``), and the rest are counted in one line per revision."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from replayer.report.gather import DeploymentKey, Incident, Row
from replayer.report.lanes import RACE_VERDICTS, lane, pod_end
from replayer.report.scale import Scale, clock, duration
from replayer.analyses.gaps import unseen_events as group_unseen
from schemas.formats import rfc3339

CHART_HEIGHT = 80
#: Lane budget: a report of thousands of pods stays a few MB (the rest are counted).
MAX_FLAGGED_LANES = 300
MAX_QUIET_LANES = 3
MAX_QUIET_TOTAL = 60
SHOWN_FINDINGS = 25
FINDING_TITLES = {"stuck": "Stuck", "race": "Rollout races", "capacity": "Capacity dips",
                  "slow": "Slow steps", "unknown": "Steps the recording could not time"}
#: Groups with more pods than this start collapsed.
OPEN_GROUP_PODS = 30
#: How many revision colours the stylesheet declares (``.rev-0`` …); more revisions repeat.
REVISION_COLOURS = 6


def page(inc: Incident) -> dict[str, Any]:
    flagged = _flagged_pods(inc)
    drawn = _drawn_pods(inc, flagged)
    scale = _page_scale(inc)
    colours = _revision_colours(inc)
    events = unseen_events(inc.unseen)
    return {"header": _header(inc, events), "findings": _by_kind(findings(inc), drawn),
            "axis": scale.ticks(), "groups": _groups(inc, flagged, drawn, scale, colours),
            "rollouts": _rollout_charts(inc, scale, colours),
            "recording": _recording_lane(events, scale)}


def _page_scale(inc: Incident) -> Scale:
    """The page's one time axis: every pod's span, the rollouts' changes and the unseen
    stretches, within the selected window."""
    sel = inc.selection
    times = [t for p in inc.pods for t in _pod_span(p, inc)]
    times += [s["at"] for series in inc.replica_series.values() for s in series]
    times += [t for g in inc.unseen for t in (g["start_at"], g["end_at"])]
    inside = [min(max(t, sel.start), sel.end) for t in times if t is not None]
    return Scale.around(inside or [sel.start, sel.end])


def _revision_colours(inc: Incident) -> dict[tuple[str, str, str, str | None], int]:
    """A colour per revision of a workload, in the order the revisions appeared, shared by
    its lanes and its rollout chart's line: (cluster, namespace, workload, revision) → index."""
    order: dict[tuple[str, str, str], list[str | None]] = defaultdict(list)
    firsts = {}
    for key, series in inc.replica_series.items():
        for s in series:
            firsts.setdefault((key, s["replicaset"]), s["at"])
    for (key, rs), _ in sorted(firsts.items(), key=lambda item: item[1]):
        order[(key[0], key[1], f"Deployment/{key[2]}")].append(rs)
    for pod in inc.pods:
        known = order[(pod["cluster"], pod["namespace"], pod["workload"])]
        if pod["revision"] not in known:
            known.append(pod["revision"])
    return {(*workload, rev): i % REVISION_COLOURS
            for workload, revs in order.items() for i, rev in enumerate(revs)}


def _by_kind(rows: list[dict[str, Any]], drawn: set[str]) -> list[dict[str, Any]]:
    """Findings in one table per kind, the first ``SHOWN_FINDINGS`` open, the rest folded;
    a link only to a lane that is drawn."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        lane = row["lane"]
        if lane and lane.startswith("lane-") and lane[len("lane-"):] not in drawn:
            row = {**row, "lane": None}
        kinds.setdefault(row["kind"], []).append(row)
    return [{"kind": kind, "title": FINDING_TITLES[kind], "rows": found,
             "shown": SHOWN_FINDINGS} for kind, found in kinds.items()]


def _header(inc: Incident, events: list[dict[str, Any]]) -> dict[str, Any]:
    h = inc.header
    return {**h, "window": f"{rfc3339(h['start'], 0)} → {rfc3339(h['end'], 0)}",
            "unseen": events}


def unseen_events(unseen: list[Row]) -> list[dict[str, Any]]:
    """The unseen stretches grouped into the events behind them (as `ktrace gaps` groups
    them: replayer.analyses.gaps), each told once with its topics."""
    events = [{"type": group[0]["type"], "session": group[0]["session"], "stretches": group}
              for group in group_unseen(unseen)]
    for e in events:
        rows = e["stretches"]
        start, end = min(r["start_at"] for r in rows), max(r["end_at"] for r in rows)
        e.update(start_at=start, end_at=end, span=f"{clock(start)} → {clock(end)}",
                 length=duration((end - start).total_seconds()),
                 topics=[_topic(r["topic"]) for r in rows], detail=rows[0]["detail"],
                 evidence=[r["evidence_event_id"] for r in rows],
                 label=f"{e['type']} · {_topic_count(rows)}")
    return sorted(events, key=lambda e: e["start_at"])


def _topic(topic: str | None) -> str:
    """A topic as people name it: ``pods`` for ``ktrace.pods``; none is the whole recording."""
    return topic.rsplit(".", 1)[-1] if topic else "whole recording"


def _topic_count(rows: list[Row]) -> str:
    return _topic(rows[0]["topic"]) if len(rows) == 1 else f"{len(rows)} topics"


def _flagged_pods(inc: Incident) -> dict[str, int]:
    """Pods with a finding, by how much it matters (lower first): stuck, raced, held by a
    finalizer, slow or hidden by an unseen stretch."""
    ranks: dict[str, int] = {}
    for rank, uids in enumerate([
            inc.top_causes, [r["uid"] for r in inc.races if r["verdict"] in RACE_VERDICTS],
            inc.holds, [s["uid"] for s in inc.slow_steps if s["uid"]]]):
        for uid in uids:
            ranks.setdefault(uid, rank)
    return ranks


def _drawn_pods(inc: Incident, flagged: dict[str, int]) -> set[str]:
    """Which pods get a lane: those with findings first (at most ``MAX_FLAGGED_LANES``),
    then up to ``MAX_QUIET_LANES`` others per revision while ``MAX_QUIET_TOTAL`` allows."""
    loud = sorted((p for p in inc.pods if p["uid"] in flagged), key=lambda p: flagged[p["uid"]])
    drawn = {p["uid"] for p in loud[:MAX_FLAGGED_LANES]}
    per_revision: dict[tuple, int] = defaultdict(int)
    quiet = 0
    for pod in inc.pods:
        key = (pod["namespace"], pod["workload"], pod["revision"])
        if (pod["uid"] in flagged or per_revision[key] >= MAX_QUIET_LANES
                or quiet >= MAX_QUIET_TOTAL):
            continue
        per_revision[key] += 1
        quiet += 1
        drawn.add(pod["uid"])
    return drawn


def findings(inc: Incident) -> list[dict[str, Any]]:
    """One row per finding: what, where (the lane's anchor) and its evidence."""
    out = []
    for p in inc.problems:
        cause = (p["causes"] or [{}])[0]
        out.append({"kind": "stuck", "what": f"{p['kind']} {p['namespace'] or ''}/{p['name']}",
                    "title": f"{p['problem']} for {duration(p['stuck_for_s'])}: {p['top_cause']}",
                    "detail": cause.get("detail") or "", "lane": _anchor(p["kind"], p),
                    "evidence": cause.get("evidence") or [p["evidence_event_id"]]})
    for r in inc.races:
        if r["verdict"] not in RACE_VERDICTS:
            continue
        out.append({"kind": "race", "what": f"Pod {r['namespace']}/{r['pod']}",
                    "title": f"{r['verdict']}: " + (
                        f"exposed {duration(r['exposed_s'])}" if r["exposed_s"] >= 0 else
                        f"stopped {duration(-r['exposed_s'])} after the endpoint went off")
                    + f" behind Service {r['service']}",
                    "detail": f"deletion → endpoint off {duration(r['request_to_endpoint_off_s'])}; "
                              f"suggested preStop {duration(r['suggested_prestop_s'])}",
                    "lane": f"lane-{r['uid']}", "evidence": r["evidence"],
                    "exposed": round(r["exposed_s"], 3)})
    for d in inc.capacity_dips:
        out.append({"kind": "capacity", "what": f"Service {d['namespace']}/{d['service']}",
                    "title": f"{d['min_ready']} of {d['desired']} ready for "
                             f"{duration(d['duration_s'])}",
                    "detail": f"pods off: {', '.join(d['pods_off'] or [])}",
                    "lane": rollout_anchor(d["cluster"], d["namespace"], d["deployment"]),
                    "evidence": []})
    for s in inc.slow_steps:
        out.append({"kind": s["category"], "what": f"Pod {s['namespace']}/{s['name']}",
                    "title": f"{s['type']} {duration(s['seconds'])} (threshold "
                             f"{duration(s['threshold_s'])})",
                    "detail": s["detail"] or "", "lane": f"lane-{s['uid']}",
                    "evidence": [s["evidence_event_id"]] if s["evidence_event_id"] else []})
    return out


def _anchor(kind: str, row: Row) -> str | None:
    if kind == "Pod":
        return f"lane-{row['uid']}"
    if kind == "Deployment":
        return rollout_anchor(row["cluster"], row["namespace"], row["name"])
    return None


def rollout_anchor(cluster: str, namespace: str, deployment: str) -> str:
    """The id of a Deployment's rollout chart, its findings' link."""
    return f"rollout-{cluster}-{namespace}-{deployment}"


def _recording_lane(events: list[dict[str, Any]], scale: Scale) -> dict[str, Any]:
    """One row per unseen event, on the page's axis (empty when the recording saw all)."""
    marks = []
    for row, e in enumerate(events):
        x, w = scale.span(e["start_at"], e["end_at"])
        marks.append({"row": row, "x": x, "w": w, "type": e["type"],
                      "topics": " ".join(e["topics"]), "ev": e["evidence"][0],
                      "start": rfc3339(e["start_at"]), "end": rfc3339(e["end_at"]),
                      "label": f"{e['type']} {e['length']}",
                      "tip": f"{e['type']}: {e['detail']} — not seen {e['span']} "
                             f"({e['length']}) on {', '.join(e['topics'])}"})
    return {"rows": [e["label"] for e in events], "marks": marks}


def _groups(inc: Incident, flagged: dict[str, int], drawn: set[str], scale: Scale,
            colours: dict[tuple[str, str, str, str | None], int]) -> list[dict[str, Any]]:
    by_group: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for pod in inc.pods:
        by_group[(pod["cluster"], pod["namespace"], pod["workload"])].append(pod)
    groups = []
    for key, pods in by_group.items():
        cluster, namespace, workload = key
        revisions: dict[str | None, list[Row]] = defaultdict(list)
        for pod in pods:
            revisions[pod["revision"]].append(pod)
        groups.append({"cluster": _shown_cluster(inc, cluster), "namespace": namespace,
                       "workload": workload, "pods": len(pods),
                       "flagged": sum(p["uid"] in flagged for p in pods),
                       "open": len(pods) <= OPEN_GROUP_PODS,
                       "revisions": [_revision(rev, rs_pods, inc, drawn, scale,
                                               colours[(*key, rev)])
                                     for rev, rs_pods in revisions.items()]})
    return groups


def _shown_cluster(inc: Incident, cluster: str) -> str | None:
    """The cluster a group or chart names when the database holds several (each may have
    its own shop/web), else None."""
    return cluster if len(inc.header["clusters"] or []) > 1 else None


def _pod_span(pod: Row, inc: Incident) -> list[datetime]:
    """What a group's scale must show of a pod: its steps and grace deadline, and — for a
    pod still stuck at the end — up to the end of the data. A pod simply still running
    does not stretch the scale: its bars run off the right edge."""
    steps = inc.steps.get(pod["uid"], [])
    times = [s["time"] for s in steps] + [pod["created_at"], pod["deadline_at"]]
    if pod["uid"] in inc.top_causes:
        times.append(pod_end(pod, steps, inc.selection.end))
    return [t for t in times if t is not None]


def _revision(name: str | None, pods: list[Row], inc: Incident, drawn: set[str],
              scale: Scale, colour: int) -> dict[str, Any]:
    lanes = [lane(p, inc, scale) for p in pods if p["uid"] in drawn]
    return {"name": name, "lanes": lanes, "not_drawn": len(pods) - len(lanes), "colour": colour}


def _rollout_charts(inc: Incident, scale: Scale,
                    colours: dict[tuple[str, str, str, str | None], int]) -> list[dict[str, Any]]:
    """Per Deployment of a cluster: a step line of ready pods per revision (in its lanes'
    colour), desired, pods terminating, and capacity dips shaded; titled with its cluster
    (``_shown_cluster``)."""
    charts = []
    pods_of: dict[DeploymentKey, list[Row]] = defaultdict(list)
    rollouts_of: dict[DeploymentKey, list[Row]] = defaultdict(list)
    dips_of: dict[DeploymentKey, list[Row]] = defaultdict(list)
    for rollout in inc.rollouts:
        rollouts_of[(rollout["cluster"], rollout["namespace"], rollout["deployment"])].append(rollout)
    for pod in inc.pods:
        pods_of[(pod["cluster"], pod["namespace"], pod["workload"])].append(pod)
    for d in inc.capacity_dips:
        dips_of[(d["cluster"], d["namespace"], d["deployment"])].append(d)
    for key, series in inc.replica_series.items():
        cluster, namespace, deployment = key
        pods = pods_of[(cluster, namespace, f"Deployment/{deployment}")]
        dips = dips_of[key]
        terminating = _terminating_steps(pods)
        top = max([s["desired"] or 0 for s in series] + [s["ready"] or 0 for s in series]
                  + [n for _, n in terminating] + [1])
        y = lambda n: round(CHART_HEIGHT - (n or 0) / top * (CHART_HEIGHT - 8), 1)  # noqa: E731
        lines = []
        colour_of = {rs: colours[(cluster, namespace, f"Deployment/{deployment}", rs)]
                     for rs in {s["replicaset"] for s in series}}
        for rs in sorted(colour_of, key=lambda rs: (colour_of[rs], rs)):  # revisions' order
            points = [(s["at"], s["ready"]) for s in series if s["replicaset"] == rs]
            lines.append({"name": rs, "kind": "ready", "points": _steps(points, scale, y),
                          "colour": colour_of[rs]})
        desired = _desired(series)
        lines.append({"name": "desired", "kind": "desired", "points": _steps(desired, scale, y)})
        lines.append({"name": "terminating", "kind": "terminating",
                      "points": _steps(terminating, scale, y)})
        charts.append({"id": rollout_anchor(cluster, namespace, deployment),
                       "cluster": _shown_cluster(inc, cluster), "namespace": namespace,
                       "deployment": deployment, "lines": lines, "top": top,
                       "height": CHART_HEIGHT,
                       "revisions": rollouts_of.get(key, []),
                       "dips": [{"x": scale.span(d["start_at"], d["end_at"] or scale.end)[0],
                                 "w": scale.span(d["start_at"], d["end_at"] or scale.end)[1],
                                 "tip": f"{d['min_ready']} of {d['desired']} ready for "
                                        f"{duration(d['duration_s'])}"} for d in dips]})
    return charts


def _desired(series: list[Row]) -> list[tuple[datetime, int]]:
    """The sum of every revision's desired replicas at each change."""
    current: dict[str, int] = {}
    out = []
    for s in sorted(series, key=lambda s: s["at"]):
        current[s["replicaset"]] = s["desired"] or 0
        out.append((s["at"], sum(current.values())))
    return out


def _terminating_steps(pods: list[Row]) -> list[tuple[datetime, int]]:
    changes = sorted([(p["deletion_requested_at"], 1) for p in pods if p["deletion_requested_at"]]
                     + [(p["deleted_at"], -1) for p in pods
                        if p["deletion_requested_at"] and p["deleted_at"]])
    out, n = [], 0
    for at, delta in changes:
        n += delta
        out.append((at, n))
    return out


def _steps(points: list[tuple[datetime, int]], scale: Scale, y) -> str:
    """An SVG polyline's points drawing a step function up to the end of the scale, in a
    viewBox 100 wide (the chart stretches with the window; strokes do not scale)."""
    if not points:
        return ""
    out, last = [], None
    for at, n in points:
        x = scale.x(at)
        if last is not None:
            out.append(f"{x},{last}")
        last = y(n)
        out.append(f"{x},{last}")
    out.append(f"100,{last}")
    return " ".join(out)
