"""One lane group per pod: the marks of its sub-lanes (API object, endpoint, containers,
node), placed on the page's time axis.

A mark is a plain dict the template draws: ``kind`` (its CSS class and what the page's
legend explains), ``row`` (sub-lane index; ``rows`` for marks spanning several), ``x``/``w``
in percent of the plot, ``label`` (laid out by the page's script so that none overlap),
``tip`` and ``ev`` (the evidence event id the details panel opens)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from replayer.report.gather import Incident, Row
from replayer.report.scale import Scale, clock, duration

#: races verdicts drawn as a race window (the others are not races).
RACE_VERDICTS = ("stopped_before_endpoint_off", "within_margin")
#: Sub-lane rows every pod has; containers follow, then the node when it matters.
OBJECT_ROW, ENDPOINT_ROW = 0, 1
NODE_CAUSES = ("node_not_ready", "node_deleted")
#: Steps the endpoint and container sub-lanes draw; every other step is a dot on the object's.
STEPS_DRAWN_ELSEWHERE = ("in_endpoints", "endpoint_not_ready", "endpoint_removed", "pulling",
                         "pulled", "restarted", "killing")
Mark = dict[str, Any]


def pod_end(pod: Row, steps: list[Row], data_end: datetime) -> datetime:
    """Where a pod's lane ends: its deletion, else the end of the data (still there)."""
    return pod["deleted_at"] or max([data_end, *(s["time"] for s in steps)])


def lane(pod: Row, inc: Incident, scale: Scale) -> dict[str, Any]:
    uid = pod["uid"]
    steps = inc.steps.get(uid, [])
    end = pod_end(pod, steps, inc.selection.end)
    runs = inc.containers.get(uid, [])
    names = list(dict.fromkeys(r["name"] for r in runs)) or ["containers"]
    rows = ["object", "endpoint", *names]
    node_matters = inc.top_causes.get(uid) in NODE_CAUSES
    if node_matters:
        rows.append(f"node {pod['node'] or ''}".strip())
    marks = [*_object_marks(pod, steps, end, inc, scale),
             *_endpoint_marks(inc.endpoints.get(uid, []), end, scale),
             *_container_marks(pod, steps, runs, names, end, scale),
             *_race_marks(uid, inc, len(names), scale),
             *_gap_marks(pod, steps, end, inc, rows, scale)]
    if node_matters:
        marks += _node_marks(pod, steps, len(rows) - 1, scale)
    return {"uid": uid, "pod": pod["pod"], "namespace": pod["namespace"], "rows": rows,
            "marks": marks, "summary": _summary(pod, steps)}


def _mark(kind: str, row: int, x: float, label: str, tip: str, ev: int | None,
          w: float | None = None, rows: int = 1, **extra: Any) -> Mark:
    return {"kind": kind, "row": row, "rows": rows, "x": x, "w": w, "label": label,
            "tip": tip, "ev": ev, **extra}


def _step_tip(step: Row) -> str:
    derived = " (derived from the object's own timestamps)" if step["derived"] else ""
    return (f"{step['step']} at {clock(step['time'])}{derived}"
            f"{' — ' + step['detail'] if step['detail'] else ''}"
            f"{' — by ' + step['component'] if step['component'] else ''}")


def _object_marks(pod: Row, steps: list[Row], end: datetime, inc: Incident,
                  scale: Scale) -> list[Mark]:
    at = {s["step"]: s for s in steps}
    created = pod["created_at"] or (steps[0]["time"] if steps else None)
    marks = [*_phase_marks(pod, at, created, end, scale),
             *_before_recording(created, inc.header["first"], end, scale),
             *_hold_marks(inc.holds.get(pod["uid"], []), end, scale)]
    for step in steps:
        if step["step"] in STEPS_DRAWN_ELSEWHERE:
            continue
        marks.append(_mark("step derived" if step["derived"] else "step", OBJECT_ROW,
                           scale.x(step["time"]), step["step"], _step_tip(step),
                           step["evidence_event_id"], step=step["step"]))
    if pod["deadline_at"]:
        marks.append(_mark("deadline", OBJECT_ROW, scale.x(pod["deadline_at"]), "grace deadline",
                           f"grace-period deadline {clock(pod['deadline_at'])} "
                           f"(deletion requested + {duration(pod['grace_s'])})",
                           (at.get("deletion_requested") or {}).get("evidence_event_id"),
                           rows=99))
    return marks


