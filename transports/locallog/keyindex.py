"""The local log's index by key: beside each closed segment ``<index>.avro``, a sidecar
``<index>.keys.json`` that lists, for each block, the distinct (namespace, name) of its
records, each record's key and where its bytes start in the block, so a read that keeps
some keys only (``replay -n``) skips the blocks holding none of them and decodes only the
records whose key it may keep. It stands beside the index by time (``timeindex``): the
same blocks, another question.

Like the index by time, it is derived data: the sink writes it when it closes a segment;
one that is missing, unreadable, or does not match its segment is rebuilt from the segment
by the first read that wants it, which says so. Damage stays in the segment: the index
only remembers where it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from transports.locallog import layout

_VERSION = 1

#: A record's key: its namespace and name (None for cluster-scoped objects, markers).
Key = tuple[str | None, str | None]


@dataclass(frozen=True)
class BlockKeys:
    """A block's byte range and its records' keys: ``keys`` the distinct ones, ``records``
    each record's as its index in ``keys``, ``starts`` each record's first byte in the
    block's decompressed data. ``keys`` None: a record does not decode (its key is unknown),
    so the block is read whole."""

    position: int
    end: int
    keys: tuple[Key, ...] | None
    records: tuple[int, ...]
    starts: tuple[int, ...]

    @classmethod
    def of(cls, position: int, end: int, keys: list[Key], starts: tuple[int, ...]
           ) -> BlockKeys:
        """The entry of a block whose records have ``keys`` and start at ``starts``."""
        # C loops (fromkeys, map): the sink makes one per block it writes
        distinct = tuple(dict.fromkeys(keys))
        number = {key: i for i, key in enumerate(distinct)}
        return cls(position, end, distinct, tuple(map(number.__getitem__, keys)), starts)

    def wanted(self, wants: Callable[[str | None, str | None], bool], first: int = 0
               ) -> list[int]:
        """The records from ``first`` whose key ``wants`` may keep (all when unknown)."""
        if self.keys is None:
            return list(range(first, len(self.records)))
        kept = [wants(namespace, name) for namespace, name in self.keys]
        return [i for i in range(first, len(self.records)) if kept[self.records[i]]]


KeyIndex = layout.Sidecar[BlockKeys | layout.Damage]


def load(segment_path: str, header: layout.SegmentHeader, stat: os.stat_result
         ) -> tuple[KeyIndex | None, str]:
    """The segment's key index, or None and why it cannot be used ("missing", the damage)."""
    return layout.load_sidecar(layout.key_index_path(segment_path), _decode, header, stat)


def build(data: bytes, header: layout.SegmentHeader, stat: os.stat_result,
          keys: Callable[[layout.Block], BlockKeys | None]) -> KeyIndex:
    """Index a segment's bytes: ``keys`` gives a block's entry (None: a record that does
    not decode)."""
    return KeyIndex(stat.st_size, stat.st_mtime_ns, header.sync, layout.block_entries(
        data, header, lambda block: keys(block) or BlockKeys(
            block.position, block.end, None, (0,) * block.count, ())))


def save(segment_path: str, index: KeyIndex) -> None:
    """Write the index beside its segment (atomically); a directory this reader cannot
    write to keeps none, and is indexed again by the next read."""
    layout.save_sidecar(layout.key_index_path(segment_path), _encode(index))


def _encode(index: KeyIndex) -> dict:
    return {
        "version": _VERSION, "size": index.size, "mtime_ns": index.mtime_ns,
        "sync": index.sync.hex(),
        "blocks": [[e.position, e.end, e.keys and [list(k) for k in e.keys], e.records,
                    e.starts] if isinstance(e, BlockKeys)
                   else [e.position, e.end, e.at_end, e.reason] for e in index.entries],
    }


def _decode(raw: dict) -> KeyIndex:
    if raw["version"] != _VERSION:
        raise ValueError(f"version {raw['version']!r}")
    entries: list[BlockKeys | layout.Damage] = []
    for position, end, *rest in raw["blocks"]:
        if len(rest) == 2:  # damage: at_end, reason
            entries.append(layout.Damage(int(position), int(end), bool(rest[0]), str(rest[1])))
            continue
        keys, records, starts = rest
        entry = BlockKeys(int(position), int(end),
                          None if keys is None else tuple(_key(k) for k in keys),
                          tuple(records), tuple(starts))
        if entry.keys is not None and (len(entry.starts) != len(entry.records) or any(
                not 0 <= r < len(entry.keys) for r in entry.records)):
            raise ValueError(f"block at {position}: records and keys do not match")
        entries.append(entry)
    return KeyIndex(int(raw["size"]), int(raw["mtime_ns"]), bytes.fromhex(raw["sync"]),
                    tuple(entries))


def _key(raw: list) -> Key:
    namespace, name = raw
    if not all(v is None or isinstance(v, str) for v in (namespace, name)):
        raise TypeError(f"key {raw!r}")
    return namespace, name
