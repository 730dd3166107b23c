"""The envelope — a Record's fields up to ``truncated`` — declared once (``Envelope``), and
its Avro encoding and decoding by hand.

Every writer, reader, batch and loader holds the envelope as an ``Envelope``, by field name;
the declaration is checked against the Record schema when this module loads (names, order,
which fields are nullable), so a schema change it does not follow fails at import.

fastavro walks the schema for every record: ~75 µs for a Record with typed facts, still
~20 µs for the envelope alone. The recorder writes envelope-only records by default, whose
leading fields repeat for a whole session (cluster, session) and watch (type, inferred,
apiVersion, kind, resource): those are encoded once and reused. The bytes are fastavro's
exactly (tests hold the two equal).
"""

from __future__ import annotations

import typing
from functools import lru_cache
from typing import Any, Callable

import msgspec

from schemas import repository
from schemas.varint import ONE_BYTE, encode_long, read_long

Record = dict[str, Any]
Span = tuple[int, int]


class Envelope(msgspec.Struct, array_like=True, gc=False, rename="camel"):
    """An event's envelope, its fields in the Record schema's order (their schema names are
    the camelCase of these). Decoded from bytes, ``object`` is the ``(start, end)`` of the
    object's bytes in them (a load takes it without a copy); built, it is the bytes."""

    cluster: str
    session: str
    seq: int
    type: str
    inferred: bool
    api_version: str
    kind: str
    resource: str
    namespace: str | None
    name: str | None
    uid: str | None
    resource_version: str | None
    resource_version_number: int | None
    time_source: str
    received_at: int
    component: str | None
    attribution: str | None
    object: bytes | Span | None
    object_size: int
    truncated: bool

    def record(self, data: bytes = b"", *, meta: Any = None, facts: Any = None,
               marker: Any = None) -> Record:
        """The Record of this envelope and its typed parts, as fastavro reads it (the
        object's bytes taken from ``data`` when the envelope was decoded from them)."""
        record = dict(zip(NAMES, msgspec.structs.astuple(self)))
        span = self.object
        if isinstance(span, tuple):
            record["object"] = data[span[0]:span[1]]
        record["meta"], record["facts"], record["marker"] = meta, facts, marker
        return record

    @classmethod
    def of(cls, record: Record) -> Envelope:
        """The envelope of a Record; a field it lacks takes the schema's default."""
        return cls(*[record[name] if default is _REQUIRED else record.get(name, default)
                     for name, default in _DEFAULTS])


#: The Record's keys of the envelope's fields, in order.
NAMES = tuple(f.encode_name for f in msgspec.structs.fields(Envelope))
#: The Record's fields after the envelope, each optional (null when absent).
TYPED_PARTS = ("meta", "facts", "marker")
_REQUIRED = object()


def _checked_schema() -> tuple[tuple[tuple[str, Any], ...], tuple[str, ...]]:
    """Each envelope field's schema default, and the event types; ImportError when
    ``Envelope`` no longer follows the Record schema."""
    fields = repository.current().schema["fields"]
    names = tuple(f["name"] for f in fields)
    if names != NAMES + TYPED_PARTS:
        raise ImportError(f"schemas.envelope.Envelope declares {NAMES + TYPED_PARTS}; "
                          f"the Record schema has {names}")
    for declared, field in zip(msgspec.structs.fields(Envelope), fields):
        nullable = isinstance(field["type"], list) and "null" in field["type"]
        if nullable != _optional_type(declared.type):
            raise ImportError(f"schemas.envelope.Envelope.{declared.name} is "
                              f"{'not ' * nullable}declared optional; the Record schema's "
                              f"{field['name']} is {'' if nullable else 'not '}nullable")
    event_type = next(f["type"] for f in fields if f["name"] == "type")
    return (tuple((f["name"], f.get("default", _REQUIRED)) for f in fields[:len(NAMES)]),
            tuple(event_type["symbols"]))


def _optional_type(annotation: Any) -> bool:
    return type(None) in typing.get_args(annotation)


_DEFAULTS, _SYMBOLS = _checked_schema()
_TYPE_INDEX = {symbol: i for i, symbol in enumerate(_SYMBOLS)}
_TRAILER = b"\x00" * len(TYPED_PARTS)  # the null branch of each typed part's union


# --- encoding -------------------------------------------------------------------------------

def _string(text: str) -> bytes:
    data = text.encode()
    return encode_long(len(data)) + data


def _optional(text: str | None) -> bytes:
    if text is None:
        return b"\x00"
    data = text.encode()
    size = len(data)
    return (_PRESENT[size] if size < 64 else b"\x02" + encode_long(size)) + data


_PRESENT = [b"\x02" + size for size in ONE_BYTE]  # union branch 1, then a short length


@lru_cache(maxsize=4096)
def _repeated(text: str | None) -> bytes:
    """``_optional`` of a value that recurs across objects (namespace, component, evidence)."""
    return _optional(text)


