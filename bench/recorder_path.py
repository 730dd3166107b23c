"""The recorder path, single-threaded: watch lines → parse → attribute → redact → Avro → Kafka.

Built from the recorder's public pieces — ``informer.parse_event`` for each line, the
``Writer`` (attribution, redaction, facts, envelope, truncation), the sink ``ktrace record``
opens for Kafka (``session.open_sink``: the spooling sink over the Kafka producer) and its
checkpoint store — flushed and checkpointed on the cadence of ``session.Recording``
(every ``flush_records`` records or ``flush_interval_s``). What ``Recording`` adds on top, a
thread per watch and a queue to the writer, is left out: one core does everything here.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from bench.workload import TARGETS
from recorder import informer, lean
from recorder.checkpoint import CheckpointStore
from recorder.metrics import Metrics
from schemas.redaction import Redactor
from recorder.session import open_sink
from recorder.settings import RecordSettings
from recorder.sinks import Sink
from recorder.writer import Writer
from schemas.kafka_settings import KafkaSettings
from schemas.registry import RegistrySettings
from schemas.topics import topic_for


@dataclass
class RecorderRun:
    events: int
    records: int
    live_objects: int


class Pipeline:
    """One recording session over the bench's watches, fed raw watch lines."""

    def __init__(self, bootstrap: str, prefix: str, state_dir: str,
                 schema_registry: str | None = None) -> None:
        registry = RegistrySettings(url=schema_registry) if schema_registry else None
        self.settings = RecordSettings(
            kafka=KafkaSettings(bootstrap=bootstrap, schema_registry=registry),
            topic_prefix=prefix, state_dir=state_dir)
        metrics = Metrics()
        self.sink: Sink = open_sink(self.settings, metrics,
                                    [topic_for(prefix, t.resource) for t in TARGETS.values()])
        self.writer = Writer(self.sink, cluster="bench", session=str(uuid.uuid4()),
                             topic_prefix=prefix, redactor=Redactor(), metrics=metrics)
        self.store = CheckpointStore(state_dir, f"bench|{bootstrap}|{prefix}")
        self.keys = {kind: self.writer.add_watch(t, None).target.key for kind, t in TARGETS.items()}
        self._unflushed, self._flushed_at = 0, time.monotonic()

    def start(self) -> None:
        """SESSION_START, then an empty initial list per watch (LIST → SYNCED), as a fresh
        session against a cluster where the seed's objects do not exist yet."""
        self.writer.start_session("bench")
        for key in self.keys.values():
            now = informer.now_us()
            self.writer.handle(key, informer.ListStarted("1", None, now))
            self.writer.handle(key, informer.Synced("1", 0, now))
        self.flush()

    def feed(self, lines: Iterable[bytes]) -> int:
        count = 0
        for line in lines:
            item = informer.parse_event(line, "bench")
            # The seed has no BOOKMARK lines: every item is a WatchEvent with its object's kind.
            self.writer.handle(self.keys[lean.identity(item.obj)[1]], item)
            count += 1
            self._unflushed += 1
            self._maybe_flush()
        return count

    def finish(self, events: int) -> RecorderRun:
        live = sum(len(state.known) for state in self.writer.states.values())
        self.writer.end_session("bench done")
        self.flush()
        self.sink.close()
        return RecorderRun(events, self.writer.records_written, live)

    def _maybe_flush(self) -> None:
        due = time.monotonic() - self._flushed_at >= self.settings.flush_interval_s
        if (due and self._unflushed) or self._unflushed >= self.settings.flush_records:
            self.flush()

    def flush(self) -> None:
        """Durable first, then the checkpoints that account for it (Recording._flush)."""
        self.sink.flush()
        self._unflushed, self._flushed_at = 0, time.monotonic()
        for state in self.writer.states.values():
            if state.dirty:
                self.store.save(state.target.key, state.checkpoint)
                state.dirty = False


def record_file(path: str, *, bootstrap: str, prefix: str, state_dir: str,
                schema_registry: str | None = None) -> RecorderRun:
    """``schema_registry``: the Confluent framing through that registry (else the header)."""
    pipeline = Pipeline(bootstrap, prefix, state_dir, schema_registry)
    pipeline.start()
    with open(path, "rb") as fh:
        events = pipeline.feed(fh)
    return pipeline.finish(events)
