"""``ktrace import``: captures made without the recorder, as Deliveries for the loader.

A capture is what ``kubectl get KIND --watch --output-watch-events -o json`` prints: watch
events ``{"type": …, "object": {…}}``, one per line or pretty-printed one after another
(plain objects, as printed without ``--output-watch-events``, are taken as ADDED/MODIFIED).
Such captures have no receive times, so each event's time is derived from the newest
timestamp inside its object (managedFields, conditions, container states, Event times,
deletionTimestamp − grace) and marked ``derived:<field>`` in ``raw_events.time_source``.
Server timestamps have 1 s precision, so derived times do too. ``kubectl get -o json``
Lists are taken item by item. Objects are redacted by the rules the recorder applies
(``schemas.redaction``): env values and last-applied configuration replaced, Secrets refused
(a counted ``secret_refused`` problem, nothing of them stored).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any, Iterator

import orjson

from transports.source import Delivery
from transports.locallog import layout
from schemas.codec import Record
from schemas.errors import DecodeError, KtraceError
from schemas.facts import Obj, parse_time
from schemas.kinds import resource_of
from schemas.records import object_record
from schemas.redaction import Redactor, is_refused

IMPORT_TOPIC_PREFIX = "import:"
WATCH_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED"})


class NothingImportable(KtraceError):
    """A capture file without a single Kubernetes object or watch event in it."""


class BadCaptureItem(DecodeError):
    """One item of a capture that cannot become a record; ``problem`` names why."""

    def __init__(self, problem: str, detail: str) -> None:
        super().__init__(detail)
        self.problem = problem


def capture_topic(path: str) -> str:
    """The tracking topic of a capture file: re-importing it resumes after what was loaded."""
    return IMPORT_TOPIC_PREFIX + os.path.realpath(path)


def read_capture(path: str, *, cluster: str, redactor: Redactor,
                 after: int | None = None) -> Iterator[Delivery]:
    """Deliveries for every object of one capture file, offsets = object index from 0 (a
    List counts each of its items), those up to ``after`` skipped (already loaded).
    Objects are redacted as the recorder redacts them; Secrets are refused."""
    topic = capture_topic(path)
    session = IMPORT_TOPIC_PREFIX + os.path.basename(path)
    clock = DerivedClock()
    seqs: Counter = Counter()
    events: list[tuple[str, Obj] | BadCaptureItem] = []
    for item in _objects(_read_text(path), clock):  # first pass: the clock sees every object
        if not isinstance(item, BadCaptureItem):
            clock.observe(item[1])
        events.append(item)
    fallback = clock.fallback(os.path.getmtime(path))
    captured = 0  # items that are Kubernetes objects or watch events, imported or not
    for index, item in enumerate(events):
        if isinstance(item, BadCaptureItem):
            captured += item.problem != "malformed_json"
            delivery = Delivery(topic, 0, index, None, item)
        elif is_refused(item[1]):
            captured += 1
            delivery = Delivery(topic, 0, index, None, _refused(item[1]))
        else:
            captured += 1
            received, source = clock.time_of(item[1], fallback)
            delivery = Delivery(topic, 0, index, _record(*item, redactor, cluster, session,
                                                         seqs, received, source))
        if after is None or index > after:
            yield delivery
    if captured == 0:
        raise NothingImportable(f"nothing importable in {path}: {_what_it_is(path)}")


def _refused(obj: Obj) -> BadCaptureItem:
    md = obj.get("metadata") or {}
    return BadCaptureItem("secret_refused", f"{obj.get('kind')} {md.get('namespace')}/"
                                            f"{md.get('name')}: not stored (never recorded)")


def _record(event_type: str, obj: Obj, redactor: Redactor, cluster: str, session: str,
            seqs: Counter, received: int, source: str) -> Record:
    redactor.apply(obj)
    kind = obj.get("kind") or ""
    resource = resource_of(kind)
    record = object_record(
        cluster=cluster, session=session, seq=seqs[resource], event_type=event_type,
        resource=resource, obj=obj, object_json=orjson.dumps(obj), received_at=received,
        time_source=source, component=newest_manager(obj), attribution="derived:managedFields")
    seqs[resource] += 1
    return record


def _objects(text: str, clock: "DerivedClock") -> Iterator[tuple[str, Obj] | BadCaptureItem]:
    """(event type, object) of every watch event, object or List item of a capture."""
    for item in split_json_items(text):
        members = [item]
        if isinstance(item, dict) and isinstance(item.get("items"), list) and "type" not in item:
            members = item["items"]  # `kubectl get -o json`: a List whose items are objects
            list_kind = (item.get("kind") or "").removesuffix("List")
            for member in members:
                if isinstance(member, dict) and list_kind and not member.get("kind"):
                    member["kind"] = list_kind  # a typed list (PodList) names it once
        for member in members:
            try:
                yield _watch_event(member, clock)
            except BadCaptureItem as exc:
                yield exc


def _what_it_is(path: str) -> str:
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head == layout.MAGIC:
        return ("it is an Avro object container file (a ktrace local-log segment?); replay "
                "a recording with `ktrace replay DIRECTORY`")
    if not head:
        return "the file is empty"
    return ("no item is a Kubernetes object or watch event; capture with `kubectl get KIND "
            "--watch --output-watch-events -o json` or `kubectl get KIND -o json`")


def split_json_items(text: str) -> Iterator[Obj | BadCaptureItem]:
    """Top-level JSON values of ``text``: a line at a time where lines are whole values
    (fast), else by incremental decoding; garbage is skipped to the next line starting '{'."""
    decoder, pos, size = json.JSONDecoder(), 0, len(text)
    while True:
        while pos < size and text[pos] in " \t\r\n":
            pos += 1
        if pos >= size:
            return
        eol = text.find("\n", pos)
        eol = size if eol < 0 else eol
        try:
            yield orjson.loads(text[pos:eol])
            pos = eol + 1
            continue
        except orjson.JSONDecodeError:
            pass
        try:
            value, pos = decoder.raw_decode(text, pos)
            yield value
        except json.JSONDecodeError as exc:
            yield BadCaptureItem("malformed_json",
                                 f"malformed JSON at line {exc.lineno}: {exc.msg}")
            nxt = text.find("\n{", pos)
            pos = size if nxt < 0 else nxt + 1


def _read_text(path: str) -> str:
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", errors="replace")


def _watch_event(item: Any, clock: "DerivedClock") -> tuple[str, Obj]:
    if isinstance(item, BadCaptureItem):
        raise item
    if not isinstance(item, dict):
        raise BadCaptureItem("malformed_json", f"not a JSON object: {type(item).__name__}")
    if "object" in item and "type" in item:
        event_type, obj = item["type"], item["object"]
        if event_type not in WATCH_TYPES:
            raise BadCaptureItem("watch_error", f"watch event {event_type}: {_status_message(obj)}")
    else:  # a bare object, as printed without --output-watch-events
        obj = item
        uid = (obj.get("metadata") or {}).get("uid")
        event_type = "MODIFIED" if clock.seen(uid) else "ADDED"
    if not isinstance(obj, dict) or not obj.get("kind"):
        raise BadCaptureItem("malformed_json", "watch event without an object kind")
    return event_type, obj


def _status_message(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get("message") or obj.get("reason") or "no message")
    return "no message"


class DerivedClock:
    """Times for events without receive times: the newest timestamp in the object, never
    earlier than the object's previous event (one object's events are in order). An object
    that carries no timestamp at all (a pasted stub) takes the newest time seen so far in
    the capture, or the capture's first time, or — in a capture without any — the file's
    modification time, each marked as such: never a made-up epoch."""

    def __init__(self) -> None:
        self._last: dict[str, int] = {}
        self._seen_uids: set[str | None] = set()
        self._first: int | None = None
        self._latest: int | None = None

    def seen(self, uid: str | None) -> bool:
        return uid in self._seen_uids

    def observe(self, obj: Obj) -> None:
        """First pass: remember the uid and the capture's earliest time."""
        self._seen_uids.add((obj.get("metadata") or {}).get("uid"))
        stamp, _ = newest_timestamp(obj)
        if stamp is not None and (self._first is None or stamp < self._first):
            self._first = stamp

    def fallback(self, mtime_s: float) -> tuple[int, str]:
        if self._first is not None:
            return self._first, "derived:capture-start"
        return int(mtime_s * 1_000_000), "derived:file-mtime"

    def time_of(self, obj: Obj, fallback: tuple[int, str]) -> tuple[int, str]:
        stamp, field = newest_timestamp(obj)
        uid = (obj.get("metadata") or {}).get("uid") or ""
        previous = self._last.get(uid)
        if previous is not None and (stamp is None or stamp < previous):
            stamp, field = previous, "previous"
        if stamp is None and self._latest is not None:
            stamp, field = self._latest, "capture-order"
        if stamp is None:
            stamp, source = fallback
        else:
            source = f"derived:{field}"
        self._last[uid] = stamp
        self._latest = stamp if self._latest is None else max(self._latest, stamp)
        return stamp, source


