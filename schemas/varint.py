"""Avro's zig-zag varint (``int`` and ``long``), the one codec of every hand-written Avro
reader and writer here: the envelope's bodies and the local log's container format."""

from __future__ import annotations

from functools import lru_cache


def encode_long(n: int) -> bytes:
    """Zig-zag varint of ``n``: fourteen bits per table lookup, in one call (sizes and
    sequence numbers take one or two lookups; a receive time two and the varint of its bits
    above 28, which change every ~2 minutes, remembered). A ``bytes()`` per call cost ~1 µs,
    most of an envelope's encoding: tables instead."""
    z = (n << 1) ^ (n >> 63)
    if z < _TABLE:
        return _SHORT[z]
    if z < _TWO_TABLES:
        return _CONTINUED[z & _LOW] + _SHORT[z >> _BITS]
    return _CONTINUED[z & _LOW] + _CONTINUED[z >> _BITS & _LOW] + _high_varint(z >> 2 * _BITS)


def read_long(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """The zig-zag varint at ``pos`` and where the next value starts; IndexError when
    ``data`` ends first, ValueError for more than 64 bits."""
    byte = data[pos]
    pos += 1
    n, shift = byte & 0x7F, 7
    while byte & 0x80:
        if shift > 63:
            raise ValueError("varint too long")
        byte = data[pos]
        pos += 1
        n |= (byte & 0x7F) << shift
        shift += 7
    return (n >> 1) ^ -(n & 1), pos


def _varint(n: int) -> bytes:
    """Unsigned varint of ``n``, by the tables."""
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
#: The zig-zag varint of 0..63: one byte each.
ONE_BYTE = _SHORT[0:128:2]
