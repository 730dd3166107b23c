"""The lean decode of a watch event: only what the recorder reads, the object kept as bytes.

A full parse builds a dict tree of ~6 KB of JSON only to read a dozen fields of it and write
it back out. Here msgspec decodes each watch line into ``Head`` — identity, the metadata
attribution reads, the event's reporter, the status as raw bytes — and the object stays the
bytes the API server sent (redacted in place by ``recorder.splice``). Anything these
structures do not model (a field of an unexpected type) raises ``LeanMiss`` and the caller
falls back to the full parse; the parity tests prove both paths give the same records.
"""

from __future__ import annotations

from typing import Any

import msgspec

from recorder.attribution import Observed, event_reporter, manager_key
from recorder.splice import Span, SpanRedactor
from schemas.redaction import Redactor


class LeanMiss(Exception):
    """The object has a shape the lean structures do not model: parse it in full."""


_NULL = msgspec.Raw(b"null")  # a Raw field absent from the JSON


class _Line(msgspec.Struct, gc=False):
    type: str
    object: msgspec.Raw


class _ManagedField(msgspec.Struct, gc=False):
    manager: str | None = None
    operation: str | None = None
    subresource: str | None = None
    time: str | None = None
    fieldsV1: msgspec.Raw = _NULL


class _OwnerRef(msgspec.Struct, gc=False):
    kind: str | None = None
    name: str | None = None


class _Metadata(msgspec.Struct, gc=False):
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resourceVersion: str | None = None
    deletionTimestamp: str | None = None
    deletionGracePeriodSeconds: int | None = None
    finalizers: list[str] | None = None
    ownerReferences: list[_OwnerRef] | None = None
    managedFields: list[_ManagedField] | None = None


class _Spec(msgspec.Struct, gc=False):
    nodeName: str | None = None


class _Source(msgspec.Struct, gc=False):
    component: str | None = None
    host: str | None = None


class _Reference(msgspec.Struct, gc=False):
    uid: str | None = None


class Head(msgspec.Struct, gc=False):
    """The parts of an object the recorder reads (envelope, attribution, checkpoint)."""
    apiVersion: str | None = None
    kind: str | None = None
    metadata: _Metadata | None = None
    spec: _Spec | None = None
    status: msgspec.Raw = _NULL
    # Events (core/v1 and events.k8s.io/v1)
    reportingController: str | None = None
    reportingComponent: str | None = None
    source: _Source | None = None
    deprecatedSource: _Source | None = None


class _Condition(msgspec.Struct, gc=False):
    type: str | None = None
    status: str | None = None
    reason: str | None = None


class _Conditions(msgspec.Struct, gc=False):
    conditions: list[_Condition] | None = None


_LINE = msgspec.json.Decoder(_Line)
_HEAD = msgspec.json.Decoder(Head)
#: The default redaction paths (a writer with other paths locates its own), and ``Head``
#: merged with them: one decode reads the head and locates the values to redact.
DEFAULT_SPAN_PATHS = Redactor().paths
DEFAULT_SPANS = SpanRedactor(DEFAULT_SPAN_PATHS)
_MERGED = DEFAULT_SPANS.merged(Head)
_HEAD_AND_SPANS = msgspec.json.Decoder(_MERGED) if _MERGED is not None else None
_CONDITIONS = msgspec.json.Decoder(_Conditions)
_EMPTY_META = _Metadata()


class RawObject(msgspec.Struct, gc=False):
    """One object as the server sent it: ``body`` (its JSON bytes), its decoded ``head``,
    whether ``head`` also located the values at the default redaction paths
    (``default_spans``), and what attribution compares of it (``seen``: ``observed(head)``).
    A Struct, made for every event: its ``__init__`` is C."""

    body: bytes
    head: Head
    located: bool
    seen: Observed

    def default_spans(self) -> list[Span] | None:
        """The spans of ``DEFAULT_SPANS`` in ``body``, without decoding it again."""
        if self.located:
            return DEFAULT_SPANS.located(self.head, self.body)
        return DEFAULT_SPANS.spans(self.body)

    @property
    def metadata(self) -> _Metadata:
        return self.head.metadata or _EMPTY_META


Identity = tuple[str, str, str | None, str | None, str | None, str | None]