def newest_timestamp(obj: Obj) -> tuple[int | None, str | None]:
    """(µs, field name) of the newest time the object itself carries."""
    best: tuple[int | None, str | None] = (None, None)
    for field, value in _timestamps(obj):
        if value is not None and (best[0] is None or value > best[0]):
            best = (value, field)
    return best


def newest_manager(obj: Obj) -> str | None:
    """The manager of the newest managedFields entry: a capture's best guess at who made
    the change (writes that touch no managed field, like bindings, are not attributed)."""
    best, manager = None, None
    for entry in (obj.get("metadata") or {}).get("managedFields") or ():
        stamp = parse_time(entry.get("time"))
        if stamp is not None and (best is None or stamp >= best):
            best, manager = stamp, entry.get("manager")
    return manager


def _timestamps(obj: Obj) -> Iterator[tuple[str, int | None]]:
    md, status, spec = obj.get("metadata") or {}, obj.get("status") or {}, obj.get("spec") or {}
    yield "creationTimestamp", parse_time(md.get("creationTimestamp"))
    for entry in md.get("managedFields") or ():
        yield "managedFields", parse_time(entry.get("time"))
    deletion = parse_time(md.get("deletionTimestamp"))
    if deletion is not None:
        grace_us = (md.get("deletionGracePeriodSeconds") or 0) * 1_000_000
        yield "deletionTimestamp-grace", deletion - grace_us
    for cond in status.get("conditions") or () if isinstance(status, dict) else ():
        yield "conditions", parse_time(cond.get("lastTransitionTime"))
    yield "startTime", parse_time(status.get("startTime") if isinstance(status, dict) else None)
    for cs in _container_statuses(status):
        for key in ("state", "lastState"):
            for state in (cs.get(key) or {}).values():
                yield "containerStatuses", parse_time((state or {}).get("startedAt"))
                yield "containerStatuses", parse_time((state or {}).get("finishedAt"))
    if obj.get("kind") == "Event":
        for key in ("eventTime", "firstTimestamp", "lastTimestamp", "deprecatedLastTimestamp"):
            yield "eventTime", parse_time(obj.get(key))
        yield "eventTime", parse_time((obj.get("series") or {}).get("lastObservedTime"))
    if obj.get("kind") == "Lease":
        yield "renewTime", parse_time(spec.get("renewTime"))


def _container_statuses(status: Any) -> Iterator[dict]:
    if not isinstance(status, dict):
        return
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        yield from status.get(key) or ()
