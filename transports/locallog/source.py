"""Reads a local log directory written by the recorder's local-log sink."""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Sequence, TypeVar

from schemas import codec
from schemas.envelope import Envelope
from schemas.errors import DecodeError, Retained, TransportError, Unreadable
from transports import locator
from transports import versions
from transports.locallog import keyindex, layout, objectindex, timeindex
from transports.source import Delivery, DeliveryRun, PartitionKey, Passed, TopicSummary, Wants
from transports.window import Window

log = logging.getLogger(__name__)
Index = TypeVar("Index")
Item = TypeVar("Item")
#: Yielded by a windowed segment read at a block wholly after ``--until``: the topic's read
#: stops there, as it would at that block's first record.
_PAST_WINDOW = object()


@dataclass
class ReadCounts:
    """What the reads of a source touched: blocks decompressed and their bytes, blocks an
    index let a read skip (a window's by time, ``-n``'s by key), records passed by
    undecoded (``wants``), indexed segments none of whose blocks was read, and indexes
    (re)built from their segments."""

    blocks_read: int = 0
    bytes_read: int = 0
    blocks_skipped: int = 0
    records_passed: int = 0
    segments_skipped: int = 0
    indexes_built: int = 0
    indexes_missing: int = 0  # of those built: none was kept (said once per read)
    stretches_merged: int = 0  # of object indexes: taken from the index, not read
    key_indexes_built: int = 0  # of key indexes (``-n``), counted apart: said apart
    key_indexes_missing: int = 0

    def say_built(self, missing_before: int, what: str = "time index",
                  missing: str = "indexes_missing") -> None:
        """One line for the segments indexed because they had none (a first windowed or
        ``-n`` read, a directory this reader cannot write to); damaged ones are each said
        at once."""
        now = getattr(self, missing)
        if now > missing_before:
            log.warning("%s built for %d segment(s) that had none", what, now - missing_before)


