"""The local log's bytes: what a segment file holds and how its positions are numbered.

A local log is a directory with one sub-directory per topic, each holding segments named
``<index>.avro`` (index from 0). A segment is a standard Avro object container file of the
Record schema (readable by any Avro tool) with metadata ``ktrace.fingerprint``, codec
``zstandard`` with frame checksums — Avro itself has none, and a flipped bit must be caught,
not decoded into a wrong record. Blocks are written whole and flushed, so a reader sees
complete blocks only, except at the very end of the segment a writer is appending to.

Live tail or damage? A writer holds an exclusive ``flock`` on the segment it appends to for
as long as it has it open; the kernel drops the lock when the process ends, however it ends.
So an incomplete last block (or an empty file) in a locked segment is a write in progress,
and a reader waits for it; anywhere else — a closed segment, or a segment whose writer
crashed — it is damage, reported with its byte range. A writer that finds its last segment
torn leaves it as it is (the evidence) and continues in a new segment.

Offsets are positions, not ordinals: ``segment << 48 | block byte position << 16 | index in
block``. They increase with the log, stay valid if a damaged block is skipped, and let a
reader seek straight to where it stopped.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Generic, Iterator, TypeVar

import zstandard

from fastavro.schema import to_parsing_canonical_form

from schemas.errors import DecodeError, TransportError
from schemas.varint import encode_long, read_long

SEGMENT_SUFFIX = ".avro"
TIME_INDEX_SUFFIX = ".times.json"
OBJECT_INDEX_SUFFIX = ".objects.json"
KEY_INDEX_SUFFIX = ".keys.json"
MAGIC = b"Obj\x01"
SYNC_SIZE = 16
FINGERPRINT_KEY = "ktrace.fingerprint"
_LOCK_ATTEMPTS, _LOCK_PAUSE_S = 50, 0.01  # readers hold their shared lock for microseconds
_MAX_HEADER_ENTRIES = 64
_MAX_BLOCK_RECORDS = 1 << 16
_MAX_BLOCK_BYTES = 1 << 30
CODEC = b"zstandard"
log = logging.getLogger(__name__)
_compressor = zstandard.ZstdCompressor(level=1, write_checksum=True, write_content_size=True)
_decompressor = zstandard.ZstdDecompressor()


def segment_name(index: int) -> str:
    return f"{index:010d}{SEGMENT_SUFFIX}"


def time_index_path(segment_path: str) -> str:
    """The segment's time index (``timeindex``), beside it: ``<index>.times.json``."""
    return segment_path[: -len(SEGMENT_SUFFIX)] + TIME_INDEX_SUFFIX


def object_index_path(segment_path: str) -> str:
    """The segment's object index (``objectindex``), beside it: ``<index>.objects.json``."""
    return segment_path[: -len(SEGMENT_SUFFIX)] + OBJECT_INDEX_SUFFIX


def key_index_path(segment_path: str) -> str:
    """The segment's key index (``keyindex``), beside it: ``<index>.keys.json``."""
    return segment_path[: -len(SEGMENT_SUFFIX)] + KEY_INDEX_SUFFIX


def segment_index(name: str) -> int | None:
    stem = name[: -len(SEGMENT_SUFFIX)] if name.endswith(SEGMENT_SUFFIX) else ""
    return int(stem) if stem.isdigit() else None


def list_segments(topic_dir: str) -> list[tuple[int, str]]:
    """(index, path) of a topic's segments, in order."""
    found = []
    for name in os.listdir(topic_dir):
        index = segment_index(name)
        if index is not None:
            found.append((index, os.path.join(topic_dir, name)))
    return sorted(found)


def lock_for_writing(fh: BinaryIO) -> None:
    """Take the writer's exclusive lock on an open segment (see the module docstring)."""
    for _ in range(_LOCK_ATTEMPTS):
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(_LOCK_PAUSE_S)
    raise TransportError(f"{fh.name} is locked by another writer: is a second recorder "
                         "writing to this local log?")


def is_being_written(fh: BinaryIO) -> bool:
    """Whether a live writer holds the segment open in ``fh`` (its tail may still grow)."""
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    return False


# --- retention ------------------------------------------------------------------------------

RETENTION_FILE = "retention.json"


def apply_retention(topic_dir: str, current: int, max_bytes: int | None,
                    max_age_s: float | None) -> None:
    """Remove whole closed segments, oldest first, while the topic holds more than
    ``max_bytes`` or the oldest was last written over ``max_age_s`` ago; each removal is
    noted in ``retention.json`` first, so readers report it as retention, not damage."""
    closed = [(i, p) for i, p in list_segments(topic_dir) if i < current]
    sizes = {p: os.path.getsize(p) for _, p in closed}
    total = sum(sizes.values()) + sum(os.path.getsize(p) for i, p in list_segments(topic_dir)
                                      if i >= current)
    for index, path in closed:
        too_big = max_bytes is not None and total > max_bytes
        too_old = max_age_s is not None and time.time() - os.path.getmtime(path) > max_age_s
        if not (too_big or too_old):
            return
        note = retained(topic_dir)
        _note_retention(topic_dir, index, note["bytes"] + sizes[path])
        os.remove(path)
        remove_indexes(path)
        total -= sizes[path]


