"""Turns what the informers report into records, in order, one topic per resource.

The writer runs in one thread and owns all recording state: gap-free sequence numbers per
(session, topic), the objects known per watch (uid → resourceVersion) that a relist is
diffed against, attribution priors, and the checkpoint resourceVersion. Because it is the
only thread that sends, "everything sent before a flush" is exactly what a checkpoint saved
after that flush accounts for.

Relists (after 410 Gone or from an expired checkpoint) are written as: RELIST marker, GAP
marker spanning [last seen RV/time, relist RV/time], then only what differs from the last
known state — MODIFIED (inferred) for changed objects, ADDED (inferred) for new ones,
INFERRED_DELETED for vanished ones — then SYNCED with the counts. An object the relist
found unchanged (same resourceVersion) gets no record: its last record is still true, and
the GAP + SYNCED pair proves it. The first list of a fresh session records every object as
LISTED.
"""

from __future__ import annotations

import functools
import logging
import time
from importlib import metadata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec
import orjson

from recorder import informer as inf
from recorder import gojson, lean, truncation
from recorder.attribution import Attributor, observed
from recorder.checkpoint import Checkpoint
from recorder.kube.catalogue import Target
from recorder.metrics import Metrics
from schemas.redaction import Redactor
from transports.sink import Outgoing, Sink
from recorder.splice import SpanRedactor, replaced
from schemas import envelope, records, topics
from schemas.codec import Record
from schemas.facts import extract_facts, extract_meta, parse_time

log = logging.getLogger(__name__)

BOOKMARK_MARKER_INTERVAL_S = 60.0

Obj = dict[str, Any]


@dataclass
class WatchState:
    target: Target
    topic: str
    envelopes: envelope.WatchEnvelopes  # its object records' envelopes and Avro bodies
    checkpoint: Checkpoint = field(default_factory=Checkpoint)
    attributor: Attributor = field(default_factory=Attributor)
    listing: set[str] | None = None  # uids the current (re)list has shown so far
    list_cause: str | None = None
    counts: Counter = field(default_factory=Counter)
    ready: bool = False
    dirty: bool = False
    bookmark_marker_at: float = 0.0

    @property
    def known(self) -> dict[str, list[str | None]]:
        return self.checkpoint.known