class LocalLogSource:
    def __init__(self, directory: str) -> None:
        if not os.path.isdir(directory):
            raise TransportError(f"no local log at {directory}: not a directory")
        if layout.list_segments(directory):
            parent = os.path.dirname(os.path.abspath(directory))
            raise TransportError(f"{directory} is one topic's directory (it holds segments); "
                                 f"give the local log's root, {parent}")
        self._directory = directory
        self.counts = ReadCounts()
        self.locator = locator.LOCAL + os.path.realpath(directory)

    def record_at(self, topic: str, partition: int, offset: int) -> codec.Record | None:
        """The record at ``offset``: its block (mapped, not read: one page-in), decompressed
        and read up to the record."""
        segment, block_pos, index = layout.split_position(offset)
        path = os.path.join(self._directory, topic, layout.segment_name(segment))
        try:
            fh = open(path, "rb")
        except FileNotFoundError:
            return None
        with fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            header = layout.read_header(data)
            block = next(layout.scan_blocks(data, header, block_pos), None)
        if not isinstance(block, layout.Block) or block.position != block_pos:
            return None
        if index >= block.count:
            return None
        pos = 0
        for _ in range(index):
            pos = codec.read_at(block.data, pos, header.fingerprint)[1]
        return codec.read_at(block.data, pos, header.fingerprint)[0]

    def records_at(self, topic: str, partition: int,
                   offsets: Sequence[int]) -> dict[int, codec.Record | None]:
        """Each by ``record_at``: a local-log position is already a seek."""
        return {offset: self.record_at(topic, partition, offset) for offset in offsets}

    def topics(self, prefix: str | None = None) -> list[str]:
        names = sorted(d for d in os.listdir(self._directory)
                       if os.path.isdir(os.path.join(self._directory, d)))
        return [t for t in names if prefix is None or t.startswith(prefix + ".")]

    def read(self, topics: Sequence[str], *, after: Mapping[PartitionKey, int] | None = None,
             window: Window = Window(), runs: bool = False, wants: Wants | None = None
             ) -> Iterator[Delivery | DeliveryRun | Passed]:
        missing_before, keys_before = self.counts.indexes_missing, self.counts.key_indexes_missing
        wants = wants if runs else None  # Passed is a loader's, as runs are
        for topic in topics:
            for item in self._read_topic(topic, (after or {}).get((topic, 0)), window,
                                         wants=wants):
                if runs or not isinstance(item, DeliveryRun):
                    yield item
                else:
                    yield from item.deliveries()
        self.counts.say_built(missing_before)
        self.counts.say_built(keys_before, "key index", "key_indexes_missing")

    def summarize(self, topics: Sequence[str]) -> list[TopicSummary]:
        summaries, missing_before = [], self.counts.indexes_missing
        for topic in topics:
            count, first, last = 0, None, None
            for item in self._read_topic(topic, None, Window(), summaries=True):
                if isinstance(item, timeindex.BlockTimes):
                    count += item.count
                    first = item.first_us if first is None else min(first, item.first_us)
                    last = item.last_us if last is None else max(last, item.last_us)
                    continue
                if isinstance(item, DeliveryRun):
                    times = [e.received_at for e in item.envelopes]
                elif item.record is not None:
                    times = [item.record["receivedAt"]]
                else:
                    times = []
                count += len(item.envelopes) if isinstance(item, DeliveryRun) else 1
                if times:
                    first = min(times) if first is None else min(first, *times)
                    last = max(times) if last is None else max(last, *times)
            summaries.append(TopicSummary(topic, 1, count, first, last))
        self.counts.say_built(missing_before)
        return summaries

    def last_versions(self, topics: Sequence[str], before_us: int) -> Iterator[DeliveryRun]:
        """Each object's last version received before ``before_us`` (the state at a window's
        start; ``transports.versions``): per segment, the object index's stretches wholly
        before it merged, the stretch holding it read, and only the last versions fetched.
        A segment without a usable index (being written, no header) is read up to it."""
        missing_before = self.counts.indexes_missing
        for topic in topics:
            last = versions.LastVersions()
            topic_dir = os.path.join(self._directory, topic)
            segments = layout.list_segments(topic_dir) if os.path.isdir(topic_dir) else []
            for index, path in segments:
                newest = index == segments[-1][0]
                if not _versions_before(topic, index, path, before_us, last, self.counts,
                                        newest=newest):
                    break
            yield from last.runs(lambda key, located: _fetch(topic_dir, key, located))
        self.counts.say_built(missing_before, "object index")

    def close(self) -> None:
        """Nothing to release: files are opened per read."""

    def _read_topic(self, topic: str, after: int | None, window: Window, *,
                    summaries: bool = False, wants: Wants | None = None
                    ) -> Iterator[Delivery | DeliveryRun | Passed | timeindex.BlockTimes]:
        """The topic's records after ``after`` in the window; with ``summaries``, an indexed
        block whose times are known comes as its index entry, not read; with ``wants`` (and
        no window), the records it refuses as Passed, by the key index."""
        topic_dir = os.path.join(self._directory, topic)
        if not os.path.isdir(topic_dir):
            return
        after_segment = -1 if after is None else layout.split_position(after)[0]
        bounded = window.bounded  # asked once: most reads have no window
        segments = layout.list_segments(topic_dir)
        if segments and _lost_before_oldest(after, segments[0][0]):
            yield _before_oldest(topic, topic_dir, segments[0][0], 0 if after is None else after + 1)
        expected = segments[0][0] if segments else 0
        for index, path in segments:
            if expected < index and expected > after_segment:
                yield _missing_segments(topic, expected, index)
            expected = index + 1
            if index < after_segment:
                continue
            newest = index == segments[-1][0]
            if (bounded or summaries) and index > after_segment:
                items = _read_segment_window(topic, index, path, window, self.counts,
                                             newest=newest, summaries=summaries, wants=wants)
            elif wants is not None:
                items = _read_segment_keyed(topic, index, path, after, wants, self.counts,
                                            newest=newest)
            else:
                items = _read_segment(topic, index, path, after, self.counts, newest=newest)
            for item in items:
                if item is _PAST_WINDOW:
                    return
                if isinstance(item, (timeindex.BlockTimes, Passed)):
                    yield item
                    continue
                if isinstance(item, DeliveryRun):
                    kept, past = _in_window(item, window)
                    if kept is not None:
                        yield kept
                    if past:
                        return
                    continue
                if bounded and item.record is not None:
                    received = item.record["receivedAt"]
                    if window.before_start(received):
                        continue
                    if window.past_end(received):
                        return
                yield item


