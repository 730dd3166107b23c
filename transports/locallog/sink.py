"""The local log sink: Avro container segments per topic in a directory (see ``layout`` for
the bytes). Records are written in whole blocks so concurrent readers never see half a
record; the segment being appended is locked (``flock``) so readers can tell its growing
tail from a torn one. A segment a crash left torn is kept as it is, the evidence
replay reports, and writing continues in a new segment.

Retention (``retention_bytes`` per topic, ``retention_age_s``) removes whole closed segments,
oldest first, and notes what it removed in the topic's ``retention.json`` so a replay reports
an unseen stretch before the oldest kept record rather than damage. A write that fails (a
full disk) is cut back to the last whole block before the error is raised: the segment stays
readable, and the recording stops with one clear line.

A segment the sink closes (rotated, or at the end of the recording) gets its indexes
written beside it from the records as they were appended — by time (``timeindex``) from
their receive times, by object (``objectindex``) from their uids and types, by key
(``keyindex``) from their namespaces and names — so the first windowed or ``-n`` read
finds them made; a segment appended to after a restart is indexed by its first reader (the
sink knows its own blocks only)."""

from __future__ import annotations

import errno
import itertools
import logging
import os
from dataclasses import dataclass, field
from typing import BinaryIO, Callable

from schemas import codec, repository
from schemas.codec import Record
from schemas.errors import TransportError
from transports.locallog import keyindex, layout, objectindex, timeindex
from transports.sink import Outgoing

log = logging.getLogger(__name__)

DEFAULT_SEGMENT_BYTES = 256 * 1024 * 1024
DEFAULT_BLOCK_RECORDS = 512
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


@dataclass
class _TopicWriter:
    directory: str
    segment: int
    file: BinaryIO
    sync: bytes
    size: int
    pending: list[bytes] = field(default_factory=list)
    pending_times: list[int] = field(default_factory=list)  # µs received, of ``pending``
    pending_uids: list[str | None] = field(default_factory=list)  # of ``pending``
    pending_types: list[str] = field(default_factory=list)
    pending_keys: list[keyindex.Key] = field(default_factory=list)
    #: The segment's blocks with their times and keys, for its indexes; None when it was
    #: reopened (its earlier blocks are not known here).
    blocks: list[timeindex.BlockTimes] | None = field(default_factory=list)
    block_keys: list[keyindex.BlockKeys] = field(default_factory=list)
    #: Its stretches by object (``objectindex``), None with ``blocks``.
    objects: objectindex.Builder | None = None


