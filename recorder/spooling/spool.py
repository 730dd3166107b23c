"""A bounded on-disk FIFO of records waiting for Kafka.

Entries are ``length, crc32`` (big-endian u32 each) then ``topic length`` (u16), the topic and
the record in Avro single-object encoding (``schemas.codec.frame``). They go to numbered
segment files; ``head`` names the next entry to send and is replaced atomically after the
broker confirmed everything before it. A torn tail (crash mid-append) fails its CRC or
length and is cut off on open: it was never confirmed to anyone.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO

from recorder.checkpoint import write_atomically
from schemas.errors import KtraceError

log = logging.getLogger(__name__)

_HEADER = struct.Struct(">II")
_TOPIC_LEN = struct.Struct(">H")
SUFFIX = ".spool"
DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024


class SpoolFull(KtraceError):
    """The spool reached its size limit: the caller must stop taking new records."""


@dataclass(frozen=True)
class Position:
    segment: int
    offset: int


@dataclass(frozen=True)
class Entry:
    topic: str
    framed: bytes
    end: Position  # where the next entry starts

    @property
    def size(self) -> int:
        return _HEADER.size + _TOPIC_LEN.size + len(self.topic.encode()) + len(self.framed)


def _encode(topic: str, framed: bytes) -> bytes:
    raw_topic = topic.encode()
    body = _TOPIC_LEN.pack(len(raw_topic)) + raw_topic + framed
    return _HEADER.pack(len(body), zlib.crc32(body)) + body


def _read_entry(fh: BinaryIO) -> tuple[str, bytes] | None:
    """The next whole entry, or None at the end or at a torn/corrupt tail."""
    header = fh.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    length, crc = _HEADER.unpack(header)
    body = fh.read(length)
    if len(body) < length or zlib.crc32(body) != crc:
        return None
    (topic_len,) = _TOPIC_LEN.unpack_from(body)
    start = _TOPIC_LEN.size
    return body[start:start + topic_len].decode(), body[start + topic_len:]


class Spool:
    """Not thread-safe: the spooling sink serialises access."""

    def __init__(self, directory: str, *, max_bytes: int,
                 segment_bytes: int = DEFAULT_SEGMENT_BYTES) -> None:
        self.directory, self.max_bytes, self.segment_bytes = directory, max_bytes, segment_bytes
        os.makedirs(directory, exist_ok=True)
        self.head = self._load_head()
        self.records, self.bytes = 0, 0
        self._file: BinaryIO | None = None
        self._tail = self._recover()

    def __len__(self) -> int:
        return self.records

    def append(self, topic: str, framed: bytes) -> None:
        entry = _encode(topic, framed)
        if self.records and self.bytes + len(entry) > self.max_bytes:
            raise SpoolFull(f"spool {self.directory} is full ({self.bytes} bytes)")
        if self._tail.offset >= self.segment_bytes:
            self._open_segment(self._tail.segment + 1)
        assert self._file is not None
        self._file.write(entry)
        self._tail = Position(self._tail.segment, self._tail.offset + len(entry))
        self.records += 1
        self.bytes += len(entry)

    def sync(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())

    def peek(self, max_entries: int, max_bytes: int = 8 * 1024 * 1024) -> list[Entry]:
        """Up to ``max_entries`` entries from the head, oldest first."""
        if self._file is not None:
            self._file.flush()
        entries: list[Entry] = []
        pos, size = self.head, 0
        while len(entries) < max_entries and size < max_bytes and pos != self._tail:
            entry = self._entry_at(pos)
            if entry is None:  # end of a finished segment: continue in the next one
                if pos.segment >= self._tail.segment:
                    break
                pos = Position(pos.segment + 1, 0)
                continue
            entries.append(entry)
            size += len(entry.framed)
            pos = entry.end
        return entries

    def commit(self, delivered: list[Entry]) -> None:
        """``delivered`` (what ``peek`` returned, or a prefix of it) reached the broker."""
        if not delivered:
            return
        self.head = delivered[-1].end
        self.records -= len(delivered)
        self.bytes -= sum(e.size for e in delivered)
        write_atomically(self._head_path(), f"{self.head.segment} {self.head.offset}".encode())
        for segment in self._segments():
            if segment < self.head.segment:
                os.remove(self._segment_path(segment))

    def close(self) -> None:
        if self._file is not None:
            self.sync()
            self._file.close()
            self._file = None

    # --- files ------------------------------------------------------------------------------

    def _segment_path(self, segment: int) -> str:
        return os.path.join(self.directory, f"{segment:010d}{SUFFIX}")

    def _head_path(self) -> str:
        return os.path.join(self.directory, "head")

    def _segments(self) -> list[int]:
        return sorted(int(n[:-len(SUFFIX)]) for n in os.listdir(self.directory)
                      if n.endswith(SUFFIX) and n[:-len(SUFFIX)].isdigit())

    def _load_head(self) -> Position:
        try:
            with open(self._head_path()) as fh:
                segment, offset = fh.read().split()
            return Position(int(segment), int(offset))
        except FileNotFoundError:
            segments = self._segments()
            return Position(segments[0] if segments else 0, 0)

    def _entry_at(self, pos: Position) -> Entry | None:
        try:
            with open(self._segment_path(pos.segment), "rb") as fh:
                fh.seek(pos.offset)
                found = _read_entry(fh)
                return Entry(found[0], found[1], Position(pos.segment, fh.tell())) if found else None
        except FileNotFoundError:
            return None

    def _recover(self) -> Position:
        """Count what is pending from the head on and cut a torn tail off the last segment."""
        if not os.path.exists(self._segment_path(self.head.segment)):
            self.head = Position(self.head.segment, 0)  # stale head: nothing left to send there
        segments = [s for s in self._segments() if s >= self.head.segment] or [self.head.segment]
        end = self.head.offset
        for segment in segments:
            end = self._scan(segment, self.head.offset if segment == self.head.segment else 0)
        self._open_segment(segments[-1], truncate_at=end)
        if self.records:
            log.warning("spool %s holds %d records (%d bytes) from an earlier run; they are sent first",
                        self.directory, self.records, self.bytes)
        return self._tail

    def _scan(self, segment: int, start: int) -> int:
        """Count a segment's whole entries from ``start``; the end of the last one."""
        try:
            fh = open(self._segment_path(segment), "rb")
        except FileNotFoundError:
            return start
        with fh:
            fh.seek(start)
            end = start
            while _read_entry(fh) is not None:
                self.records += 1
                self.bytes += fh.tell() - end
                end = fh.tell()
            if fh.seek(0, os.SEEK_END) > end:
                log.warning("spool segment %s: cutting off %d damaged bytes at its end",
                            self._segment_path(segment), fh.tell() - end)
            return end

    def _open_segment(self, segment: int, truncate_at: int = 0) -> None:
        if self._file is not None:
            self.sync()
            self._file.close()
        path = self._segment_path(segment)
        self._file = open(path, "r+b" if os.path.exists(path) else "w+b")
        self._file.truncate(truncate_at)
        self._file.seek(truncate_at)
        self._tail = Position(segment, truncate_at)