def _in_window(run: DeliveryRun, window: Window) -> tuple[DeliveryRun | None, bool]:
    """The records of ``run`` in the window, as a run (None when none is), and whether the
    run reached past the window's end (the topic's read stops at its first such record)."""
    if not window.bounded:
        return run, False
    times = [e.received_at for e in run.envelopes]
    stop = len(times)
    if window.past_end(times[-1]):
        stop = next(i for i, t in enumerate(times) if window.past_end(t))
    kept = [i for i in range(stop) if not window.before_start(times[i])]
    if len(kept) == len(times):
        return run, False
    if not kept:
        return None, stop < len(times)
    data = [run.data[i] for i in kept] if isinstance(run.data, list) else run.data
    return DeliveryRun(run.topic, run.partition, [run.offsets[i] for i in kept],
                       [run.envelopes[i] for i in kept], data), stop < len(times)


def _unreadable(topic: str, segment: int, start: int, end_offset: int, nbytes: int | None,
                cause: str) -> Delivery:
    offset = layout.make_position(segment, start, 0)
    log.warning("%s/0@%d: %s (%s bytes unreadable)", topic, offset, cause,
                "unknown" if nbytes is None else nbytes)
    return Delivery(topic, 0, offset, None, Unreadable(cause, nbytes, end_offset))


def _whole_segment(index: int) -> tuple[int, int]:
    """(from, to) offsets spanning all of segment ``index``."""
    return layout.make_position(index, 0, 0), layout.make_position(index + 1, 0, 0)


def _lost_before_oldest(after: int | None, oldest: int) -> bool:
    """Whether segments before ``oldest`` went unread: none was read yet, or the one this
    read resumes in is gone (a report of missing segments is at a segment's position 0)."""
    if after is None:
        return oldest > 0
    segment = layout.split_position(after)[0]
    return segment < oldest and after != layout.make_position(segment, 0, 0)


def _before_oldest(topic: str, topic_dir: str, oldest: int, offset: int) -> Delivery:
    """Segments before the oldest one: removed by retention (an unseen stretch, not
    damage) when ``retention.json`` says so, else missing."""
    end = _whole_segment(oldest - 1)[1]
    names = f"up to {layout.segment_name(oldest - 1)}"
    if layout.retained(topic_dir)["through"] >= oldest - 1:
        cause, error = f"retention: segments {names} removed", Retained
    else:
        cause, error = f"segments {names} missing", Unreadable
    nbytes = layout.retained(topic_dir)["bytes"] if error is Retained else None
    log.warning("%s/0@%d: %s", topic, offset, cause)
    return Delivery(topic, 0, offset, None, error(cause, nbytes, end))


def _missing_segments(topic: str, first: int, stop: int) -> Delivery:
    names = layout.segment_name(first) if stop == first + 1 else (
        f"{layout.segment_name(first)} to {layout.segment_name(stop - 1)}")
    return _unreadable(topic, first, 0, _whole_segment(stop - 1)[1], None,
                       f"segment {names} missing")


