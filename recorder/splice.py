"""Redaction in place on an object's raw JSON: the values at the redaction paths are found
as byte spans and replaced, every other byte of the body stays as it is.

The paths (``schemas.redaction``) are merged into one trie, and the trie into one nested
msgspec type (``Node.compile``): one decode of the body reads exactly the values on the
paths, as ``msgspec.Raw`` views, and skips everything else in C. A Raw is a view into the
buffer it was decoded from, so its position is its address minus the buffer's
(``recorder.rawview``, the one reader of msgspec's private layout; ``SpanRedactor.usable``
is False — the writer parses in full — if a msgspec version lays it out otherwise). The
rules are those of ``Redactor.apply``: a value at a path is replaced by
``"ktrace:redacted"`` unless it is null or already redacted; a path under a replaced value
finds nothing; a value of a type the paths do not expect (a string where a path goes
deeper) makes ``spans`` None, and the writer uses the full parse.

The first list along a path (``spec.containers``) is read as one Raw and its redacted bytes
are remembered by its bytes (``Memo``): an object's containers rarely change between its
versions, and a Deployment's template repeats in its ReplicaSets, so most objects need one
lookup there instead of a walk over every ``env`` value.
"""

from __future__ import annotations

import keyword
import re
import threading
import typing
from typing import Any, Callable

import msgspec
import msgspec.structs

from recorder import rawview
from recorder.rawview import address, bytes_address
from schemas.redaction import REDACTED, Segment

_DICT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_REPLACEMENT = msgspec.json.encode(REDACTED)
_REPLACEMENT_SIZE = len(_REPLACEMENT)
#: The longest REDACTED can be written (every character a \uXXXX escape): a longer value,
#: such as a last-applied-configuration, is not decoded to be compared with it.
_ESCAPED_MAX = 6 * len(REDACTED) + 2
_QUOTE = ord('"')
#: begin, end (replaced by ``_REPLACEMENT``), or begin, end, the bytes that replace them
Span = tuple[int, int] | tuple[int, int, bytes]
_OPEN_LIST = ord("[")
_NUMBERED = re.compile(r"k\d+")


class Node:
    """One step of the merged paths, typed for msgspec: the whole tree of paths becomes one
    nested type, so one decode of the body reads exactly the values on the paths (Raw at the
    ends) and skips everything else in C. A step that mixes keys with ``[*]``/``[N]`` stays
    Raw and is walked by decoding it on the way (``_items``)."""

    __slots__ = ("leaf", "children", "keys", "attrs", "every", "indexes", "shape", "type",
                 "decoder", "collect", "memo")

    def __init__(self) -> None:
        self.leaf = False
        self.children: dict[Segment, Node] = {}
        self.memo: Memo | None = None

    def compile(self, in_list: bool = False, *, in_parent: bool = False) -> Any:
        """``in_list``: a step below a ``[*]``/``[N]``, whose value is never remembered on
        its own (the list above it is); ``in_parent``: a field of its parent's Struct (the
        root is decoded on its own, never remembered)."""
        self.keys = [(arg, child) for (kind, arg), child in self.children.items() if kind == "key"]
        self.every = self.children.get(("all", None))
        self.indexes = [(arg, child) for (kind, arg), child in self.children.items() if kind == "index"]
        below_list = in_list or self.every is not None or bool(self.indexes)
        for child in self.children.values():
            child.compile(below_list, in_parent=True)
        if self.leaf or not self.children:
            self.shape, self.type = "raw", msgspec.Raw
        elif self.keys and self.every is None and not self.indexes:
            self.attrs = [_attribute(key, i) for i, (key, _) in enumerate(self.keys)]
            fields = [(a, child.optional(), None) for a, (_, child) in zip(self.attrs, self.keys)]
            self.shape = "keys"
            self.type = msgspec.defstruct("Wanted", fields, rename=_renamed(self), gc=False)
        elif self.every is not None and not self.keys and not self.indexes:
            item = self.every.optional()
            self.shape, self.type = "every", list[item] | dict[str, item] | None
        else:
            self.shape, self.type = "walk", msgspec.Raw
        self.decoder = msgspec.json.Decoder(self.type)
        self.collect = _COLLECTORS[self.shape](self)
        if self.shape == "every" and in_parent and not in_list:
            self.memo = Memo()
            self.collect = _memo_collector(self)
        return self.type

    def optional(self) -> Any:
        """The type of this step's value in its parent's Struct."""
        if self.memo is not None:
            return msgspec.Raw  # read whole, its redaction remembered
        return self.type if self.shape in ("raw", "walk", "every") else self.type | None


