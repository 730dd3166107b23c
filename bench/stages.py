"""CPU per event of each step of the recorder path, measured step by step (no profiler
overhead, so the shares are true): ``python -m bench.stages [EVENTS]``.

Every event goes through the steps in turn, timed on this thread only
(``time.thread_time``); Kafka is left out (``python -m bench`` measures it whole). The
Kafka framing step is the fingerprint header's, or with ``$KTRACE_TEST_REGISTRY`` the
Confluent framing's through that registry.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from bench import workload
from bench.workload import TARGETS
from recorder import lean, truncation
from recorder.attribution import Attributor
from recorder.informer import parse_event
from recorder.splice import replaced
from schemas import envelope, topics
from transports.kafka.framing import FingerprintFraming, Framing, RegistryFraming
from transports.kafka.registry import RegistryClient, RegistrySettings


TOPIC_PREFIX = "bench-stages"


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


def measure(lines: Iterable[bytes], framing: Framing) -> dict[str, float]:
    """µs/event of: decode (lean), attribute, redact in place, Avro, as
    the Writer does them (``recorder/writer.py`` ``_object``), and the sink's Kafka framing
    (value, headers, key)."""
    attributors = {kind: Attributor() for kind in TARGETS}
    envelopes = {kind: envelope.WatchEnvelopes("bench", "s", t.resource)
                 for kind, t in TARGETS.items()}
    clock, events = Clock(), 0
    for line in lines:
        clock.lap("read")
        item = parse_event(line, "stages")
        assert isinstance(item.obj, lean.RawObject), "the seed's shapes are all modelled"
        clock.lap("decode+locate (lean)")
        api_version, kind, uid, rv, namespace, name = lean.identity(item.obj)
        attribution = attributors[kind].observe(item.type, item.obj.seen)
        clock.lap("attribute")
        body = replaced(item.obj.body, item.obj.default_spans())
        clock.lap("redact (in place)")
        assert truncation.fits(body, 1_000_000)
        made = envelopes[kind]
        encoded = made.encode(made.make(
            events, item.type, False, api_version, kind, namespace, name, uid, rv,
            item.received_at, attribution.component, attribution.evidence, body))
        clock.lap("Avro encode")
        framing.value(topics.topic_for(TOPIC_PREFIX, TARGETS[kind].resource), encoded)
        framing.headers(item.type, "s", events)
        topics.object_key(kind, body, uid, "s")
        clock.lap("Kafka framing")
        events += 1
    clock.spent.pop("read")
    return {step: seconds / events * 1e6 for step, seconds in clock.spent.items()}


def main(argv: list[str]) -> int:
    events = int(argv[0]) if argv else 10_000
    framing: Framing = FingerprintFraming()
    if registry := os.environ.get("KTRACE_TEST_REGISTRY"):
        framing = RegistryFraming(RegistryClient(RegistrySettings(url=registry)))
        framing.register([topics.topic_for(TOPIC_PREFIX, t.resource) for t in TARGETS.values()])
    print(f"Kafka framing: {type(framing).__name__}")
    with tempfile.TemporaryDirectory() as work:
        path = workload.build(workload.cached(Path(work), "stages"), events)
        with path.open("rb") as fh:
            costs = measure(fh, framing)
    for step, us in costs.items():
        print(f"{step:<22} {us:8.1f} µs/event")
    print(f"{'total':<22} {sum(costs.values()):8.1f} µs/event "
          f"({1e6 / sum(costs.values()):,.0f} events/s on one core, before Kafka)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