def remove_indexes(segment_path: str) -> None:
    """The indexes beside a segment: it is removed, or grows again."""
    for path in (time_index_path(segment_path), object_index_path(segment_path),
                 key_index_path(segment_path)):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def retained(topic_dir: str) -> dict:
    """What retention removed from a topic: ``through`` (last segment index, -1 for none)
    and ``bytes``."""
    try:
        with open(os.path.join(topic_dir, RETENTION_FILE), "rb") as fh:
            note = json.loads(fh.read())
        return {"through": int(note["through"]), "bytes": int(note["bytes"])}
    except (OSError, ValueError, KeyError, TypeError):
        return {"through": -1, "bytes": 0}


def _note_retention(topic_dir: str, through: int, nbytes: int) -> None:
    path = os.path.join(topic_dir, RETENTION_FILE)
    with open(path + ".tmp", "w") as fh:
        json.dump({"through": through, "bytes": nbytes}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(path + ".tmp", path)


def make_position(segment: int, block_pos: int, index: int) -> int:
    return segment << 48 | block_pos << 16 | index


def split_position(offset: int) -> tuple[int, int, int]:
    return offset >> 48, (offset >> 16) & 0xFFFFFFFF, offset & 0xFFFF


# --- Avro primitives the container format needs -------------------------------------------


def _encode_bytes(data: bytes) -> bytes:
    return encode_long(len(data)) + data


def _read_bytes(buf: bytes | memoryview, pos: int) -> tuple[bytes, int]:
    """Avro ``bytes`` at ``pos``; IndexError or ValueError when the length is impossible
    (a corrupt length must never move the cursor backwards or past the end)."""
    length, pos = read_long(buf, pos)
    if length < 0:
        raise ValueError("negative length")
    if pos + length > len(buf):
        raise IndexError
    return bytes(buf[pos:pos + length]), pos + length


# --- segment header -------------------------------------------------------------------------


@dataclass(frozen=True)
class SegmentHeader:
    fingerprint: bytes
    sync: bytes
    data_start: int


def encode_header(schema_json: bytes, fingerprint: bytes, sync: bytes) -> bytes:
    meta = {
        "avro.schema": schema_json,
        "avro.codec": CODEC,
        FINGERPRINT_KEY: fingerprint.hex().encode(),
    }
    body = bytearray(MAGIC)
    body += encode_long(len(meta))
    for key, value in meta.items():
        body += _encode_bytes(key.encode()) + _encode_bytes(value)
    body += encode_long(0) + sync
    return bytes(body)


def read_header(data: bytes) -> SegmentHeader:
    """Parse a segment header; DecodeError when it is not a ktrace segment."""
    if data[:4] != MAGIC:
        raise DecodeError("not an Avro object container file")
    try:
        pos, meta = 4, {}
        while True:
            count, pos = read_long(data, pos)
            if count == 0:
                break
            if count < 0:  # a negative count is followed by the block's byte size
                count, (_, pos) = -count, read_long(data, pos)
            if count > _MAX_HEADER_ENTRIES:
                raise ValueError("implausible metadata count")
            for _ in range(count):
                key, pos = _read_bytes(data, pos)
                meta[key.decode()], pos = _read_bytes(data, pos)
        sync = bytes(data[pos:pos + SYNC_SIZE])
        if len(sync) != SYNC_SIZE:
            raise IndexError
    except (IndexError, ValueError, UnicodeDecodeError) as exc:
        raise DecodeError("segment header is truncated or corrupt") from exc
    if meta.get("avro.codec", b"null") != CODEC:
        raise DecodeError(f"unsupported segment codec {meta['avro.codec']!r}")
    if FINGERPRINT_KEY not in meta:
        raise DecodeError("segment has no ktrace.fingerprint: not written by ktrace")
    return SegmentHeader(bytes.fromhex(meta[FINGERPRINT_KEY].decode()), sync, pos + SYNC_SIZE)


def schema_json(parsed_schema: object) -> bytes:
    return to_parsing_canonical_form(parsed_schema).encode()


# --- blocks -----------------------------------------------------------------------------------


def encode_block(bodies: list[bytes], sync: bytes) -> bytes:
    data = _compressor.compress(b"".join(bodies))
    return encode_long(len(bodies)) + encode_long(len(data)) + data + sync


@dataclass(frozen=True)
class Block:
    position: int  # byte position of the block in the segment
    end: int
    count: int
    data: bytes  # the records' bodies, decompressed and checksum-verified


@dataclass(frozen=True)
class Damage:
    """Bytes a reader could not use: a torn tail (``at_end``) or a corrupt block."""

    position: int
    end: int
    at_end: bool
    reason: str


def scan_blocks(data: bytes, header: SegmentHeader, start: int | None = None) -> Iterator[Block | Damage]:
    """Blocks of a segment's bytes from ``start``; a bad block is reported as Damage and the
    scan resumes at the next sync marker, so one corrupt block costs only itself."""
    view, pos, size = memoryview(data), start or header.data_start, len(data)
    while pos < size:
        try:
            count, cursor = read_long(view, pos)
            length, cursor = read_long(view, cursor)
            end = cursor + length + SYNC_SIZE
            if not (0 < count <= _MAX_BLOCK_RECORDS and 0 <= length <= _MAX_BLOCK_BYTES):
                raise ValueError("implausible block header")
            if end > size:
                raise IndexError
            if view[end - SYNC_SIZE:end] != header.sync:
                raise ValueError("sync marker mismatch")
        except IndexError:
            yield Damage(pos, size, True, "torn tail: the last block is incomplete")
            return
        except ValueError as exc:
            resume = data.find(header.sync, pos + 1)
            if resume < 0:
                yield Damage(pos, size, True, f"corrupt tail ({exc})")
                return
            yield Damage(pos, resume + SYNC_SIZE, False, f"corrupt block ({exc})")
            pos = resume + SYNC_SIZE
            continue
        try:
            body = _decompressor.decompress(view[cursor:end - SYNC_SIZE])
        except zstandard.ZstdError as exc:
            yield Damage(pos, end, False, f"corrupt block ({exc})")
        else:
            yield Block(pos, end, count, body)
        pos = end


def good_length(path: str) -> tuple[int, SegmentHeader | None, Damage | None]:
    """How many leading bytes of a segment are whole blocks, and the damage at its end."""
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        header = read_header(data)
    except DecodeError:
        return 0, None, Damage(0, len(data), True, "segment header is torn")
    end = header.data_start
    for item in scan_blocks(data, header):
        if isinstance(item, Damage):
            if item.at_end:
                return end, header, item
            continue
        end = item.end
    return end, header, None


# --- sidecars: the indexes kept beside a segment (timeindex, objectindex, keyindex) ---------


Entry = TypeVar("Entry")


@dataclass(frozen=True)
class Sidecar(Generic[Entry]):
    """An index beside a segment (by time, object or key): its entries, each with
    ``position`` and ``end``, tiling the segment's data in order, and what tells whether it
    still matches the segment."""

    size: int
    mtime_ns: int
    sync: bytes
    entries: tuple[Entry, ...]


def block_entries(data: bytes, header: SegmentHeader, entry: Callable[[Block], Entry]
                  ) -> tuple[Entry | Damage, ...]:
    """A per-block index's entries for a segment's bytes: ``entry`` of each block, and
    each damaged range as it is (the time and key indexes)."""
    return tuple(item if isinstance(item, Damage) else entry(item)
                 for item in scan_blocks(data, header))


def load_sidecar(path: str, decode: Callable[[dict], Any], header: SegmentHeader,
                 stat: os.stat_result) -> tuple[Any, str]:
    """The index at ``path`` decoded, or None and why it cannot be used: "missing",
    unreadable, damaged, or out of date (it no longer matches its segment)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror})"
    try:
        index: Sidecar = decode(json.loads(raw))
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        return None, f"damaged ({exc.__class__.__name__}: {exc})"
    if (index.size, index.mtime_ns, index.sync) != (stat.st_size, stat.st_mtime_ns, header.sync):
        # appended to, rewritten, or copied without its times (cp -a and rsync -t keep them)
        return None, "out of date (the segment's size, modification time or sync marker changed)"
    problem = _tiling_problem(index, header.data_start)
    if problem:
        return None, f"damaged ({problem})"
    return index, ""


def save_sidecar(path: str, content: dict) -> None:
    """Write an index beside its segment (atomically); a log directory this reader cannot
    write to keeps none, and is indexed again by the next read."""
    scratch = f"{path}.{os.getpid()}.tmp"  # two readers indexing at once each write their own
    try:
        with open(scratch, "w") as fh:  # dumps: json's C encoder (dump writes piecewise)
            fh.write(json.dumps(content, separators=(",", ":")))
        os.replace(scratch, path)
    except OSError as exc:
        log.info("index %s not written: %s", path, exc.strerror)


def _tiling_problem(index: Sidecar, data_start: int) -> str:
    """The entries must cover the segment's data from its first byte to its last, in order."""
    pos = data_start
    for entry in index.entries:
        if entry.position != pos or entry.end <= pos:
            return f"entry at {entry.position} where {pos} was expected"
        pos = entry.end
    return "" if pos == index.size else f"entries end at {pos}, the segment at {index.size}"
