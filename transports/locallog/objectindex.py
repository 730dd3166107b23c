"""The local log's index by object: beside each closed segment ``<index>.avro``, a sidecar
``<index>.objects.json`` that cuts the segment into stretches of ``STRETCH_BLOCKS``
consecutive blocks and lists, for each object with a version in a stretch, where its last
version there is (block, index in the block, first byte in the block's decompressed data)
or that its last record there says it is gone. The state at a window's start (each
object's last version before it) merges the stretches wholly before the start, reads only
the stretch holding it, and fetches each version by where it is: of the records before the
window only those are decoded (``LocalLogSource.last_versions``).

It stands beside the index by time (``timeindex``) and the index by key (``keyindex``):
the same blocks, another question. Like them it is derived data: the sink writes it when it
closes a segment; one that is missing, unreadable, or does not match its segment is rebuilt
from the segment by the first read that wants it, which says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterable

from schemas.records import GONE_TYPES, OBJECT_TYPES
from transports.locallog import layout

_VERSION = 1
#: Blocks per stretch: the most the state at a window's start reads of each topic (4 × 512
#: records); a longer one lists an object changed often once for more records, but more
#: of it is read.
STRETCH_BLOCKS = 4

#: Where a version is in its segment: block position, index in the block, first byte.
Where = tuple[int, int, int]
#: What the index needs of a record: its uid (None for a marker), type, first byte.
Indexed = tuple[str | None, str, int]


@dataclass(frozen=True)
class Stretch:
    """Consecutive blocks (and the damage between them): ``versions`` each object's last
    version in them (None: its last record says it is gone); ``last_us`` the latest receive time in them, None when unknown (a record does
    not decode: the stretch is read, never merged)."""

    position: int
    end: int
    last_us: int | None
    versions: dict[str, Where | None]

    def before(self, since_us: int) -> bool:
        return self.last_us is not None and self.last_us < since_us


ObjectIndex = layout.Sidecar[Stretch]


@dataclass
class Builder:
    """Stretches made block by block, as the sink writes them or a reader scans them."""

    start: int  # the first byte of the segment's data
    done: list[Stretch] = field(default_factory=list)
    _blocks: int = 0
    _last_us: int | None = None
    _known: bool = True
    _versions: dict[str, Where | None] = field(default_factory=dict)

    def block(self, position: int, end: int, records: Iterable[Indexed] | None,
              last_us: int | None) -> None:
        """A block's records (None, or ``last_us`` None: not all of them decode)."""
        if records is None or last_us is None:
            self._known = False
        else:
            versions = self._versions
            for i, (uid, type_, byte) in enumerate(records):
                if uid and type_ in OBJECT_TYPES:
                    versions[uid] = None if type_ in GONE_TYPES else (position, i, byte)
            self._last_us = last_us if self._last_us is None else max(self._last_us, last_us)
        self._blocks += 1
        if self._blocks == STRETCH_BLOCKS:
            self.close(end)

    def close(self, end: int) -> None:
        """End the stretch under way at ``end`` (the end of the data it covers)."""
        if end <= self.start:
            return
        self.done.append(Stretch(self.start, end, self._last_us if self._known else None,
                                 self._versions))
        self.start, self._blocks, self._last_us, self._known, self._versions = (
            end, 0, None, True, {})


def build(data: bytes, header: layout.SegmentHeader, stat: os.stat_result,
          records: Callable[[layout.Block], tuple[list[Indexed] | None, int | None]]
          ) -> ObjectIndex:
    """Index a segment's bytes: ``records`` gives a block's records and their latest
    receive time (None, None when one does not decode)."""
    builder = Builder(header.data_start)
    for item in layout.scan_blocks(data, header):
        if isinstance(item, layout.Block):
            builder.block(item.position, item.end, *records(item))
    builder.close(stat.st_size)
    return ObjectIndex(stat.st_size, stat.st_mtime_ns, header.sync, tuple(builder.done))


def load(segment_path: str, header: layout.SegmentHeader, stat: os.stat_result
         ) -> tuple[ObjectIndex | None, str]:
    """The segment's object index, or None and why it cannot be used ("missing", …)."""
    return layout.load_sidecar(layout.object_index_path(segment_path), _decode, header, stat)


def save(segment_path: str, index: ObjectIndex) -> None:
    layout.save_sidecar(layout.object_index_path(segment_path), _encode(index))


def _encode(index: ObjectIndex) -> dict:
    return {
        "version": _VERSION, "size": index.size, "mtime_ns": index.mtime_ns,
        "sync": index.sync.hex(),
        "stretches": [[s.position, s.end, s.last_us, list(s.versions),
                       [list(w) if w else 0 for w in s.versions.values()]]
                      for s in index.entries],
    }


def _decode(raw: dict) -> ObjectIndex:
    if raw["version"] != _VERSION:
        raise ValueError(f"version {raw['version']!r}")
    entries = []
    for position, end, last_us, uids, wheres in raw["stretches"]:
        if len(uids) != len(wheres) or not (last_us is None or isinstance(last_us, int)):
            raise ValueError(f"stretch at {position}: uids and versions do not match")
        versions = {str(uid): (int(w[0]), int(w[1]), int(w[2])) if w else None
                    for uid, w in zip(uids, wheres)}
        entries.append(Stretch(int(position), int(end), last_us, versions))
    return ObjectIndex(int(raw["size"]), int(raw["mtime_ns"]), bytes.fromhex(raw["sync"]),
                       tuple(entries))
