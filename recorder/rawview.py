"""Where a ``msgspec.Raw`` lies in the bytes it was decoded from: the one place ktrace reads
a library's private memory layout.

A Raw decoded from a bytes object is a view into it: after the object header msgspec keeps
the owner (the bytes), then a pointer to the view's first byte, then its length. The pointer
minus the address of the bytes' data is the value's offset in the body, which is how
``recorder.splice`` finds the values it redacts without parsing the body into Python objects.

``USABLE`` says whether the layout is the one measured (msgspec 0.18.6 to 0.23, the range
pyproject.toml allows): it is checked at import on a known document. When it is False the
writer redacts by parsing every object in full (the same records, slower) and says so, and
tests/test_recorder_rawview.py fails, so a msgspec that moves the pointer is noticed.
"""

from __future__ import annotations

import ctypes
import sys

import msgspec

_WORD = ctypes.sizeof(ctypes.c_size_t)  # 8: checked with the layout
#: Machine words from address 8 on: ``_WORDS[(a - 8) >> 3]`` is the word at ``a`` (an index
#: into one pointer is ~5x cheaper than a ctypes object made per read).
_WORDS = ctypes.cast(_WORD, ctypes.POINTER(ctypes.c_size_t))
#: The view's pointer follows the object header and the owner: its offset, for _WORDS (from 8).
_POINTER = sys.getsizeof(object()) + _WORD - 8
_BYTES_HEADER = sys.getsizeof(b"") - 1  # where a bytes object's data starts (CPython)


def address(raw: msgspec.Raw) -> int:
    """The address of ``raw``'s first byte."""
    return _WORDS[(id(raw) + _POINTER) >> 3]


def bytes_address(data: bytes) -> int:
    """The address of ``data``'s first byte (a bytes object, not a view)."""
    return id(data) + _BYTES_HEADER


def _layout_is_the_measured_one() -> bool:
    doc = b'{"a":[1,{"b":"xy"}]}'
    root = msgspec.json.decode(doc, type=msgspec.Raw)
    inner = msgspec.json.decode(msgspec.json.decode(root, type=dict[str, msgspec.Raw])["a"],
                                type=list[msgspec.Raw])[1]
    value = msgspec.json.decode(inner, type=dict[str, msgspec.Raw])["b"]
    return (_WORD == 8 and _POINTER % _WORD == 0 and address(root) == bytes_address(doc)
            and address(value) - address(root) == doc.index(b'"xy"') and len(value) == 4)


USABLE = _layout_is_the_measured_one()