class LocalLogSink:
    max_record_bytes = 16 * 1024 * 1024

    def __init__(
        self,
        directory: str,
        *,
        max_segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        block_records: int = DEFAULT_BLOCK_RECORDS,
        retention_bytes: int | None = None,
        retention_age_s: float | None = None,
    ) -> None:
        self._directory = directory
        self._max_segment_bytes = max_segment_bytes
        self._retention = (retention_bytes, retention_age_s)
        self._block_records = block_records
        self._writers: dict[str, _TopicWriter] = {}
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise TransportError(f"cannot create local log directory {directory}: {exc}") from exc

    def send(self, topic: str, record: Record) -> None:
        self._append(topic, codec.encode(record), record["receivedAt"], record.get("uid"),
                     record["type"], (record["namespace"], record["name"]))

    def send_encoded(self, topic: str, outgoing: Outgoing) -> None:
        self._append(topic, outgoing.body, outgoing.received_at, outgoing.uid, outgoing.type,
                     (outgoing.namespace, outgoing.name))

    def _append(self, topic: str, body: bytes, received_at: int, uid: str | None,
                type_: str, key: keyindex.Key) -> None:
        writer = self._writers.get(topic) or self._open_topic(topic)
        writer.pending.append(body)
        writer.pending_times.append(received_at)
        writer.pending_uids.append(uid)
        writer.pending_types.append(type_)
        writer.pending_keys.append(key)
        if len(writer.pending) >= self._block_records:
            self._write_block(writer)

    def flush(self, timeout: float | None = None) -> None:
        for writer in self._writers.values():
            if writer.pending:
                self._write_block(writer)
            os.fsync(writer.file.fileno())

    def flush_behind(self, then: Callable[[], None]) -> None:
        """Written and fsynced here: the local log waits for nothing but its own disk."""
        self.flush()
        then()

    def flushing_behind(self) -> bool:
        return False

    def close(self) -> None:
        self.flush()
        for writer in self._writers.values():
            _write_indexes(writer)
            writer.file.close()
        self._writers.clear()

    def _open_topic(self, topic: str) -> _TopicWriter:
        topic_dir = os.path.join(self._directory, topic)
        os.makedirs(topic_dir, exist_ok=True)
        segments = layout.list_segments(topic_dir)
        if segments:
            index, path = segments[-1]
            writer = self._reopen(topic_dir, index, path)
            if writer is not None:
                self._writers[topic] = writer
                return writer
            index += 1
        else:
            index = 0
        writer = self._create(topic_dir, index)
        self._writers[topic] = writer
        return writer

    def _reopen(self, topic_dir: str, index: int, path: str) -> _TopicWriter | None:
        """Append to the last segment if it is whole and of the current schema."""
        length, header, damage = layout.good_length(path)
        if header is None and length == 0 and os.path.getsize(path) < _header_size():
            os.remove(path)  # a header torn while being written held no records
            return self._create(topic_dir, index)
        if damage is not None:
            log.warning("local log %s: %s; %d bytes kept as they are, continuing in a new "
                        "segment", path, damage.reason, os.path.getsize(path) - length)
            return None
        if header is None or header.fingerprint != repository.current().fingerprint:
            return None
        file = open(path, "r+b", buffering=0)
        layout.lock_for_writing(file)
        layout.remove_indexes(path)  # it grows again: indexed anew once read closed
        file.seek(length)
        return _TopicWriter(topic_dir, index, file, header.sync, length, blocks=None)

    def _create(self, topic_dir: str, index: int) -> _TopicWriter:
        current = repository.current()
        sync = os.urandom(layout.SYNC_SIZE)
        header = layout.encode_header(layout.schema_json(current.schema), current.fingerprint, sync)
        path = os.path.join(topic_dir, layout.segment_name(index))
        file = open(path, "xb", buffering=0)
        layout.lock_for_writing(file)
        try:
            _write_all(file, header)
        except OSError as exc:  # a torn header holds no record: the next start removes it
            raise TransportError(f"cannot write the local log {path}: {exc.strerror}; "
                                 "recording stopped") from exc
        return _TopicWriter(topic_dir, index, file, sync, len(header),
                            objects=objectindex.Builder(len(header)))

    def _write_block(self, writer: _TopicWriter) -> None:
        if writer.size >= self._max_segment_bytes:
            self._rotate(writer)
            layout.apply_retention(writer.directory, writer.segment, *self._retention)
        block = layout.encode_block(writer.pending, writer.sync)
        try:
            _write_all(writer.file, block)
        except OSError as exc:
            os.ftruncate(writer.file.fileno(), writer.size)  # no half block stays behind
            writer.file.seek(writer.size)
            reason = "the disk is full" if exc.errno in _FULL else exc.strerror or str(exc)
            raise TransportError(f"cannot write the local log {writer.file.name}: {reason}; "
                                 "recording stopped (the segment keeps every whole block)"
                                 ) from exc
        if writer.blocks is not None:
            end, starts = writer.size + len(block), _starts(writer.pending)
            writer.blocks.append(timeindex.BlockTimes(
                writer.size, end, len(writer.pending),
                min(writer.pending_times), max(writer.pending_times)))
            writer.block_keys.append(keyindex.BlockKeys.of(
                writer.size, end, writer.pending_keys, starts))
            if writer.objects is not None:
                writer.objects.block(writer.size, end,
                                     zip(writer.pending_uids, writer.pending_types, starts),
                                     max(writer.pending_times))
        writer.size += len(block)
        writer.pending, writer.pending_times, writer.pending_keys = [], [], []
        writer.pending_uids, writer.pending_types = [], []

    def _rotate(self, writer: _TopicWriter) -> None:
        os.fsync(writer.file.fileno())
        _write_indexes(writer)
        writer.file.close()
        fresh = self._create(writer.directory, writer.segment + 1)
        writer.segment, writer.file, writer.sync, writer.size = (
            fresh.segment, fresh.file, fresh.sync, fresh.size)
        writer.blocks, writer.block_keys, writer.objects = (
            fresh.blocks, fresh.block_keys, fresh.objects)


def _write_indexes(writer: _TopicWriter) -> None:
    """The indexes of the segment ``writer`` closes, from its blocks (written before the
    file is closed: its lock tells a reader not to use them before then)."""
    if writer.blocks is None or not writer.blocks:
        return
    stat = os.fstat(writer.file.fileno())
    timeindex.save(writer.file.name, timeindex.TimeIndex(
        stat.st_size, stat.st_mtime_ns, writer.sync, tuple(writer.blocks)))
    keyindex.save(writer.file.name, keyindex.KeyIndex(
        stat.st_size, stat.st_mtime_ns, writer.sync, tuple(writer.block_keys)))
    if writer.objects is not None:
        writer.objects.close(stat.st_size)
        objectindex.save(writer.file.name, objectindex.ObjectIndex(
            stat.st_size, stat.st_mtime_ns, writer.sync, tuple(writer.objects.done)))


def _starts(bodies: list[bytes]) -> tuple[int, ...]:
    """Where each of a block's records starts in its data (for the object and key indexes)."""
    return tuple(itertools.accumulate(map(len, bodies[:-1]), initial=0))


def _header_size() -> int:
    """Bytes of a current segment header: a smaller file with no header holds no records."""
    current = repository.current()
    return len(layout.encode_header(layout.schema_json(current.schema), current.fingerprint,
                                      bytes(layout.SYNC_SIZE)))


def _write_all(file: BinaryIO, data: bytes) -> None:
    """Unbuffered, so a failed write leaves no hidden buffer to land later."""
    view = memoryview(data)
    while view:
        view = view[file.write(view):]