def _read_segment(topic: str, index: int, path: str, after: int | None,
                  counts: ReadCounts, *, newest: bool) -> Iterator[Delivery | DeliveryRun]:
    resuming_here = after is not None and layout.split_position(after)[0] == index
    try:
        fh = open(path, "rb")
    except OSError as exc:
        if not resuming_here:
            yield _unreadable(topic, index, 0, _whole_segment(index)[1], None,
                              f"segment {os.path.basename(path)} unreadable: {exc.strerror}")
        return
    with fh:
        size = os.fstat(fh.fileno()).st_size
        live = newest and layout.is_being_written(fh)
        if size == 0:
            if not live and not resuming_here:
                yield _unreadable(topic, index, 0, _whole_segment(index)[1], 0,
                                  f"segment {os.path.basename(path)} is empty")
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            try:
                header = layout.read_header(data)
            except DecodeError as exc:
                if not (live or resuming_here):
                    yield _unreadable(topic, index, 0, _whole_segment(index)[1], size,
                                      f"segment {os.path.basename(path)}: {exc}")
                return
            yield from _read_blocks(topic, index, data, header, after, counts, live=live)


def _read_blocks(topic: str, index: int, data: mmap.mmap, header: layout.SegmentHeader,
                 after: int | None, counts: ReadCounts, *,
                 live: bool) -> Iterator[Delivery | DeliveryRun]:
    start, skip_through = None, -1
    if after is not None:
        segment, block_pos, in_block = layout.split_position(after)
        if segment == index:
            start, skip_through = block_pos, in_block
    for item in layout.scan_blocks(data, header, start):
        if isinstance(item, layout.Damage):
            if item.position == start:
                continue  # reported by the run that stopped here
            if item.at_end and live:
                return  # a block the writer is still appending: wait for it
            yield _damaged(topic, index, item)
            continue
        counts.blocks_read += 1
        counts.bytes_read += item.end - item.position
        first = skip_through + 1 if item.position == start else 0
        yield from _block_records(topic, index, item, header.fingerprint, first)


def _damaged(topic: str, index: int, damage: layout.Damage) -> Delivery:
    return _unreadable(topic, index, damage.position, layout.make_position(index, damage.end, 0),
                       damage.end - damage.position, damage.reason)


def _read_segment_window(topic: str, index: int, path: str, window: Window,
                         counts: ReadCounts, *, newest: bool, summaries: bool = False,
                         wants: Wants | None = None
                         ) -> Iterator[Delivery | DeliveryRun | object]:
    """A closed segment's blocks that the window may hold, found by its time index (built
    first when missing or unusable); a segment being written, or one that cannot be indexed
    (no file, no header), is read whole, as without a window. With ``summaries``, a block of
    known times is given as its index entry instead of its records; with ``wants``, a block
    whose key index entry holds no record it may keep is skipped too (not counted as read,
    as the blocks before the window are not)."""
    def read(data: mmap.mmap, header: layout.SegmentHeader, stat: os.stat_result
             ) -> Iterator[Delivery | DeliveryRun | object]:
        found = _time_index(topic, path, data, header, stat, counts)
        unwanted = _unwanted_blocks(topic, path, data, header, stat, counts, wants)
        read_any = False
        for entry in found.entries:
            if isinstance(entry, layout.Damage):
                yield _damaged(topic, index, entry)
                continue
            if entry.before(window):
                counts.blocks_skipped += 1
                continue
            if entry.after(window):
                yield _PAST_WINDOW
                return
            if summaries and entry.first_us is not None:
                yield entry
                continue
            if (entry.position, entry.end) in unwanted:
                counts.blocks_skipped += 1
                if entry.reaches_past(window):
                    yield _PAST_WINDOW  # the topic's first record past the end is in it
                    return
                continue
            block = _indexed_block(topic, index, data, header, entry, counts)
            if isinstance(block, Delivery):
                yield block
                continue
            read_any = True
            yield from _block_records(topic, index, block, header.fingerprint, 0)
        counts.segments_skipped += not read_any
    return _indexed_or_whole(topic, index, path, None, counts, newest, read)