def identity(obj: dict[str, Any] | RawObject) -> Identity:
    """(apiVersion, kind, uid, resourceVersion, namespace, name) of a lean or parsed object."""
    if isinstance(obj, RawObject):
        head = obj.head
        md = head.metadata or _EMPTY_META
        return (head.apiVersion or "", head.kind or "", md.uid, md.resourceVersion,
                md.namespace, md.name)
    md = obj.get("metadata") or {}
    return (obj.get("apiVersion") or "", obj.get("kind") or "", md.get("uid"),
            md.get("resourceVersion"), md.get("namespace"), md.get("name"))


_TYPE_PREFIX = b'{"type":"'
_OBJECT_KEY = b'","object":'
#: The object events' types as the server writes them: a known one needs no unescaping.
_OBJECT_TYPES = {t.encode(): t for t in ("ADDED", "MODIFIED", "DELETED")}
_WHITESPACE = b" \t\n\r\x0b\x0c"  # what bytes.rstrip() strips
_CLOSE = ord("}")


def split_line(line: bytes) -> tuple[str, bytes]:
    """(event type, object bytes); msgspec.DecodeError/ValidationError for garbage.

    The API server writes ``{"type":"T","object":{…}}``: read in that form, the object is the
    bytes between its key and the final brace, and its own decode (``read_object``, which
    rejects trailing bytes) proves the line well-formed, so the line is not scanned twice.
    Other types (BOOKMARK, ERROR) and other forms are decoded whole."""
    end = line.find(_OBJECT_KEY, len(_TYPE_PREFIX), 40)
    if end > 0 and line.startswith(_TYPE_PREFIX):
        kind = _OBJECT_TYPES.get(line[len(_TYPE_PREFIX):end])
        stop = len(line)
        while line[stop - 1] in _WHITESPACE:  # rstrip() by index: one copy, not two
            stop -= 1
        if kind is not None and line[stop - 1] == _CLOSE:
            return kind, line[end + len(_OBJECT_KEY):stop - 1]
    event = _LINE.decode(line)
    return event.type, bytes(event.object)


def read_object(body: bytes) -> RawObject:
    """``body`` decoded lean; LeanMiss when it is not an object of a modelled shape."""
    if _HEAD_AND_SPANS is not None:
        try:
            head = _HEAD_AND_SPANS.decode(body)
            return RawObject(body, head, True, observed(head))
        except (msgspec.ValidationError, msgspec.DecodeError):
            pass  # not a modelled shape, or a value on a path of another type: the head alone
    try:
        head = _HEAD.decode(body)
        return RawObject(body, head, False, observed(head))
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise LeanMiss(str(exc)) from exc


def observed(head: Head) -> Observed:
    """What attribution compares, read from the lean structures (``attribution.observed``
    reads the same from a parsed dict; the parity tests hold the two equal). Observed's
    fields are given in order, not by keyword: it is made for every event."""
    md = head.metadata or _EMPTY_META
    kind = head.kind or ""
    if kind == "Event":
        return Observed(kind, md.uid or "", reporter=event_reporter(
            head.reportingController, _source_component(head), head.reportingComponent))
    status = bytes(head.status)
    owner = (md.ownerReferences or [None])[0]
    # each entry's owned fields digested as ``attribution.digest`` does (0 when absent)
    managers = {manager_key(e.manager, e.operation, e.subresource):
                (e.time or "", hash(owned) if (owned := bytes(e.fieldsV1)) != b"null" else 0)
                for e in md.managedFields or ()}
    grace = md.deletionGracePeriodSeconds
    return Observed(
        kind, md.uid or "", managers, hash(status) if status != b"null" else 0,
        md.deletionTimestamp, grace,
        head.spec.nodeName if kind == "Pod" and head.spec is not None else None,
        _disruption(status) if b'"DisruptionTarget"' in status else None,
        tuple(md.finalizers or ()),
        (owner.kind, owner.name) if owner is not None else None,
        grace == 0 and _finished(status))


def _finished(status: bytes) -> bool:
    """The status' phase is Succeeded or Failed, as the API server spells it (only read for a
    deletion with grace 0)."""
    return b'"phase":"Succeeded"' in status or b'"phase":"Failed"' in status


def _source_component(head: Head) -> str | None:
    """``(source or deprecatedSource or {}).get("component")``: an empty source counts as absent."""
    for source in (head.source, head.deprecatedSource):
        if source is not None and (source.component is not None or source.host is not None):
            return source.component
    return None


def _disruption(status: bytes) -> str | None:
    """The DisruptionTarget reason of a status that names that condition."""
    for cond in _CONDITIONS.decode(status).conditions or ():
        if cond.type == "DisruptionTarget" and cond.status == "True":
            return cond.reason or "unknown"
    return None
