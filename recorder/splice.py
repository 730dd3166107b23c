"""Redaction in place on an object's raw JSON: the values at the redaction paths are found
as byte spans and replaced, everything else stays the bytes the API server sent.

The paths (``schemas.redaction``) are merged into one trie, and the trie into one nested
msgspec type (``Node.compile``): one decode of the body reads exactly the values on the
paths, as ``msgspec.Raw`` views, and skips everything else in C. A Raw is a view into the
buffer it was decoded from, so its position is its address minus the buffer's
(``_address``: msgspec keeps the view's pointer right after the buffer owner; checked at
import, and ``SpanRedactor.usable`` is False — the writer parses in full — if a msgspec
version lays it out otherwise). The rules are those of ``Redactor.apply``: a value at a
path is replaced by ``"ktrace:redacted"`` unless it is null or already redacted; a path
under a replaced value finds nothing; a value of a type the paths do not expect (a string
where a path goes deeper) makes ``spans`` None, and the writer uses the full parse.

The first list along a path (``spec.containers``) is read as one Raw and its redacted bytes
are remembered by its bytes (``Memo``): an object's containers rarely change between its
versions, and a Deployment's template repeats in its ReplicaSets, so most objects need one
lookup there instead of a walk over every ``env`` value.
"""

from __future__ import annotations

import ctypes
import keyword
import re
import sys
import threading
import typing
from typing import Any, Callable

import msgspec
import msgspec.structs

from schemas.redaction import REDACTED, Segment

_RAW_POINTER_OFFSET = sys.getsizeof(object()) + ctypes.sizeof(ctypes.c_void_p)  # head, owner
_BYTES_HEADER = sys.getsizeof(b"") - 1  # where a bytes object's data starts (CPython)
_DICT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_ROOT = msgspec.json.Decoder(msgspec.Raw)
_REPLACEMENT = msgspec.json.encode(REDACTED)
_REPLACEMENT_SIZE = len(_REPLACEMENT)
#: The longest REDACTED can be written (every character a \uXXXX escape): a longer value,
#: such as a last-applied-configuration, is not decoded to be compared with it.
_ESCAPED_MAX = 6 * len(REDACTED) + 2
_QUOTE = ord('"')
#: begin, end (replaced by ``_REPLACEMENT``), or begin, end, the bytes that replace them
Span = tuple[int, int] | tuple[int, int, bytes]
_OPEN_LIST = ord("[")
#: Machine words from address 8 on: ``_WORDS[(a - 8) >> 3]`` reads the word at ``a`` (a
#: pointer index is ~5x cheaper than a ctypes object made per read with ``from_address``).
_WORD = ctypes.sizeof(ctypes.c_size_t)
_WORDS = ctypes.cast(_WORD, ctypes.POINTER(ctypes.c_size_t))
_RAW_WORD = _RAW_POINTER_OFFSET - _WORD  # a Raw's pointer, as an offset from _WORDS
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


def _address(raw: msgspec.Raw) -> int:
    return _WORDS[(id(raw) + _RAW_WORD) >> 3]


def _gate_tokens(paths: list[list[Segment]]) -> tuple[bytes, ...]:
    """``"key"`` for the last key of each path: a body without any of them has nothing to
    redact. Without ``\\u`` or ``\\/`` escapes in the body a key can only be written one way,
    so the test is exact; () (no gate) when some path ends in no plain ASCII key."""
    tokens = []
    for path in paths:
        keys = [arg for kind, arg in path if kind == "key"]
        if not keys or not keys[-1].isascii() or not keys[-1].isprintable() or any(
                c in keys[-1] for c in '"\\'):
            return ()
        tokens.append(b'"' + keys[-1].encode() + b'"')
    return tuple(dict.fromkeys(tokens))


def _bytes_address(data: bytes) -> int:
    return id(data) + _BYTES_HEADER


def _layout_ok() -> bool:
    doc = b'{"a":[1,{"b":"xy"}]}'
    root = _ROOT.decode(doc)
    inner = _LIST.decode(_DICT.decode(root)["a"])[1]
    value = _DICT.decode(inner)["b"]
    return (_RAW_POINTER_OFFSET % _WORD == 0 and _address(root) == _bytes_address(doc)
            and _address(value) - _address(root) == doc.index(b'"xy"') and len(value) == 4)