def _unwanted_blocks(topic: str, path: str, data: mmap.mmap, header: layout.SegmentHeader,
                     stat: os.stat_result, counts: ReadCounts, wants: Wants | None
                     ) -> set[tuple[int, int]]:
    """The byte ranges of the blocks holding no record ``wants`` may keep (by the key
    index); none without ``wants``."""
    if wants is None:
        return set()
    found = _key_index(topic, path, data, header, stat, counts)
    keeps = lambda namespace, name: wants(topic, namespace, name)  # noqa: E731
    return {(e.position, e.end) for e in found.entries
            if isinstance(e, keyindex.BlockKeys) and not e.wanted(keeps)}


def _read_segment_keyed(topic: str, index: int, path: str, after: int | None, wants: Wants,
                        counts: ReadCounts, *, newest: bool
                        ) -> Iterator[Delivery | DeliveryRun | Passed]:
    """A closed segment's records after ``after`` that ``wants`` may keep, found by its key
    index (built first when missing or unusable): a block holding none is not read, and of
    a block read only those records are decoded; the rest come as Passed. A segment being
    written, or one that cannot be indexed, is read whole."""
    def read(data: mmap.mmap, header: layout.SegmentHeader, stat: os.stat_result
             ) -> Iterator[Delivery | DeliveryRun | Passed]:
        found = _key_index(topic, path, data, header, stat, counts)
        start, first = -1, 0
        if after is not None and layout.split_position(after)[0] == index:
            _, start, first = layout.split_position(after)
            first += 1
        keeps = lambda namespace, name: wants(topic, namespace, name)  # noqa: E731
        for entry in found.entries:
            if entry.position < start or (entry.position == start
                                          and isinstance(entry, layout.Damage)):
                continue  # read (or reported) by the read that stopped here
            if isinstance(entry, layout.Damage):
                yield _damaged(topic, index, entry)
                continue
            begin = first if entry.position == start else 0
            wanted = entry.wanted(keeps, begin)
            if not wanted:
                counts.blocks_skipped += 1
                yield from _passed(topic, index, entry.position, begin, len(entry.records),
                                   counts)
                continue
            block = _indexed_block(topic, index, data, header, entry, counts)
            if isinstance(block, Delivery):
                yield block
                continue
            if entry.keys is None:  # a record's key is unknown: decoded as without an index
                yield from _block_records(topic, index, block, header.fingerprint, begin)
                continue
            yield from _wanted_records(topic, index, block, header.fingerprint, entry,
                                       wanted, begin, counts)
    return _indexed_or_whole(topic, index, path, after, counts, newest, read)


def _indexed_or_whole(
    topic: str, index: int, path: str, after: int | None, counts: ReadCounts, newest: bool,
    read: Callable[[mmap.mmap, layout.SegmentHeader, os.stat_result], Iterator[Item]],
) -> Iterator[Item | Delivery | DeliveryRun]:
    """Segment ``index`` as ``read`` gives it from the segment's mapped bytes, header and stat
    (through an index); one being written, or one that cannot be indexed (no file, no
    header), read whole after ``after``, as without an index."""
    with _opened(path, newest) as opened:
        if opened is None:
            yield from _read_segment(topic, index, path, after, counts, newest=newest)
        else:
            yield from read(*opened)


def _wanted_records(topic: str, index: int, block: layout.Block, fingerprint: bytes,
                    entry: keyindex.BlockKeys, wanted: list[int], begin: int,
                    counts: ReadCounts) -> Iterator[Delivery | DeliveryRun | Passed]:
    """The ``wanted`` records of ``block`` (ascending, from ``begin``), each stretch of
    consecutive ones decoded from its first byte; those between them passed."""
    i = 0
    while i < len(wanted):
        j = i
        while j + 1 < len(wanted) and wanted[j + 1] == wanted[j] + 1:
            j += 1
        yield from _passed(topic, index, block.position, begin, wanted[i], counts)
        yield from _block_records(topic, index, block, fingerprint, wanted[i],
                                  start=entry.starts[wanted[i]], stop=wanted[j] + 1)
        begin, i = wanted[j] + 1, j + 1
    yield from _passed(topic, index, block.position, begin, block.count, counts)


