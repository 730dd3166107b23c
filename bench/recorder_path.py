"""The recorder path, single-threaded: watch lines → parse → attribute → redact → Avro → Kafka.

Built from the recorder's public pieces — ``informer.parse_event`` for each line, the
``Writer`` (attribution, redaction, facts, envelope, truncation), the sink ``ktrace record``
opens for Kafka (``session.open_sink``: the spooling sink over the Kafka producer) and its
checkpoint store — flushed and checkpointed on the cadence of ``session.Recording``
(every ``flush_records`` records or ``flush_interval_s``, through its ``Checkpointer``).
What ``Recording`` adds on top, a thread per watch and a queue to the writer, is left out:
one core does everything here.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from bench.child import cpu_seconds, peak_rss_mb
from bench.workload import TARGETS
from recorder import informer, lean
from recorder.checkpoint import CheckpointStore
from recorder.checkpointer import Checkpointer
from recorder.metrics import Metrics
from schemas.redaction import Redactor
from recorder.session import open_sink
from recorder.settings import RecordSettings
from transports.sink import Sink
from recorder.writer import Writer
from transports.kafka.settings import KafkaSettings
from transports.kafka.registry import RegistrySettings
from schemas.topics import topic_for


#: Live objects at which peak RSS is taken (the issue's "RSS at 100k live objects").
LIVE_TARGET = 100_000
#: Events after which CPU so far is noted, so CPU per event can be compared by stretch.
CPU_MARKS = (10_000, 100_000, 1_000_000, 10_000_000)
#: How often (events) live objects are counted: often enough to land near the target.
LIVE_CHECK_EVERY = 500


@dataclass
class RecorderRun:
    events: int
    records: int
    live_objects: int
    #: When live objects first reached LIVE_TARGET: events so far and peak RSS then.
    at_live_target: dict[str, float] | None = None
    #: (events, CPU s of the process so far) at each of CPU_MARKS reached, and at the end.
    cpu_marks: list[tuple[int, float]] = field(default_factory=list)




class Pipeline:
    """One recording session over the bench's watches, fed raw watch lines."""

    def __init__(self, bootstrap: str | None, prefix: str, state_dir: str,
                 schema_registry: str | None = None, out: str | None = None) -> None:
        """``bootstrap`` None: into the local log at ``out``, as ``ktrace record --out``."""
        registry = RegistrySettings(url=schema_registry) if schema_registry else None
        kafka = None if bootstrap is None else KafkaSettings(bootstrap=bootstrap,
                                                             schema_registry=registry)
        self.settings = RecordSettings(kafka=kafka, out=out, topic_prefix=prefix,
                                       state_dir=state_dir)
        metrics = Metrics()
        self.sink: Sink = open_sink(self.settings, metrics,
                                    [topic_for(prefix, t.resource) for t in TARGETS.values()])
        self.writer = Writer(self.sink, cluster="bench", session=str(uuid.uuid4()),
                             topic_prefix=prefix, redactor=Redactor(), metrics=metrics)
        self.store = CheckpointStore(state_dir, f"bench|{bootstrap}|{prefix}")
        self.keys = {kind: self.writer.add_watch(t, None).target.key for kind, t in TARGETS.items()}
        self.checkpointer = Checkpointer(self.sink, self.store, self.writer.states)
        self._unflushed, self._flushed_at = 0, time.monotonic()
        self.at_live_target: dict[str, float] | None = None
        self.cpu_marks: list[tuple[int, float]] = []
        self._cpu_started = cpu_seconds()

    def start(self) -> None:
        """SESSION_START, then an empty initial list per watch (LIST → SYNCED), as a fresh
        session against a cluster where the seed's objects do not exist yet."""
        self.writer.start_session("bench")
        for key in self.keys.values():
            now = informer.now_us()
            self.writer.handle(key, informer.ListStarted("1", None, now))
            self.writer.handle(key, informer.Synced("1", 0, now))
        self._mark()  # as Recording.run: the first acknowledgement is not waited for

    def feed(self, lines: Iterable[bytes], *, stop_at_live: bool = False) -> int:
        """Every line recorded (or, with ``stop_at_live``, those until LIVE_TARGET live objects)."""
        count, marks = 0, iter(CPU_MARKS)
        mark = next(marks)
        for line in lines:
            item = informer.parse_event(line, "bench")
            # The seed has no BOOKMARK lines: every item is a WatchEvent with its object's kind.
            self.writer.handle(self.keys[lean.identity(item.obj)[1]], item)
            count += 1
            self._unflushed += 1
            self._maybe_flush()
            if count == mark:
                self.cpu_marks.append((count, cpu_seconds() - self._cpu_started))
                mark = next(marks)
            if count % LIVE_CHECK_EVERY == 0 and self.at_live_target is None and self.live() >= LIVE_TARGET:
                self.at_live_target = {"events": count, "live_objects": self.live(),
                                       "rss_mb": round(peak_rss_mb(), 1)}
                if stop_at_live:
                    break
        return count

    def live(self) -> int:
        return sum(len(state.known) for state in self.writer.states.values())

    def finish(self, events: int) -> RecorderRun:
        live = self.live()
        self.writer.end_session("bench done")
        self.flush()
        self.sink.close()
        if not self.cpu_marks or self.cpu_marks[-1][0] != events:
            self.cpu_marks.append((events, cpu_seconds() - self._cpu_started))
        return RecorderRun(events, self.writer.records_written, live, self.at_live_target,
                           self.cpu_marks)

    def _maybe_flush(self) -> None:
        due = time.monotonic() - self._flushed_at >= self.settings.flush_interval_s
        if (due and self._unflushed) or self._unflushed >= self.settings.flush_records:
            self._mark()

    def _mark(self) -> None:
        """A checkpoint point, flushed behind (Recording._mark)."""
        self.checkpointer.mark()
        self._unflushed, self._flushed_at = 0, time.monotonic()

    def flush(self) -> None:
        """Durable first, then the checkpoints that account for it (Recording._flush)."""
        self.checkpointer.flush()
        self._unflushed, self._flushed_at = 0, time.monotonic()


def record_file(path: str, *, bootstrap: str | None, prefix: str, state_dir: str,
                schema_registry: str | None = None, stop_at_live: bool = False,
                out: str | None = None) -> RecorderRun:
    """``schema_registry``: the Confluent framing through that registry (else the header);
    ``stop_at_live``: stop once LIVE_TARGET objects are live; ``bootstrap`` None: into the
    local log at ``out``."""
    pipeline = Pipeline(bootstrap, prefix, state_dir, schema_registry, out)
    pipeline.start()
    with open(path, "rb") as fh:
        events = pipeline.feed(fh, stop_at_live=stop_at_live)
    return pipeline.finish(events)