class Memo:
    """Redacted bytes by original bytes, first in first out within ``budget`` bytes (keys
    and values); ``b""`` stands for "nothing to replace"."""

    def __init__(self, budget: int = 8 << 20) -> None:
        self._redacted: dict[bytes, bytes] = {}
        self._budget, self._size = budget, 0
        self._lock = threading.Lock()  # writers of several recordings may share a Memo
        self.get = self._redacted.get

    def put(self, part: bytes, redacted: bytes) -> None:
        with self._lock:
            if part in self._redacted:
                return
            self._redacted[part] = redacted
            self._size += len(part) + len(redacted)
            while self._size > self._budget:
                oldest = next(iter(self._redacted))
                self._size -= len(oldest) + len(self._redacted.pop(oldest))


def _attribute(key: str, index: int) -> str:
    """The Struct attribute of a wanted key: the key itself when it is a plain name (so it
    can merge with the same field of another Struct, ``SpanRedactor.merged``), else ``k<N>``."""
    plain = key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("_")
    return key if plain and not _NUMBERED.fullmatch(key) else f"k{index}"


def _renamed(node: Node) -> dict[str, str]:
    return {attr: key for attr, (key, _) in zip(node.attrs, node.keys) if attr != key}


def _merged_type(base: Any, node: Node) -> Any:
    """The Struct type ``base`` with ``node``'s wanted keys as more fields (a key that is
    also a field of ``base`` merged into it, both Structs); None when they do not fit."""
    if node.shape != "keys":
        return None
    wanted = {key: (attr, child) for attr, (key, child) in zip(node.attrs, node.keys)}
    fields: list[tuple[str, Any, Any]] = []
    for info in msgspec.structs.fields(base):
        if info.encode_name != info.name:
            return None
        if info.name not in wanted:
            fields.append((info.name, info.type, info.default))
            continue
        attr, child = wanted.pop(info.name)
        inner = [t for t in typing.get_args(info.type) if isinstance(t, type)
                 and issubclass(t, msgspec.Struct)]
        merged = _merged_type(inner[0], child) if attr == info.name and len(inner) == 1 else None
        if merged is None or info.default is not None:
            return None
        fields.append((info.name, merged | None, None))
    fields += [(attr, child.optional(), None) for attr, child in wanted.values()]
    return msgspec.defstruct(base.__name__, fields, rename=_renamed(node), gc=False)


class SpanRedactor:
    """``apply(body) → body`` with the values at ``paths`` (parsed segments) redacted."""

    usable = rawview.USABLE

    def __init__(self, paths: list[list[Segment]]) -> None:
        self.root = Node()
        for path in paths:
            node = self.root
            for segment in path:
                node = node.children.setdefault(segment, Node())
            node.leaf = True
        self.root.compile()

    def spans(self, body: bytes) -> list[Span] | None:
        """Byte spans of the values to replace; None when the body does not have the shape
        the paths expect (then only the full parse can apply them as ``Redactor`` does)."""
        if not self.root.children:
            return []
        if type(body) is not bytes:
            body = bytes(body)  # offsets are taken from the bytes object's own buffer
        try:
            tree = self.root.decoder.decode(body)
        except (msgspec.ValidationError, msgspec.DecodeError):
            # Some value on a path is not of the type the paths expect there (a string where
            # a path goes deeper): Redactor handles every such case; parse in full.
            return None
        return self.located(tree, body)

    def merged(self, base: Any) -> Any:
        """A Struct type reading what ``base`` reads and what the paths locate, so one decode
        serves both (``located`` takes its value); None when the two do not fit together
        (a path through a field ``base`` reads as a whole)."""
        return _merged_type(base, self.root) if self.usable and self.root.children else None

    def located(self, tree: Any, body: bytes) -> list[Span] | None:
        """The spans to replace, from ``tree``: ``body`` decoded as the paths' type, or as a
        ``merged`` one; None as for ``spans``."""
        found: list[Span] = []
        try:
            if tree is not None:
                self.root.collect(tree, bytes_address(body), found)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return None  # a value below the paths not of the type they expect (spans())
        return _to_replace(found, body)

    def apply(self, body: bytes) -> bytes | None:
        """``body`` with the located values replaced (the same object if nothing matched);
        None when ``spans`` is."""
        return replaced(body, self.spans(body))


def _to_replace(found: list[Span], body: bytes) -> list[Span]:
    """``found`` without the values that stay as they are (``_kept``). Most values are
    strings shorter than the replacement and not null: never kept, never looked at."""
    return [span for span in found
            if _REPLACEMENT_SIZE > span[1] - span[0] != 4 or not _kept(body, span[0], span[1])]


