"""The Chrome trace (JSON trace events, opened by ui.perfetto.dev and chrome://tracing):
one process per workload, one track (thread) per pod, each lifecycle step a complete
``X`` slice lasting until the next step (the last one is an instant: 0 µs), so
slices on a track never overlap."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from replayer.report.gather import Row

EPOCH = datetime(1970, 1, 1)


def _us(at: datetime) -> int:
    return int((at - EPOCH).total_seconds() * 1_000_000)


def trace(pods: list[Row], steps_of: dict[str, list[Row]]) -> dict[str, Any]:
    """The trace of ``pods`` (gather.pods) with their steps (gather.steps)."""
    events: list[dict[str, Any]] = []
    processes: dict[str, int] = {}
    for tid, pod in enumerate(pods, start=1):
        group = f"{pod['namespace']}/{pod['workload']}"
        if group not in processes:
            processes[group] = len(processes) + 1
            events.append({"ph": "M", "pid": processes[group], "tid": 0,
                           "name": "process_name", "args": {"name": group}})
        pid = processes[group]
        events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                       "args": {"name": f"{pod['namespace']}/{pod['pod']}"}})
        steps = sorted(steps_of.get(pod["uid"], []), key=lambda s: (s["time"], s["step_no"]))
        for step, after in zip(steps, [*steps[1:], None]):
            start = _us(step["time"])
            end = _us(after["time"]) if after else start
            events.append({"ph": "X", "pid": pid, "tid": tid, "name": step["step"],
                           "cat": "derived" if step["derived"] else "seen", "ts": start,
                           "dur": end - start,
                           "args": {"evidence_event_id": step["evidence_event_id"],
                                    "component": step["component"], "detail": step["detail"]}})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"source": "ktrace report", "pods": len(pods)}}