@lru_cache(maxsize=256)
def _session_part(cluster: str, session: str) -> bytes:
    return _string(cluster) + _string(session)


@lru_cache(maxsize=1024)
def _watch_part(event_type: str, inferred: bool, api_version: str, kind: str, resource: str) -> bytes:
    return (encode_long(_TYPE_INDEX[event_type]) + (b"\x01" if inferred else b"\x00")
            + _string(api_version) + _string(kind) + _string(resource))


@lru_cache(maxsize=16)
def _time_source(source: str) -> bytes:
    return _string(source)


_RECEIVED = _time_source("received")


def resource_version_number(rv: str | None) -> int | None:
    return int(rv) if rv and rv.isdigit() else None


def encode_record(record: Record) -> bytes:
    """The Avro body of an envelope-only ``record`` (its meta, facts and marker None)."""
    return encode(Envelope.of(record))


def encode(e: Envelope) -> bytes:
    """The Avro body of the envelope-only record of ``e`` (its object the bytes)."""
    return _body(e, _session_part(e.cluster, e.session),
                 _watch_part(e.type, e.inferred, e.api_version, e.kind, e.resource))


class WatchEnvelopes:
    """The envelopes of one session's watch as the recorder makes them (received time,
    objectSize the body's length, not truncated), and their bodies: the leading parts are
    encoded once per session and watch, and the call that makes one takes its fields in
    the declared order — by keyword, the call and msgspec's construction took ~40k
    instructions per event, ~7 % of the recorder's."""

    __slots__ = ("_cluster", "_session", "_resource", "_session_part", "_watches")

    def __init__(self, cluster: str, session: str, resource: str) -> None:
        self._cluster, self._session, self._resource = cluster, session, resource
        self._session_part = _session_part(cluster, session)
        self._watches: dict[tuple[str, bool, str, str], bytes] = {}

    def make(self, seq: int, event_type: str, inferred: bool, api_version: str, kind: str,
             namespace: str | None, name: str | None, uid: str | None,
             resource_version: str | None, received_at: int, component: str | None,
             attribution: str | None, body: bytes | None) -> Envelope:
        return Envelope(self._cluster, self._session, seq, event_type, inferred, api_version,
                        kind, self._resource, namespace, name, uid, resource_version,
                        resource_version_number(resource_version), "received", received_at,
                        component, attribution, body, len(body) if body is not None else 0,
                        False)

    def encode(self, e: Envelope) -> bytes:
        """``encode(e)`` of an envelope this made."""
        key = (e.type, e.inferred, e.api_version, e.kind)
        watch = self._watches.get(key)
        if watch is None:
            watch = self._watches[key] = _watch_part(*key, self._resource)
        return _body(e, self._session_part, watch)


def _body(e: Envelope, session_part: bytes, watch_part: bytes) -> bytes:
    body: Any = e.object
    if body is None:
        stored, length, size_part = b"\x00", b"", encode_long(e.object_size)
    else:  # the body is joined as it is; objectSize is its length unless it was truncated
        stored, length = b"\x02", encode_long(len(body))
        size_part = length if e.object_size == len(body) else encode_long(e.object_size)
    rv_number = e.resource_version_number
    return b"".join((
        session_part, encode_long(e.seq), watch_part, _repeated(e.namespace), _optional(e.name), _optional(e.uid),
        _optional(e.resource_version),
        b"\x00" if rv_number is None else b"\x02" + encode_long(rv_number),
        _RECEIVED if e.time_source == "received" else _time_source(e.time_source),
        encode_long(e.received_at),
        _repeated(e.component), _repeated(e.attribution),
        stored, length, body or b"", size_part,
        b"\x01" if e.truncated else b"\x00",
        _TRAILER,
    ))


# --- decoding: the replayer's side of the same bytes ----------------------------------------

class _NotEnvelope(Exception):
    """Not an envelope-only body as written above: fastavro reads it (or says why not)."""


_DECLINED = (_NotEnvelope, IndexError, ValueError)  # ValueError: also UnicodeDecodeError


def decode_at(data: bytes, pos: int) -> tuple[Record, int] | None:
    """The envelope-only record whose body starts at ``pos`` of ``data``, and where it ends;
    None for anything else (typed parts, a marker, bytes that do not decode), which the
    caller gives to fastavro: its dict exactly, at ~half of fastavro's time per record."""
    try:
        envelope, end = _decode(data, pos)
    except _DECLINED:
        return None
    return envelope.record(data), end


def decode_run(data: bytes, pos: int, count: int) -> tuple[list[Envelope], int]:
    """Up to ``count`` envelopes of the bodies that follow one another from ``pos`` of
    ``data`` (their objects as spans in ``data``), and where the last one ends: fewer when
    a body is not envelope-only (``decode_at`` declines it too), which the caller gives to
    fastavro."""
    envelopes: list[Envelope] = []
    append = envelopes.append
    try:
        for _ in range(count):
            envelope, pos = _decode(data, pos)
            append(envelope)
    except _DECLINED:
        pass
    return envelopes, pos


