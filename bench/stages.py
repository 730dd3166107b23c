"""CPU per event of each step of the recorder path, measured step by step (no profiler
overhead, so the shares are true): ``python -m bench.stages [EVENTS]``.

Every event goes through the steps in turn, timed on this thread only
(``time.thread_time``); Kafka is left out (``python -m bench`` measures it whole).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import orjson

from bench import workload
from bench.workload import TARGETS
from recorder import truncation
from recorder.attribution import Attributor
from recorder.informer import parse_event
from recorder.redaction import Redactor
from schemas import codec, records


class Clock:
    """Sums this thread's CPU time per step, one event at a time (events are not kept:
    holding thousands of parsed objects would bill the garbage collector to the parser)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self._last = time.thread_time()

    def lap(self, step: str) -> None:
        now = time.thread_time()
        self.spent[step] = self.spent.get(step, 0.0) + now - self._last
        self._last = now


def measure(lines: Iterable[bytes]) -> dict[str, float]:
    """µs/event of: parse, attribute, redact, dump JSON, build the record (facts), Avro."""
    attributors = {kind: Attributor() for kind in TARGETS}
    redactor, clock, events = Redactor(), Clock(), 0
    for line in lines:
        clock.lap("read")
        item = parse_event(line, "stages")
        clock.lap("parse (orjson)")
        attributors[item.obj["kind"]].observe(item.type, item.obj)
        clock.lap("attribute")
        redactor.apply(item.obj)
        clock.lap("redact")
        body = orjson.dumps(item.obj)
        clock.lap("object JSON (orjson)")
        record = records.object_record(
            cluster="bench", session="s", seq=events, event_type=item.type,
            resource=TARGETS[item.obj["kind"]].resource, obj=item.obj, object_json=body,
            received_at=item.received_at)
        clock.lap("record + facts")
        codec.encode(truncation.fit(record, item.obj, 1_000_000))
        clock.lap("Avro encode")
        events += 1
    clock.spent.pop("read")
    return {step: seconds / events * 1e6 for step, seconds in clock.spent.items()}


def main(argv: list[str]) -> int:
    events = int(argv[0]) if argv else 10_000
    with tempfile.TemporaryDirectory() as work:
        path = workload.build(Path(work) / "stages.jsonl", events)
        with path.open("rb") as fh:
            costs = measure(fh)
    for step, us in costs.items():
        print(f"{step:<22} {us:8.1f} µs/event")
    print(f"{'total':<22} {sum(costs.values()):8.1f} µs/event "
          f"({1e6 / sum(costs.values()):,.0f} events/s on one core, before Kafka)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