def _passed(topic: str, index: int, block_pos: int, first: int, stop: int,
            counts: ReadCounts) -> Iterator[Passed]:
    """Records ``first`` to ``stop`` (exclusive) of a block, passed by undecoded."""
    if stop > first:
        counts.records_passed += stop - first
        yield Passed(topic, 0, layout.make_position(index, block_pos, stop - 1), stop - first)


@contextlib.contextmanager
def _opened(path: str, newest: bool = False
            ) -> Iterator[tuple[mmap.mmap, layout.SegmentHeader, os.stat_result] | None]:
    """A segment's bytes (mapped), header and stat; None when it has none to give: no file,
    empty, no header, or (``newest``) still being written, so that it is read whole."""
    try:
        fh = open(path, "rb")
    except OSError:
        yield None
        return
    with fh:
        stat = os.fstat(fh.fileno())
        if stat.st_size == 0 or (newest and layout.is_being_written(fh)):
            yield None
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            try:
                header = layout.read_header(data)
            except DecodeError:
                yield None
                return
            yield data, header, stat


def _indexed_block(topic: str, index: int, data: mmap.mmap, header: layout.SegmentHeader,
                   entry: timeindex.BlockTimes | keyindex.BlockKeys,
                   counts: ReadCounts) -> layout.Block | Delivery:
    """The block an index entry points at, read; its range unreadable when it changed."""
    block = next(layout.scan_blocks(data, header, entry.position))
    if not isinstance(block, layout.Block) or block.end != entry.end:
        return _unreadable(topic, index, entry.position,
                           layout.make_position(index, entry.end, 0), entry.end - entry.position,
                           "the block the index points at changed")
    counts.blocks_read += 1
    counts.bytes_read += block.end - block.position
    return block


def _time_index(topic: str, path: str, data: mmap.mmap, header: layout.SegmentHeader,
                stat: os.stat_result, counts: ReadCounts) -> timeindex.TimeIndex:
    return _index(topic, path, "time index", timeindex.load(path, header, stat), lambda: (
        timeindex.build(data, header, stat, lambda block: _block_times(block, header))),
        lambda found: timeindex.save(path, found), counts)


def _index(topic: str, path: str, name: str, loaded: tuple[Index | None, str],
           build: Callable[[], Index], save: Callable[[Index], None],
           counts: ReadCounts, counted: tuple[str, str] = ("indexes_built", "indexes_missing")
           ) -> Index:
    """A segment's index as ``loaded`` (found, why not), else built from the segment and
    saved: one damaged or out of date is said at once, missing ones once per read (``counted``:
    the counts of those built and of those missing)."""
    found, why = loaded
    if found is not None:
        return found
    if why == "missing":
        setattr(counts, counted[1], getattr(counts, counted[1]) + 1)
    else:
        log.warning("%s: %s of %s %s: rebuilt from the segment", topic, name,
                    os.path.basename(path), why)
    found = build()
    setattr(counts, counted[0], getattr(counts, counted[0]) + 1)
    save(found)
    return found


def _key_index(topic: str, path: str, data: mmap.mmap, header: layout.SegmentHeader,
               stat: os.stat_result, counts: ReadCounts) -> keyindex.KeyIndex:
    return _index(topic, path, "key index", keyindex.load(path, header, stat), lambda: (
        keyindex.build(data, header, stat, lambda block: _block_keys(block, header))),
        lambda found: keyindex.save(path, found), counts,
        ("key_indexes_built", "key_indexes_missing"))