class SpanRedactor:
    """``apply(body) → body`` with the values at ``paths`` (parsed segments) redacted."""

    usable = _layout_ok()

    def __init__(self, paths: list[list[Segment]]) -> None:
        self.root = Node()
        for path in paths:
            node = self.root
            for segment in path:
                node = node.children.setdefault(segment, Node())
            node.leaf = True
        self.root.compile()
        self._gate = _gate_tokens(paths)

    def spans(self, body: bytes) -> list[Span] | None:
        """Byte spans of the values to replace; None when the body does not have the shape
        the paths expect (then only the full parse can apply them as ``Redactor`` does)."""
        if not self.root.children:
            return []
        if type(body) is not bytes:
            body = bytes(body)  # offsets are taken from the bytes object's own buffer
        if self._gate and not any(token in body for token in self._gate) and not (
                b"\\u" in body or b"\\/" in body):
            return []  # no path's last key is in the body (a third of objects: no env)
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
                self.root.collect(tree, _bytes_address(body), found)
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
    """A Struct of the wanted keys: visit each one present (fields are None when absent).
    The steps of keys below it are written out into one function (``_inlined``), so the
    walk from an object's root to its lists is one call, not one per step; values that end
    a path are noted inline too (``env[*].value`` is most spans, a call each was most of
    the walk)."""
    lines: list[str] = []
    calls: dict[str, Collect] = {}
    _inlined(node, "value", 1, lines, calls)
    namespace: dict[str, Any] = {"_WORDS": _WORDS, "_RAW_WORD": _RAW_WORD, **calls}
    exec("def collect(value, base, found):\n" + "\n".join(lines), namespace)
    return namespace["collect"]


def _inlined(node: Node, value: str, depth: int, lines: list[str], calls: dict[str, Collect]) -> None:
    """Source lines visiting the wanted keys of ``node`` in the variable ``value``; steps
    that are not keys are calls to their collector (named in ``calls``)."""
    pad = "    " * depth
    for attr, (_, child) in zip(node.attrs, node.keys):
        item = f"v{len(lines)}"  # unique: the line it is assigned on
        lines += [f"{pad}{item} = {value}.{attr}", f"{pad}if {item} is not None:"]
        if child.leaf:
            lines += [f"{pad}    begin = _WORDS[(id({item}) + _RAW_WORD) >> 3] - base",
                      f"{pad}    found.append((begin, begin + len({item})))"]
        elif child.shape == "keys":
            _inlined(child, item, depth + 1, lines, calls)
        else:
            calls[f"visit_{item}"] = child.collect
            lines.append(f"{pad}    visit_{item}({item}, base, found)")


def _every_collector(node: Node) -> Collect:
    """``[*]``: every item of a list, every value of a mapping."""
    item_node = node.every
    if _ends_in_leaves(item_node):
        return _every_leaves_collector(item_node.attrs)
    if item_node.shape == "keys" and len(item_node.keys) == 1:
        (_, child), = item_node.keys
        if not child.leaf and child.shape == "every" and _ends_in_leaves(child.every):
            return _nested_leaves_collector(item_node.attrs[0], child.every.attrs)
    visit = _visit(item_node)

    def collect(value: Any, base: int, found: list[Span]) -> None:
        for item in value.values() if type(value) is dict else value:
            if item is not None:
                visit(item, base, found)
    return collect


def _every_leaves_collector(names: list[str]) -> Collect:
    """``[*]`` of Structs whose wanted keys all end a path (``env[*].value``: most spans),
    walked in one loop."""
    def collect(value: Any, base: int, found: list[Span]) -> None:
        for item in value.values() if type(value) is dict else value:
            if item is not None:
                for name in names:
                    leaf = getattr(item, name)
                    if leaf is not None:
                        begin = _WORDS[(id(leaf) + _RAW_WORD) >> 3] - base
                        found.append((begin, begin + len(leaf)))
    return collect


def _ends_in_leaves(node: Node) -> bool:
    return node.shape == "keys" and all(child.leaf for _, child in node.keys)


def _nested_leaves_collector(key: str, names: list[str]) -> Collect:
    """``[*].key[*]`` of Structs whose wanted keys all end a path
    (``containers[*].env[*].value``): a call less per container."""
    leaves = _every_leaves_collector(names)

    def collect(value: Any, base: int, found: list[Span]) -> None:
        for outer in value.values() if type(value) is dict else value:
            if outer is not None and (inner := getattr(outer, key)) is not None:
                leaves(inner, base, found)
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
                walk(tree, _bytes_address(part), inner)
            spans = _to_replace(inner, part)
            redacted = replaced(part, spans) if spans else b""
            memo.put(part, redacted)
        if redacted:
            begin = _address(value) - base
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
    begin = _address(value) - base
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