def _phase_marks(pod: Row, at: dict[str, Row], created: datetime | None, end: datetime,
                 scale: Scale) -> list[Mark]:
    """pending (created → running), running (→ deletion requested), terminating (→ end)."""
    requested = (at.get("deletion_requested") or {}).get("time", end)
    running = (at.get("running") or {}).get("time")
    phases = [("pending", created, running or requested), ("running", running, requested),
              ("terminating", pod["deletion_requested_at"], end)]
    marks = []
    for kind, since, until in phases:
        if since and until and until >= since:
            x, w = scale.span(since, until)
            marks.append(_mark(f"phase-{kind}", OBJECT_ROW, x, "",
                               f"{kind} {clock(since)} → {clock(until)} "
                               f"({duration((until - since).total_seconds())})", None, w))
    return marks


def _before_recording(created: datetime | None, recording_start: datetime | None,
                      end: datetime, scale: Scale) -> list[Mark]:
    """A pod created before the recording began: nothing was missed, nothing was seen."""
    if not (created and recording_start and created < recording_start):
        return []
    x, w = scale.span(created, min(recording_start, end))
    return [_mark("before-recording", OBJECT_ROW, x,
                  "before the recording started" if w > 20 else "",
                  f"created {clock(created)}, before the recording started at "
                  f"{clock(recording_start)}: steps here are derived", None, w)]


def _hold_marks(holds: list[Row], end: datetime, scale: Scale) -> list[Mark]:
    marks = []
    for hold in holds:
        until = hold["until_at"] or end
        held_s = (until - hold["since_at"]).total_seconds()
        x, w = scale.span(hold["since_at"], until)
        names = ", ".join(hold["finalizers"])
        marks.append(_mark("hold", OBJECT_ROW, x, f"held by {names} {duration(held_s)}",
                           f"finalizers {names} held the deletion from "
                           f"{clock(hold['since_at'])} for {duration(held_s)}"
                           + ("" if hold["until_at"] else " (still held at the end of the data)"),
                           hold["event_id"], w, held_s=held_s))
    return marks


def _endpoint_marks(stretches: list[Row], end: datetime, scale: Scale) -> list[Mark]:
    marks = []
    for s in stretches:
        until = s["until_at"] or end
        x, w = scale.span(s["since_at"], until)
        marks.append(_mark(f"ep-{s['state']}", ENDPOINT_ROW, x, "",
                           f"endpoint in {s['service']}: {s['state']} from "
                           f"{clock(s['since_at'])} to {clock(s['until_at'])}",
                           s["since_event_id"], w, state=s["state"]))
    return marks


def _container_marks(pod: Row, steps: list[Row], runs: list[Row], names: list[str],
                     end: datetime, scale: Scale) -> list[Mark]:
    row_of = {n: ENDPOINT_ROW + 1 + i for i, n in enumerate(names)}
    marks = [m for run in runs for m in _run_marks(run, row_of[run["name"]], end, scale)]
    return marks + _stop_marks(pod, steps, row_of[names[0]], end, scale)


def _run_marks(run: Row, row: int, end: datetime, scale: Scale) -> list[Mark]:
    """One run of a container (the kubelet's clock, 1 s) and how it exited."""
    x, w = scale.span(run["started_at"], run["finished_at"] or end)
    marks = [_mark("run", row, x, "", f"{run['name']} ran {clock(run['started_at'])} → "
                   f"{clock(run['finished_at'])} (kubelet clock, 1 s)", run["started_event_id"], w)]
    if run["finished_at"] is not None:
        code = run["exit_code"]
        marks.append(_mark("exit", row, scale.x(run["finished_at"]), f"exit {code}",
                           f"{run['name']} exited {code} ({run['reason'] or '?'}) at "
                           f"{clock(run['finished_at'])}", run["finished_event_id"], code=code))
    return marks


