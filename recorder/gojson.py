"""A parsed object written as the API server writes it: orjson's JSON with Go's escapes.

The recorder keeps a watched object as the bytes the server sent. An object it parsed (a
LIST's items, a shape the lean decode does not model) is written back with ``dumps``, and its
parts digested from it, so one object is stored and compared alike whichever way it came.
Go's encoder writes ``&``, ``<``, ``>``, U+2028 and U+2029 as ``\\u`` escapes where orjson
writes the characters; both write every other character alike.
"""

from __future__ import annotations

from typing import Any

import orjson

_GO_ESCAPES = tuple((char.encode(), f"\\u{ord(char):04x}".encode()) for char in "&<>\u2028\u2029")


def dumps(value: Any) -> bytes:
    data = orjson.dumps(value)
    for char, escape in _GO_ESCAPES:
        if char in data:
            data = data.replace(char, escape)
    return data
