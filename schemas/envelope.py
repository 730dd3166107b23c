"""Avro encoding of an envelope-only Record (no ``meta``/``facts``/``marker``), by hand.

fastavro walks the schema for every record: ~75 µs for a Record with typed facts, still
~20 µs for the envelope alone. The recorder writes envelope-only records by default, whose
leading fields repeat for a whole session (cluster, session) and watch (apiVersion, kind,
resource): those are encoded once and reused. The bytes are fastavro's exactly (tests hold
the two equal); the field order is checked against the schema when this module loads.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

from schemas import repository

Record = dict[str, Any]

FIELDS = ("cluster", "session", "seq", "type", "inferred", "apiVersion", "kind", "resource",
          "namespace", "name", "uid", "resourceVersion", "resourceVersionNumber", "timeSource",
          "receivedAt", "component", "attribution", "object", "objectSize", "truncated",
          "meta", "facts", "marker")
_TRAILER = b"\x00\x00\x00"  # meta, facts, marker: the null branch of each union


def _schema() -> tuple[tuple[str, ...], tuple[str, ...]]:
    schema = repository.current().schema
    names = tuple(f["name"] for f in schema["fields"])
    event_type = next(f["type"] for f in schema["fields"] if f["name"] == "type")
    return names, tuple(event_type["symbols"])


_NAMES, _SYMBOLS = _schema()
if _NAMES != FIELDS:
    raise ImportError(f"schemas.envelope is written for the fields {FIELDS}, not {_NAMES}")
_TYPE_INDEX = {symbol: i for i, symbol in enumerate(_SYMBOLS)}


def _long(n: int) -> bytes:
    """Zig-zag varint, as Avro writes int and long: fourteen bits per table lookup, in one
    call (sizes and sequence numbers take one or two lookups; a receive time two and the
    varint of its bits above 28, which change every ~2 minutes, remembered)."""
    z = (n << 1) ^ (n >> 63)
    if z < _TABLE:
        return _SHORT[z]
    if z < _TWO_TABLES:
        return _CONTINUED[z & _LOW] + _SHORT[z >> _BITS]
    return _CONTINUED[z & _LOW] + _CONTINUED[z >> _BITS & _LOW] + _high_varint(z >> 2 * _BITS)


def _varint(n: int) -> bytes:
    """Unsigned varint (a bytes() per call cost ~1 µs, most of an encode: tables instead)."""
    if n < _TABLE:
        return _SHORT[n]
    if n < _TWO_TABLES:
        return _CONTINUED[n & _LOW] + _SHORT[n >> _BITS]
    return _CONTINUED[n & _LOW] + _CONTINUED[n >> _BITS & _LOW] + _varint(n >> 2 * _BITS)


_high_varint = lru_cache(maxsize=256)(_varint)


def _short_varint(n: int) -> bytes:
    return bytes((n & 0x7F | 0x80, n >> 7)) if n >= 0x80 else bytes((n,))


_BITS = 14
_TABLE, _LOW = 1 << _BITS, (1 << _BITS) - 1
_TWO_TABLES = _TABLE * _TABLE
#: The varint of every n < 2^14, and the same with the last byte's continuation bit set
#: (the low fourteen bits of a larger n, its two leading bytes).
_SHORT = [_short_varint(n) for n in range(_TABLE)]
_CONTINUED = [bytes((n & 0x7F | 0x80, n >> 7 | 0x80)) for n in range(_TABLE)]
_ONE_BYTE = _SHORT[0:128:2]  # the zig-zag varint of 0..63


def _string(text: str) -> bytes:
    data = text.encode()
    return _long(len(data)) + data


def _optional(text: str | None) -> bytes:
    if text is None:
        return b"\x00"
    data = text.encode()
    size = len(data)
    return (_PRESENT[size] if size < 64 else b"\x02" + _long(size)) + data


_PRESENT = [b"\x02" + size for size in _ONE_BYTE]  # union branch 1, then a short length


@lru_cache(maxsize=4096)
def _repeated(text: str | None) -> bytes:
    """``_optional`` of a value that recurs across objects (namespace, component, evidence)."""
    return _optional(text)


@lru_cache(maxsize=256)
def _session_part(cluster: str, session: str) -> bytes:
    return _string(cluster) + _string(session)


@lru_cache(maxsize=1024)
def _watch_part(event_type: str, inferred: bool, api_version: str, kind: str, resource: str) -> bytes:
    return (_long(_TYPE_INDEX[event_type]) + (b"\x01" if inferred else b"\x00")
            + _string(api_version) + _string(kind) + _string(resource))


@lru_cache(maxsize=16)
def _time_source(source: str) -> bytes:
    return _string(source)


def resource_version_number(rv: str | None) -> int | None:
    return int(rv) if rv and rv.isdigit() else None


def encode(record: Record) -> bytes:
    """The Avro body of an envelope-only ``record`` (its meta, facts and marker None)."""
    return encode_fields(*map(record.__getitem__, ROW_FIELDS))


def encode_fields(cluster: str, session: str, seq: int, event_type: str, inferred: bool,
                  api_version: str, kind: str, resource: str, namespace: str | None,
                  name: str | None, uid: str | None, resource_version: str | None,
                  rv_number: int | None, time_source: str, received_at: int,
                  component: str | None, attribution: str | None, body: bytes | None,
                  size: int, truncated: bool) -> bytes:
    """``encode`` of the record whose fields up to ``truncated`` are these, in order."""
    return _joined(_session_part(cluster, session), seq,
                   _watch_part(event_type, inferred, api_version, kind, resource),
                   namespace, name, uid, resource_version, rv_number, _time_source(time_source),
                   received_at, component, attribution, body, size, truncated)


class ObjectEncoder:
    """``encode_fields`` for the object records of one session's watch, as the writer
    makes them (received time, objectSize the body's length, not truncated): the leading
    parts are made once, and there is no call with every field by keyword and then by
    position (~2 µs of ~7 per record)."""

    __slots__ = ("_session", "_resource", "_watches")

    def __init__(self, cluster: str, session: str, resource: str) -> None:
        self._session, self._resource = _session_part(cluster, session), resource
        self._watches: dict[tuple[str, bool, str, str], bytes] = {}

    def encode(self, seq: int, event_type: str, inferred: bool, api_version: str, kind: str,
               namespace: str | None, name: str | None, uid: str | None,
               resource_version: str | None, received_at: int, component: str | None,
               attribution: str | None, body: bytes | None) -> bytes:
        key = (event_type, inferred, api_version, kind)
        watch = self._watches.get(key)
        if watch is None:
            watch = self._watches[key] = _watch_part(event_type, inferred, api_version, kind,
                                                     self._resource)
        return _joined(self._session, seq, watch, namespace, name, uid, resource_version,
                       resource_version_number(resource_version), _RECEIVED, received_at,
                       component, attribution, body, len(body) if body is not None else 0, False)


_RECEIVED = _time_source("received")


def _joined(session_part: bytes, seq: int, watch_part: bytes, namespace: str | None,
            name: str | None, uid: str | None, resource_version: str | None,
            rv_number: int | None, time_source_part: bytes, received_at: int,
            component: str | None, attribution: str | None, body: bytes | None,
            size: int, truncated: bool) -> bytes:
    if body is None:
        stored, length, size_part = b"\x00", b"", _long(size)
    else:  # the body is joined as it is; objectSize is its length unless it was truncated
        stored, length = b"\x02", _long(len(body))
        size_part = length if size == len(body) else _long(size)
    return b"".join((
        session_part, _long(seq), watch_part,
        _repeated(namespace), _optional(name), _optional(uid), _optional(resource_version),
        b"\x00" if rv_number is None else b"\x02" + _long(rv_number),
        time_source_part, _long(received_at),
        _repeated(component), _repeated(attribution),
        stored, length, body or b"", size_part,
        b"\x01" if truncated else b"\x00",
        _TRAILER,
    ))


# --- decoding: the replayer's side of the same bytes ----------------------------------------

class _NotEnvelope(Exception):
    """Not an envelope-only body as written above: fastavro reads it (or says why not)."""


#: An envelope row as ``decode_rows`` gives it: the Record's fields up to ``truncated``, in
#: its order, the object as the ``(start, end)`` of its bytes in the data decoded (or None):
#: a load takes the rows as they are, with no dict and no copy of the object per record.
ROW_FIELDS = FIELDS[:20]
OBJECT_AT = ROW_FIELDS.index("object")
_DECLINED = (_NotEnvelope, IndexError, UnicodeDecodeError)


def decode_at(data: bytes, pos: int) -> tuple[Record, int] | None:
    """The envelope-only record whose body starts at ``pos`` of ``data``, and where it ends;
    None for anything else (typed parts, a marker, bytes that do not decode), which the
    caller gives to fastavro: its dict exactly, at ~half of fastavro's time per record."""
    try:
        row, end = _decode(data, pos)
    except _DECLINED:
        return None
    return record_of(row, data), end


def decode_rows(data: bytes, pos: int, count: int) -> tuple[list[tuple], int]:
    """Up to ``count`` envelope rows (``ROW_FIELDS``) of the bodies that follow one another
    from ``pos`` of ``data``, and where the last one ends: fewer when a body is not
    envelope-only (``decode_at`` declines it too), which the caller gives to fastavro."""
    rows: list[tuple] = []
    append = rows.append
    try:
        for _ in range(count):
            row, pos = _decode(data, pos)
            append(row)
    except _DECLINED:
        pass
    return rows, pos


def record_of(row: tuple, data: bytes) -> Record:
    """The Record of an envelope row decoded from ``data`` (as fastavro reads it)."""
    record = dict(zip(ROW_FIELDS, row))
    span = row[OBJECT_AT]
    record["object"] = None if span is None else data[span[0]:span[1]]
    record["meta"] = record["facts"] = record["marker"] = None
    return record


#: The leading parts records repeat — a session's (cluster, session), a watch's (type,
#: inferred, apiVersion, kind, resource) — as their bytes and values, newest first: a body
#: that starts with one is read past it by one comparison. Entries are whole tuples (a
#: reader on another thread sees each whole or not at all).
_heads: list[tuple[bytes, tuple]] = []
_watches: list[tuple[bytes, tuple]] = []
_REPEATS = 8


def _decode(data: bytes, pos: int) -> tuple[tuple, int]:
    (cluster, session), pos = _read_repeated(data, pos, _heads, _read_head)
    seq, pos = _read_long(data, pos)
    (event_type, inferred, api_version, kind, resource), pos = _read_repeated(
        data, pos, _watches, _read_watch)
    namespace, pos = _read_optional(data, pos)
    name, pos = _read_optional(data, pos)
    uid, pos = _read_optional(data, pos)
    resource_version, pos = _read_optional(data, pos)
    rv_number, pos = _read_union(data, pos, _read_long)
    time_source, pos = _read_string(data, pos)
    received_at, pos = _read_long(data, pos)
    component, pos = _read_optional(data, pos)
    attribution, pos = _read_optional(data, pos)
    body, pos = _read_union(data, pos, _read_span)
    object_size, pos = _read_long(data, pos)
    truncated, pos = _read_boolean(data, pos)
    if data[pos:pos + 3] != _TRAILER:
        raise _NotEnvelope
    return (cluster, session, seq, event_type, inferred, api_version, kind, resource,
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
    type_index, pos = _read_long(data, pos)
    if not 0 <= type_index < len(_SYMBOLS):
        raise _NotEnvelope
    inferred, pos = _read_boolean(data, pos)
    api_version, pos = _read_string(data, pos)
    kind, pos = _read_string(data, pos)
    resource, pos = _read_string(data, pos)
    return (_SYMBOLS[type_index], inferred, api_version.decode(), kind.decode(),
            resource.decode()), pos


def _read_long(data: bytes, pos: int) -> tuple[int, int]:
    byte = data[pos]
    pos += 1
    n, shift = byte & 0x7F, 7
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        n |= (byte & 0x7F) << shift
        shift += 7
    return (n >> 1) ^ -(n & 1), pos


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
        size, pos = _read_long(data, pos)
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