def _stop_marks(pod: Row, steps: list[Row], row: int, end: datetime,
                scale: Scale) -> list[Mark]:
    """Pulls, restarts, SIGTERM (the Killing Event), the preStop hook and SIGKILL at the
    deadline, on the first container's sub-lane."""
    at = {s["step"]: s for s in steps}
    marks = []
    if "pulling" in at:
        pulled = at.get("pulled", at["pulling"])
        x, w = scale.span(at["pulling"]["time"], pulled["time"])
        marks.append(_mark("pull", row, x, "pull", _step_tip(pulled),
                           pulled["evidence_event_id"], w))
    for step in steps:
        if step["step"] == "restarted":
            marks.append(_mark("restart", row, scale.x(step["time"]), "", _step_tip(step),
                               step["evidence_event_id"]))
        if step["step"] == "killing":
            marks.append(_mark("sigterm", row, scale.x(step["time"]), "SIGTERM",
                               "the kubelet's Killing Event: " + _step_tip(step),
                               step["evidence_event_id"]))
    requested, stopped = at.get("deletion_requested"), at.get("containers_stopped")
    if pod["has_prestop"] and requested:
        until = min(pod["deadline_at"] or end, stopped["time"] if stopped else end)
        x, w = scale.span(requested["time"], until)
        marks.append(_mark("prestop", row, x, "preStop",
                           "the pod has a preStop hook: it runs from the deletion request "
                           "until it returns or the grace period ends",
                           requested["evidence_event_id"], w))
    if pod["stop_verdict"] and "deadline" in pod["stop_verdict"] and pod["deadline_at"]:
        marks.append(_mark("sigkill", row, scale.x(pod["deadline_at"]), "SIGKILL",
                           f"{pod['stop_verdict']} ({clock(pod['deadline_at'])})",
                           (stopped or {}).get("evidence_event_id")))
    return marks


def _race_marks(uid: str, inc: Incident, containers: int, scale: Scale) -> list[Mark]:
    marks = []
    for race in inc.races_by_uid.get(uid, []):
        if race["verdict"] not in RACE_VERDICTS:
            continue
        since, until = sorted([race["containers_stopped_at"], race["endpoint_off_at"]])
        x, w = scale.span(since, until)
        exposed = race["exposed_s"]
        label = f"race {duration(exposed)}" if exposed >= 0 else f"margin {duration(-exposed)}"
        marks.append(_mark("race", ENDPOINT_ROW, x, label,
                           f"containers stopped {clock(race['containers_stopped_at'])}, the "
                           f"endpoint in {race['service']} went {race['off_state']} at "
                           f"{clock(race['endpoint_off_at'])}: traffic could reach stopped "
                           f"containers for {duration(exposed)} ({race['verdict']})",
                           race["evidence"][1] if race["evidence"] else None, w,
                           rows=1 + containers, exposed=round(exposed, 3)))
    return marks


def _gap_marks(pod: Row, steps: list[Row], end: datetime, inc: Incident,
               rows: list[str], scale: Scale) -> list[Mark]:
    """Unseen stretches over the pod's lifetime, hatched on the sub-lanes whose topic was
    not seen (all of them for a stretch of the whole recording)."""
    first = steps[0]["time"] if steps else pod["created_at"]
    containers = len(rows) - 2 - (rows[-1].startswith("node"))
    spans = {"pods": [(OBJECT_ROW, 1), (ENDPOINT_ROW + 1, containers)],
             "endpointslices": [(ENDPOINT_ROW, 1)],
             "nodes": [(len(rows) - 1, 1)] if rows[-1].startswith("node") else [],
             "": [(0, len(rows))]}
    marks, labelled = [], set()
    for gap in inc.unseen:
        topic = (gap["topic"] or "").rsplit(".", 1)[-1]
        if topic not in spans or gap["end_at"] < first or gap["start_at"] > end:
            continue
        x, w = scale.span(max(gap["start_at"], first), min(gap["end_at"], end))
        for row, count in spans[topic]:
            label = "" if gap["type"] in labelled else f"unseen: {gap['type']}"
            labelled.add(gap["type"])  # one label per kind of stretch, not one per topic
            marks.append(_mark("gap", row, x, label,
                               f"not seen ({gap['type']}, {topic or 'whole recording'}): "
                               f"{gap['detail']} {clock(gap['start_at'])} → "
                               f"{clock(gap['end_at'])}", gap["evidence_event_id"], w,
                               rows=count, gap_type=gap["type"], topic=topic))
    return marks


def _node_marks(pod: Row, steps: list[Row], row: int, scale: Scale) -> list[Mark]:
    return [_mark("node-warning", row, scale.x(s["time"]), s["detail"].split(":")[0],
                  _step_tip(s), s["evidence_event_id"])
            for s in steps if s["step"] == "warning" and "Node" in (s["detail"] or "")]


def _summary(pod: Row, steps: list[Row]) -> str:
    last = steps[-1]["step"] if steps else "—"
    verdict = f", {pod['stop_verdict']}" if pod["stop_verdict"] else ""
    return f"{len(steps)} steps, last {last}{verdict}"
