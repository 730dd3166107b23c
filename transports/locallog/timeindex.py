"""The local log's index by time: beside each closed segment ``<index>.avro``, a small
sidecar ``<index>.times.json`` that lists the segment's blocks in order with the first and
last receive time of their records (and the damaged byte ranges between them), so a read of
a window skips the blocks wholly outside it without reading or decoding them.

The index is derived data: it is built from the segment by the first read that wants it
and written beside it; one that is missing, unreadable, or does not match its segment (its
size, modification time or sync marker changed: a segment appended to after the index was
made) is rebuilt from the segment, and the reader says so. Damage stays in the segment: the
index only remembers where it is, so it is reported as a full read reports it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from transports.locallog import layout
from transports.window import Window

_VERSION = 1


@dataclass(frozen=True)
class BlockTimes:
    """A block's byte range, its number of records, and the earliest and latest receive time
    of its records (None when a record's time is unknown: a record that does not decode;
    such a block is read)."""

    position: int
    end: int
    count: int
    first_us: int | None
    last_us: int | None

    def before(self, window: Window) -> bool:
        """Whether every record of the block was received before ``window`` starts."""
        return self.last_us is not None and window.before_start(self.last_us)

    def after(self, window: Window) -> bool:
        """Whether every record of the block was received after ``window`` ends."""
        return self.first_us is not None and window.past_end(self.first_us)

    def reaches_past(self, window: Window) -> bool:
        """Whether the block holds a record received after ``window`` ends."""
        return self.last_us is not None and window.past_end(self.last_us)


TimeIndex = layout.Sidecar[BlockTimes | layout.Damage]


def load(segment_path: str, header: layout.SegmentHeader, stat: os.stat_result
         ) -> tuple[TimeIndex | None, str]:
    """The segment's index, or None and why it cannot be used ("missing", the damage)."""
    return layout.load_sidecar(layout.time_index_path(segment_path), _decode, header, stat)


def build(data: bytes, header: layout.SegmentHeader, stat: os.stat_result,
          times: Callable[[layout.Block], tuple[int | None, int | None]]) -> TimeIndex:
    """Index a segment's bytes: ``times`` gives a block's first and last receive time."""
    return TimeIndex(stat.st_size, stat.st_mtime_ns, header.sync, layout.block_entries(
        data, header, lambda block: BlockTimes(block.position, block.end, block.count,
                                               *times(block))))


def save(segment_path: str, index: TimeIndex) -> None:
    """Write the index beside its segment (atomically); a log directory this reader cannot
    write to keeps no index, and is indexed again by the next read."""
    layout.save_sidecar(layout.time_index_path(segment_path), _encode(index))


def _encode(index: TimeIndex) -> dict:
    return {
        "version": _VERSION, "size": index.size, "mtime_ns": index.mtime_ns,
        "sync": index.sync.hex(),
        "blocks": [[e.position, e.end, e.count, e.first_us, e.last_us]
                   if isinstance(e, BlockTimes) else [e.position, e.end, e.at_end, e.reason]
                   for e in index.entries],
    }


def _decode(raw: dict) -> TimeIndex:
    if raw["version"] != _VERSION:
        raise ValueError(f"version {raw['version']!r}")
    entries: list[BlockTimes | layout.Damage] = []
    for position, end, *rest in raw["blocks"]:
        if len(rest) == 2:  # damage: at_end, reason
            entries.append(layout.Damage(int(position), int(end), bool(rest[0]), str(rest[1])))
        else:
            count, first_us, last_us = rest
            entries.append(BlockTimes(int(position), int(end), int(count), _time(first_us),
                                      _time(last_us)))
    return TimeIndex(int(raw["size"]), int(raw["mtime_ns"]), bytes.fromhex(raw["sync"]),
                     tuple(entries))


def _time(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int):
        raise TypeError(f"time {value!r}")
    return value
