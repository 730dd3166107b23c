"""Reads a local log directory written by the recorder's local-log sink."""

from __future__ import annotations

import io
import logging
import mmap
import os
import time
from typing import Iterator, Mapping, Sequence

from replayer.sources import Delivery, PartitionKey, TopicSummary
from schemas import codec, locallog
from schemas.errors import DecodeError, TransportError

log = logging.getLogger(__name__)
FOLLOW_POLL_S = 0.5


class LocalLogSource:
    def __init__(self, directory: str) -> None:
        if not os.path.isdir(directory):
            raise TransportError(f"no local log at {directory}: not a directory")
        self._directory = directory

    def topics(self, prefix: str | None = None) -> list[str]:
        names = sorted(d for d in os.listdir(self._directory)
                       if os.path.isdir(os.path.join(self._directory, d)))
        return [t for t in names if prefix is None or t.startswith(prefix + ".")]

    def read(
        self,
        topics: Sequence[str],
        *,
        after: Mapping[PartitionKey, int] | None = None,
        since_us: int | None = None,
        until_us: int | None = None,
        follow: bool = False,
    ) -> Iterator[Delivery]:
        cursors = {t: (after or {}).get((t, 0)) for t in topics}
        while True:
            progressed = False
            for topic in topics:
                for delivery in self._read_topic(topic, cursors[topic], since_us, until_us):
                    cursors[topic] = delivery.offset
                    progressed = True
                    yield delivery
            if not follow:
                return
            if not progressed:
                time.sleep(FOLLOW_POLL_S)

    def summarize(self, topics: Sequence[str]) -> list[TopicSummary]:
        summaries = []
        for topic in topics:
            count, first, last = 0, None, None
            for delivery in self._read_topic(topic, None, None, None):
                count += 1
                if delivery.record is not None:
                    received = delivery.record["receivedAt"]
                    first = received if first is None else min(first, received)
                    last = received if last is None else max(last, received)
            summaries.append(TopicSummary(topic, 1, count, first, last))
        return summaries

    def close(self) -> None:
        """Nothing to release: files are opened per read."""

    def _read_topic(self, topic: str, after: int | None, since_us: int | None,
                    until_us: int | None) -> Iterator[Delivery]:
        topic_dir = os.path.join(self._directory, topic)
        if not os.path.isdir(topic_dir):
            return
        start_segment = -1 if after is None else locallog.split_position(after)[0]
        for index, path in locallog.list_segments(topic_dir):
            if index < start_segment:
                continue
            for delivery in _read_segment(topic, index, path, after):
                record = delivery.record
                if record is not None and since_us is not None and record["receivedAt"] < since_us:
                    continue
                if record is not None and until_us is not None and record["receivedAt"] > until_us:
                    return
                yield delivery


def _read_segment(topic: str, index: int, path: str, after: int | None) -> Iterator[Delivery]:
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            try:
                header = locallog.read_header(data)
            except DecodeError as exc:
                yield Delivery(topic, 0, locallog.make_position(index, 0, 0), None,
                               DecodeError(f"{topic} segment {index}: {exc}"))
                return
            yield from _read_blocks(topic, index, data, header, after)


def _read_blocks(topic: str, index: int, data: mmap.mmap, header: locallog.SegmentHeader,
                 after: int | None) -> Iterator[Delivery]:
    start, skip_through = None, -1
    if after is not None:
        segment, block_pos, in_block = locallog.split_position(after)
        if segment == index:
            start, skip_through = block_pos, in_block
    for item in locallog.scan_blocks(data, header, start):
        if isinstance(item, locallog.Damage):
            offset = locallog.make_position(index, item.position, 0)
            log.warning("%s/0@%d: %s (%d bytes skipped)", topic, offset, item.reason,
                        item.end - item.position)
            if not item.at_end:  # a torn tail may still be being written: not an error yet
                yield Delivery(topic, 0, offset, None, DecodeError(item.reason))
            continue
        stream = io.BytesIO(item.data)
        first = skip_through + 1 if item.position == start else 0
        for i in range(item.count):
            offset = locallog.make_position(index, item.position, i)
            try:
                record = codec.read_one(stream, header.fingerprint)
            except DecodeError as exc:
                yield Delivery(topic, 0, offset, None, exc)
                break  # the rest of this block cannot be framed
            if i >= first:
                yield Delivery(topic, 0, offset, record)