def _block_keys(block: layout.Block, header: layout.SegmentHeader) -> keyindex.BlockKeys | None:
    """A block's key index entry from its records; None when one does not decode."""
    keys: list[keyindex.Key] = []
    starts: list[int] = []
    pos = 0
    while len(keys) < block.count:
        starts.append(pos)
        envelopes, end = codec.read_run(block.data, pos, 1, header.fingerprint)
        if envelopes:
            keys.append((envelopes[0].namespace, envelopes[0].name))
        else:
            try:
                record, end = codec.read_at(block.data, pos, header.fingerprint)
            except DecodeError:
                return None
            keys.append((record["namespace"], record["name"]))
        pos = end
    return keyindex.BlockKeys.of(block.position, block.end, keys, tuple(starts))


def _block_times(block: layout.Block, header: layout.SegmentHeader
                 ) -> tuple[int | None, int | None]:
    """The first and last receive time of a block's records; None, None when one of them
    does not decode (its time is unknown, so the block is never skipped)."""
    times: list[int] = []
    for item in _block_records("", 0, block, header.fingerprint, 0):
        if isinstance(item, DeliveryRun):
            times.extend(e.received_at for e in item.envelopes)
        elif item.record is None:
            return None, None
        else:
            times.append(item.record["receivedAt"])
    return (min(times), max(times)) if times else (None, None)


def _block_records(topic: str, index: int, block: layout.Block, fingerprint: bytes,
                   first: int, *, start: int | None = None, stop: int | None = None
                   ) -> Iterator[Delivery | DeliveryRun]:
    """The records of ``block`` from its ``first`` (before ``stop``): runs of envelopes, a
    Delivery for each record fastavro reads, and where the block stops decoding. Given the
    byte ``start`` of record ``first`` (the key index's), those before it are not read."""
    pos, i = (0, 0) if start is None else (start, first)
    stop = block.count if stop is None else stop
    while i < stop:
        envelopes, end = codec.read_run(block.data, pos, stop - i, fingerprint)
        if envelopes:
            kept = range(max(i, first), i + len(envelopes))
            if kept:
                yield DeliveryRun(topic, 0, [layout.make_position(index, block.position, k)
                                             for k in kept], envelopes[kept.start - i:],
                                  block.data)
            i, pos = i + len(envelopes), end
            continue
        offset = layout.make_position(index, block.position, i)
        try:
            record, pos = codec.read_at(block.data, pos, fingerprint)
        except DecodeError as exc:  # the rest of this block cannot be framed
            yield Delivery(topic, 0, offset, None, Unreadable(
                f"records {i}..{block.count - 1} of the block do not decode: {exc}",
                block.end - block.position if i == 0 else None,
                layout.make_position(index, block.end, 0)))
            return
        if i >= first:
            yield Delivery(topic, 0, offset, record)
        i += 1


def _versions_before(topic: str, index: int, path: str, before_us: int,
                     last: versions.LastVersions, counts: ReadCounts, *, newest: bool) -> bool:
    """Take segment ``index``'s part of the state at ``before_us`` into ``last``; whether
    the topic goes on past it (no record at or after ``before_us`` was met)."""
    with _opened(path, newest) as opened:
        if opened is None:
            return _take_before(last, _read_segment(topic, index, path, None, counts,
                                                    newest=newest), before_us)
        data, header, stat = opened
        found = _object_index(topic, path, data, header, stat, counts)
        for stretch in found.entries:
            if stretch.before(before_us):
                counts.stretches_merged += 1
                last.locate((topic, 0), (
                    (uid, None if where is None else versions.Located(
                        layout.make_position(index, where[0], where[1]), where[2]))
                    for uid, where in stretch.versions.items()))
                continue
            with contextlib.closing(_blocks_between(topic, index, data, header, stretch,
                                                    counts)) as blocks:  # its view of data
                if not _take_before(last, blocks, before_us):
                    return False
    return True


def _take_before(last: versions.LastVersions, items: Iterator[Delivery | DeliveryRun],
                 before_us: int) -> bool:
    """Take ``items`` into ``last`` up to the first received at or after ``before_us``
    (whether none was)."""
    window = Window.ending_before(before_us)
    for item in items:
        if isinstance(item, DeliveryRun):
            kept, past = _in_window(item, window)
            if kept is not None:
                last.take(kept)
            if past:
                return False
        elif item.record is not None and window.past_end(item.record["receivedAt"]):
            return False
        else:
            last.take(item)
    return True