class Writer:
    """``typed_facts`` also fills the records' ``meta``/``facts`` (``--typed-facts``), for
    Kafka consumers that want typed Avro fields; the object JSON holds all they would."""

    def __init__(self, sink: Sink, *, cluster: str, session: str, topic_prefix: str,
                 redactor: Redactor, metrics: Metrics | None = None,
                 typed_facts: bool = False) -> None:
        self.sink, self.cluster, self.session = sink, cluster, session
        self.prefix, self.redactor, self.typed_facts = topic_prefix, redactor, typed_facts
        # The default paths are located by the lean decode itself (``RawObject.default_spans``).
        self.splicer = (lean.DEFAULT_SPANS if redactor.paths == lean.DEFAULT_SPAN_PATHS
                        else SpanRedactor(redactor.paths))
        if redactor.paths and not self.splicer.usable:
            log.warning("msgspec %s does not lay out msgspec.Raw as recorder/rawview.py reads "
                        "it: every object is redacted by a full parse (the same records, "
                        "~2.5x the CPU per event); install msgspec as pyproject.toml pins it",
                        msgspec.__version__)
        self.metrics = metrics or Metrics()
        self.states: dict[str, WatchState] = {}
        self._seq: Counter = Counter()

    @property
    def records_written(self) -> int:
        return sum(self._seq.values())

    def add_watch(self, target: Target, checkpoint: Checkpoint | None) -> WatchState:
        state = WatchState(target, topics.topic_for(self.prefix, target.resource),
                           envelope.WatchEnvelopes(self.cluster, self.session, target.resource),
                           checkpoint or Checkpoint())
        self.states[target.key] = state
        return state

    # --- session markers ------------------------------------------------------------------

    def start_session(self, detail: str) -> None:
        """SESSION_START on every topic (seq 0): each topic is self-describing."""
        for states in self._by_topic().values():
            resumed = [s.checkpoint.resource_version for s in states if s.checkpoint.resource_version]
            cause = "resume from checkpoint" if resumed else "start"
            self._marker(states[0], "SESSION_START", time_us(), cause=cause, detail=detail,
                         fromResourceVersion=resumed[0] if len(resumed) == 1 else None,
                         recorderVersion=recorder_version(),
                         kinds=sorted({s.target.key for s in states}))

    def end_session(self, cause: str) -> None:
        for states in self._by_topic().values():
            self._marker(states[0], "SESSION_END", time_us(), cause=cause,
                         toResourceVersion=states[0].checkpoint.resource_version,
                         recorderVersion=recorder_version())

    def _by_topic(self) -> dict[str, list[WatchState]]:
        grouped: dict[str, list[WatchState]] = {}
        for state in self.states.values():
            grouped.setdefault(state.topic, []).append(state)
        return grouped

    # --- items ----------------------------------------------------------------------------

    def handle(self, key: str, item: inf.Item) -> None:
        state = self.states[key]
        handler = _HANDLERS[type(item)]
        handler(self, state, item)

    def _on_list_started(self, state: WatchState, item: inf.ListStarted) -> None:
        state.listing, state.list_cause, state.counts = set(), item.relist_cause, Counter()
        if item.relist_cause is not None:
            cp = state.checkpoint
            self.metrics.gaps.labels(state.target.resource).inc()
            self._marker(state, "GAP", item.received_at, cause=item.relist_cause,
                         fromResourceVersion=cp.resource_version, fromTime=cp.last_seen_at,
                         toResourceVersion=item.resource_version, toTime=item.received_at)

    def _on_listed(self, state: WatchState, item: inf.Listed) -> None:
        identity = lean.identity(item.obj)
        uid, rv, namespace, name = identity[2:]
        uid = uid or ""
        if state.listing is None:
            state.listing = set()
        state.listing.add(uid)
        known = state.known.get(uid)
        if state.list_cause is None:
            kind, inferred = "LISTED", False
        elif known is None:
            kind, inferred = "ADDED", True
        elif known[0] != rv:
            kind, inferred = "MODIFIED", True
        else:
            state.counts["unchanged"] += 1
            state.attributor.remember(item.obj)
            return
        state.counts[kind.lower()] += 1
        self._object(state, kind, item.obj, identity, item.received_at, inferred=inferred)
        state.checkpoint.put(uid, rv, namespace, name)
        state.dirty = True

    def _on_synced(self, state: WatchState, item: inf.Synced) -> None:
        listing = state.listing or set()
        for uid in [u for u in state.known if u not in listing]:
            self._inferred_deleted(state, uid, item)
        cause = state.list_cause or "initial list"
        counts = ", ".join(f"{k} {v}" for k, v in sorted(state.counts.items())) or "empty"
        self._marker(state, "SYNCED", item.received_at, cause=cause, detail=counts,
                     toResourceVersion=item.resource_version, toTime=item.received_at,
                     objectCount=item.count)
        state.checkpoint.resource_version = item.resource_version
        state.checkpoint.last_seen_at = item.received_at
        state.listing, state.list_cause, state.dirty = None, None, True
        self._set_ready(state)

    def _inferred_deleted(self, state: WatchState, uid: str, item: inf.Synced) -> None:
        rv, namespace, name = state.checkpoint.pop(uid)
        stub = {"apiVersion": state.target.api_version, "kind": state.target.kind,
                "metadata": {"uid": uid, "name": name, "namespace": namespace, "resourceVersion": rv}}
        state.counts["inferred_deleted"] += 1
        self._object(state, "INFERRED_DELETED", stub, lean.identity(stub), item.received_at,
                     inferred=True, stored=False)

    def _on_event(self, state: WatchState, item: inf.WatchEvent) -> None:
        identity = lean.identity(item.obj)
        uid, rv, namespace, name = identity[2:]
        uid = uid or ""
        self._object(state, item.type, item.obj, identity, item.received_at)
        if item.type == "DELETED":
            state.checkpoint.pop(uid)
        else:
            state.checkpoint.put(uid, rv, namespace, name)
        state.checkpoint.resource_version = rv or state.checkpoint.resource_version
        state.checkpoint.last_seen_at = item.received_at
        state.dirty = True

    def _on_bookmark(self, state: WatchState, item: inf.Bookmark) -> None:
        state.checkpoint.resource_version = item.resource_version
        state.checkpoint.last_seen_at = item.received_at
        state.dirty = True
        if time.monotonic() - state.bookmark_marker_at >= BOOKMARK_MARKER_INTERVAL_S:
            state.bookmark_marker_at = time.monotonic()
            self._marker(state, "BOOKMARK", item.received_at, toResourceVersion=item.resource_version,
                         toTime=item.received_at)

    def _on_relist(self, state: WatchState, item: inf.Relist) -> None:
        self.metrics.relists.labels(state.target.resource).inc()
        self._marker(state, "RELIST", item.received_at, cause=item.cause,
                     fromResourceVersion=item.from_rv, fromTime=state.checkpoint.last_seen_at)

    def _on_watching(self, state: WatchState, item: inf.Watching) -> None:
        self._set_ready(state)

    def _on_problem(self, state: WatchState, item: inf.Problem) -> None:
        self.metrics.watch_problems.labels(state.target.resource, item.what).inc()

    def _set_ready(self, state: WatchState) -> None:
        if not state.ready:
            state.ready = True
            self.metrics.synced.labels(state.target.resource, state.target.namespace or "").set(1)

    # --- records --------------------------------------------------------------------------

    def _object(self, state: WatchState, event_type: str, obj: Obj | lean.RawObject,
                identity: lean.Identity, received_at: int, *, inferred: bool = False,
                stored: bool = True) -> None:
        api_version, kind, uid, rv, namespace, name = identity
        if isinstance(obj, lean.RawObject):
            attribution = state.attributor.observe(event_type, obj.seen)
            body = self._redacted(obj) if stored else None
        else:
            attribution = state.attributor.observe(event_type, observed(obj))
            self.redactor.apply(obj)
            body = gojson.dumps(obj) if stored else None
        seq = self._next_seq(state.topic)
        found = state.envelopes.make(seq, event_type, inferred, api_version, kind, namespace,
                                     name, uid, rv, received_at, attribution.component,
                                     attribution.evidence, body)
        if not self.typed_facts and truncation.fits(body, self.sink.max_record_bytes):
            # most records: encoded straight from their envelope, with no Record dict
            key = topics.object_key(kind, body, uid, self.session)
            self.sink.send_encoded(state.topic, Outgoing(state.envelopes.encode(found), key,
                                                         event_type, self.session, seq,
                                                         received_at, uid, namespace, name))
        else:
            meta, facts = self._typed(kind, obj, body) if self.typed_facts else (None, None)
            self._send_fitted(state, found.record(meta=meta, facts=facts))
        self.metrics.events.inc(state.target.resource, event_type)
        written = parse_time(attribution.server_time)
        if written is not None:
            self.metrics.lag.observe(state.target.resource, max(received_at - written, 0) / 1e6)

    def _send_fitted(self, state: WatchState, record: Record) -> None:
        """``record`` sent as it is if it fits the sink, else truncated (and said so)."""
        fitted = truncation.fit(record, self.sink.max_record_bytes)
        if fitted["truncated"]:
            self.metrics.truncated.labels(state.target.resource).inc()
            log.warning("%s %s/%s: %d bytes do not fit the sink; recorded truncated",
                        state.target.resource, record["namespace"], record["name"],
                        len(record["object"] or b""))
        self.sink.send(state.topic, fitted)

    def _redacted(self, raw: lean.RawObject) -> bytes:
        """The raw JSON redacted in place; the full parse when the spans cannot be located."""
        body = raw.body
        if self.splicer.usable:
            spans = (raw.default_spans() if self.splicer is lean.DEFAULT_SPANS
                     else self.splicer.spans(body))
            spliced = replaced(body, spans)
            if spliced is not None:
                return spliced
        obj = orjson.loads(body)
        self.redactor.apply(obj)
        return gojson.dumps(obj)

    def _typed(self, kind: str, obj: Obj | lean.RawObject, body: bytes | None) -> tuple[Any, Any]:
        """(meta, facts) for ``--typed-facts``, read from the object as stored (redacted)."""
        parsed = orjson.loads(body or b"{}") if isinstance(obj, lean.RawObject) else obj
        return extract_meta(parsed), extract_facts(kind, parsed)

    def _marker(self, state: WatchState, event_type: str, received_at: int, **marker: Any) -> None:
        record = records.marker_record(
            cluster=self.cluster, session=self.session, seq=self._next_seq(state.topic),
            event_type=event_type, resource=state.target.resource,
            api_version=state.target.api_version, kind=state.target.kind,
            received_at=received_at, marker=marker)
        self.sink.send(state.topic, record)
        self.metrics.events.inc(state.target.resource, event_type)

    def _next_seq(self, topic: str) -> int:
        seq = self._seq[topic]
        self._seq[topic] = seq + 1
        return seq


@functools.cache
def recorder_version() -> str:
    """The installed ktrace's version, as the session markers carry it: read from the
    package metadata, so a release cannot forget to change it."""
    try:
        return metadata.version("ktrace")
    except metadata.PackageNotFoundError:  # a source tree without an install
        return "0.0.0+source"


def time_us() -> int:
    return time.time_ns() // 1000



_HANDLERS = {
    inf.ListStarted: Writer._on_list_started,
    inf.Listed: Writer._on_listed,
    inf.Synced: Writer._on_synced,
    inf.WatchEvent: Writer._on_event,
    inf.Bookmark: Writer._on_bookmark,
    inf.Relist: Writer._on_relist,
    inf.Watching: Writer._on_watching,
    inf.Problem: Writer._on_problem,
}