#: The leading parts records repeat — a session's (cluster, session), a watch's (type,
#: inferred, apiVersion, kind, resource) — as their bytes and values, newest first: a body
#: that starts with one is read past it by one comparison. Entries are whole tuples (a
#: reader on another thread sees each whole or not at all).
_heads: list[tuple[bytes, tuple]] = []
_watches: list[tuple[bytes, tuple]] = []
_REPEATS = 8


def _decode(data: bytes, pos: int) -> tuple[Envelope, int]:
    (cluster, session), pos = _read_repeated(data, pos, _heads, _read_head)
    seq, pos = read_long(data, pos)
    (event_type, inferred, api_version, kind, resource), pos = _read_repeated(
        data, pos, _watches, _read_watch)
    namespace, pos = _read_optional(data, pos)
    name, pos = _read_optional(data, pos)
    uid, pos = _read_optional(data, pos)
    resource_version, pos = _read_optional(data, pos)
    rv_number, pos = _read_union(data, pos, read_long)
    time_source, pos = _read_string(data, pos)
    received_at, pos = read_long(data, pos)
    component, pos = _read_optional(data, pos)
    attribution, pos = _read_optional(data, pos)
    body, pos = _read_union(data, pos, _read_span)
    object_size, pos = read_long(data, pos)
    truncated, pos = _read_boolean(data, pos)
    if data[pos:pos + 3] != _TRAILER:
        raise _NotEnvelope
    # read and made in the declared order, which the schema's is (checked at import): by
    # keyword, msgspec takes ~4x the instructions to make one
    return Envelope(cluster, session, seq, event_type, inferred, api_version, kind, resource,
                    namespace, name, uid, resource_version, rv_number, time_source.decode(),
                    received_at, component, attribution, body, object_size, truncated), pos + 3


def _read_repeated(data: bytes, pos: int, seen: list[tuple[bytes, tuple]],
                   read: Callable[[bytes, int], tuple[tuple, int]]) -> tuple[tuple, int]:
    for prefix, values in seen:
        if data.startswith(prefix, pos):
            return values, pos + len(prefix)
    values, end = read(data, pos)
    seen.insert(0, (data[pos:end], values))
    del seen[_REPEATS:]
    return values, end


def _read_head(data: bytes, pos: int) -> tuple[tuple, int]:
    cluster, pos = _read_string(data, pos)
    session, pos = _read_string(data, pos)
    return (cluster.decode(), session.decode()), pos


def _read_watch(data: bytes, pos: int) -> tuple[tuple, int]:
    type_index, pos = read_long(data, pos)
    if not 0 <= type_index < len(_SYMBOLS):
        raise _NotEnvelope
    inferred, pos = _read_boolean(data, pos)
    api_version, pos = _read_string(data, pos)
    kind, pos = _read_string(data, pos)
    resource, pos = _read_string(data, pos)
    return (_SYMBOLS[type_index], inferred, api_version.decode(), kind.decode(),
            resource.decode()), pos


def _read_bytes(data: bytes, pos: int) -> tuple[bytes, int]:
    (start, end), pos = _read_span(data, pos)
    return data[start:end], pos


def _read_span(data: bytes, pos: int) -> tuple[tuple[int, int], int]:
    """Where the Avro ``bytes`` at ``pos`` lie in ``data``, and where the next value starts."""
    size = data[pos]
    if size < 0x80:  # a short length (even: not negative): most strings
        if size & 1:
            raise _NotEnvelope
        size, pos = size >> 1, pos + 1
    else:
        size, pos = read_long(data, pos)
        if size < 0:
            raise _NotEnvelope
    end = pos + size
    if end > len(data):
        raise _NotEnvelope
    return (pos, end), end


_read_string = _read_bytes  # decoded by the caller, once the record is whole


def _read_optional(data: bytes, pos: int) -> tuple[str | None, int]:
    branch = data[pos]
    if branch == 0:
        return None, pos + 1
    if branch != 2:
        raise _NotEnvelope
    size = data[pos + 1]
    if size < 0x80 and not size & 1:  # a short length: most strings, read here
        start = pos + 2
        end = start + (size >> 1)
        if end > len(data):
            raise _NotEnvelope
        return data[start:end].decode(), end
    raw, end = _read_bytes(data, pos + 1)
    return raw.decode(), end


def _read_union(data: bytes, pos: int, read: Callable[[bytes, int], tuple[Any, int]]
                ) -> tuple[Any, int]:
    """A ``["null", T]`` union: None, or the T that ``read`` reads."""
    branch = data[pos]
    if branch == 0:
        return None, pos + 1
    return read(data, _present(branch, pos))


def _present(branch: int, pos: int) -> int:
    """Past a union's index that names its second branch (the value)."""
    if branch != 2:
        raise _NotEnvelope
    return pos + 1


def _read_boolean(data: bytes, pos: int) -> tuple[bool, int]:
    byte = data[pos]
    if byte > 1:
        raise _NotEnvelope
    return byte == 1, pos + 1