def replaced(body: bytes, spans: list[Span] | None) -> bytes | None:
    """``body`` with the values at ``spans`` replaced; None when ``spans`` is."""
    if not spans:
        return body if spans is not None else None
    start, pieces = 0, []
    for span in sorted(spans):
        if span[0] >= start:  # else inside a value already replaced
            pieces += (body[start:span[0]], span[2] if len(span) == 3 else _REPLACEMENT)
            start = span[1]
    pieces.append(body[start:])
    return b"".join(pieces)


Collect = Callable[[Any, int, list[Span]], None]


def _visit(child: Node) -> Collect:
    """What to do with a value found at ``child``: a span if it ends a path, else go on."""
    return _leaf if child.leaf else child.collect


def _keys_collector(node: Node) -> Collect:
    """A Struct of the wanted keys: visit each one present (fields are None when absent)."""
    visits = [(attr, _visit(child)) for attr, (_, child) in zip(node.attrs, node.keys)]

    def collect(value: Any, base: int, found: list[Span]) -> None:
        for attr, visit in visits:
            item = getattr(value, attr)
            if item is not None:
                visit(item, base, found)
    return collect


def _every_collector(node: Node) -> Collect:
    """``[*]``: every item of a list, every value of a mapping."""
    visit = _visit(node.every)

    def collect(value: Any, base: int, found: list[Span]) -> None:
        for item in value.values() if type(value) is dict else value:
            if item is not None:
                visit(item, base, found)
    return collect


def _memo_collector(node: Node) -> Collect:
    """The first list along a path, read as one Raw: its redacted bytes as remembered, else
    found by decoding and walking it (a value of an unexpected type raises, see spans())."""
    memo, decode, walk = node.memo, node.decoder.decode, node.collect
    assert memo is not None

    def collect(value: msgspec.Raw, base: int, found: list[Span]) -> None:
        part = bytes(value)
        redacted = memo.get(part)
        if redacted is None:
            inner: list[Span] = []
            tree = decode(part)
            if tree is not None:
                walk(tree, bytes_address(part), inner)
            spans = _to_replace(inner, part)
            redacted = replaced(part, spans) if spans else b""
            memo.put(part, redacted)
        if redacted:
            begin = address(value) - base
            found.append((begin, begin + len(part), redacted))
    return collect


def _walk_collector(node: Node) -> Collect:
    """Keys mixed with ``[*]``/``[N]``: decode this value on the way (``_items``)."""
    def collect(value: Any, base: int, found: list[Span]) -> None:
        for child, item in _items(value, node):
            if child.shape in ("keys", "every"):
                item = child.decoder.decode(item)  # ValidationError: see spans()
            _visit(child)(item, base, found)
    return collect


def _no_collector(node: Node) -> Collect:
    return _leaf


def _leaf(value: msgspec.Raw, base: int, found: list[Span]) -> None:
    """A value at a path: its span; ``_kept`` then leaves out what stays as it is."""
    begin = address(value) - base
    found.append((begin, begin + len(value)))


def _kept(body: bytes, begin: int, end: int) -> bool:
    """Whether the value at ``begin`` stays: null or already redacted (Redactor's _leaf),
    looked at in place (escapes only make a string longer than ``_REPLACEMENT``)."""
    size = end - begin
    if size == 4:
        return body.startswith(b"null", begin)
    if size <= _REPLACEMENT_SIZE:
        return size == _REPLACEMENT_SIZE and body.startswith(_REPLACEMENT, begin)
    return (size <= _ESCAPED_MAX and body[begin] == _QUOTE
            and body.find(b"\\", begin, end) >= 0
            and msgspec.json.decode(body[begin:end]) == REDACTED)


def _items(raw: msgspec.Raw, node: Node) -> list[tuple[Node, msgspec.Raw]]:
    """(path step, value) pairs of a step that mixes keys with ``[*]``/``[N]``, its children
    decoded as Raw (``_collect`` then walks them as ``walk`` nodes too, or as leaves)."""
    try:
        if memoryview(raw)[0] == _OPEN_LIST:
            values = _LIST.decode(raw)
            pairs = [(child, values[i]) for i, child in node.indexes if -len(values) <= i < len(values)]
            return pairs + [(node.every, v) for v in values] if node.every else pairs
        mapping = _DICT.decode(raw)
    except msgspec.ValidationError:
        return []  # not a container: the paths find nothing here, as in Redactor
    pairs = [(child, mapping[key]) for key, child in node.keys if key in mapping]
    return pairs + [(node.every, v) for v in mapping.values()] if node.every else pairs


_COLLECTORS: dict[str, Callable[[Node], Collect]] = {
    "keys": _keys_collector, "every": _every_collector, "walk": _walk_collector,
    "raw": _no_collector,
}