def _blocks_between(topic: str, index: int, data: mmap.mmap, header: layout.SegmentHeader,
                    stretch: objectindex.Stretch, counts: ReadCounts
                    ) -> Iterator[Delivery | DeliveryRun]:
    for item in layout.scan_blocks(data, header, stretch.position):
        if item.position >= stretch.end:
            return
        if isinstance(item, layout.Damage):
            continue  # the window's own read reports damage; the state takes what is whole
        counts.blocks_read += 1
        counts.bytes_read += item.end - item.position
        yield from _block_records(topic, index, item, header.fingerprint, 0)


def _fetch(topic_dir: str, key: PartitionKey, located: list[versions.Located]
           ) -> dict[int, tuple[Envelope, bytes]]:
    """The envelopes (and objects' bytes) of ``located`` versions, each decoded at its
    first byte in its block (each block read once); one whose block or record is no longer
    whole is left out."""
    by_block: dict[tuple[int, int], list[versions.Located]] = {}
    for version in located:
        segment, block_pos, _ = layout.split_position(version.position)
        by_block.setdefault((segment, block_pos), []).append(version)
    fetched: dict[int, tuple[Envelope, bytes]] = {}
    for segment in sorted({s for s, _ in by_block}):
        with _opened(os.path.join(topic_dir, layout.segment_name(segment))) as opened:
            if opened is None:
                continue
            data, header, _ = opened
            for (s, block_pos), wanted in by_block.items():
                if s != segment:
                    continue
                block = next(layout.scan_blocks(data, header, block_pos), None)
                if isinstance(block, layout.Block) and block.position == block_pos:
                    fetched.update(_decoded(key, block, header.fingerprint, wanted))
    return fetched


def _decoded(key: PartitionKey, block: layout.Block, fingerprint: bytes,
             wanted: list[versions.Located]) -> Iterator[tuple[int, tuple[Envelope, bytes]]]:
    for version in wanted:
        found, _ = codec.read_run(block.data, version.hint, 1, fingerprint)
        if found:
            yield version.position, versions.own_copy(found[0], block.data)
            continue
        try:  # typed parts, a marker: fastavro's
            record, _ = codec.read_at(block.data, version.hint, fingerprint)
        except DecodeError:
            continue
        run = DeliveryRun.of(Delivery(key[0], key[1], version.position, record))
        yield version.position, (run.envelopes[0], run.data_of(0))


def _object_index(topic: str, path: str, data: mmap.mmap, header: layout.SegmentHeader,
                  stat: os.stat_result, counts: ReadCounts) -> objectindex.ObjectIndex:
    return _index(topic, path, "object index", objectindex.load(path, header, stat), lambda: (
        objectindex.build(data, header, stat, lambda block: _block_objects(block, header))),
        lambda found: objectindex.save(path, found), counts)


def _block_objects(block: layout.Block, header: layout.SegmentHeader
                   ) -> tuple[list[objectindex.Indexed] | None, int | None]:
    """A block's records as the object index takes them, and their latest receive time;
    None, None when one of them does not decode."""
    indexed: list[objectindex.Indexed] = []
    latest, pos = None, 0
    for _ in range(block.count):
        found, end = codec.read_run(block.data, pos, 1, header.fingerprint)
        if found:
            uid, type_, received = found[0].uid, found[0].type, found[0].received_at
        else:
            try:
                record, end = codec.read_at(block.data, pos, header.fingerprint)
            except DecodeError:
                return None, None
            uid, type_, received = record.get("uid"), record["type"], record["receivedAt"]
        indexed.append((uid, type_, pos))
        latest = received if latest is None else max(latest, received)
        pos = end
    return indexed, latest
