"""Each object's last version in a stretch of a recording: the state at a window's start
(``Source.last_versions``). An object whose last record there says it is gone has none.

``LastVersions`` takes records as a read gives them (a scan: every source can) and, from
an index that already knows where a version is (the local log's ``objectindex``), positions
whose records are fetched at the end, only those that are still the last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import msgspec

from schemas.envelope import Envelope
from schemas.records import GONE_TYPES, OBJECT_TYPES
from transports.source import Delivery, DeliveryRun, PartitionKey


@dataclass(frozen=True, slots=True)
class Located:
    """A last version known by where it is, not yet read: its position and the ``hint``
    its source needs to fetch it (the local log: the record's first byte in its block)."""

    position: int
    hint: int


_Read = tuple[int, Envelope, bytes]  # position, envelope, the object's bytes
#: Fetches the envelopes (and their objects' bytes) of a partition's located versions.
Fetch = Callable[[PartitionKey, list[Located]], dict[int, tuple[Envelope, bytes]]]


class LastVersions:
    def __init__(self) -> None:
        self._last: dict[PartitionKey, dict[str, _Read | Located]] = {}

    def take(self, item: Delivery | DeliveryRun) -> None:
        """The records of ``item``, read in the partition's order."""
        if isinstance(item, Delivery):
            if item.record is None:
                return  # damage before the window: the window's own read reports its own
            item = DeliveryRun.of(item)
        objects = self._last.setdefault((item.topic, item.partition), {})
        for i, e in enumerate(item.envelopes):
            if e.type not in OBJECT_TYPES or not e.uid:
                continue
            if e.type in GONE_TYPES:
                objects.pop(e.uid, None)
            else:
                objects[e.uid] = (item.offsets[i], *own_copy(e, item.data_of(i)))

    def locate(self, key: PartitionKey, versions: Iterable[tuple[str, Located | None]]
               ) -> None:
        """Objects' last versions from an index, in the partition's order (None: gone)."""
        objects = self._last.setdefault(key, {})
        for uid, located in versions:
            if located is None:
                objects.pop(uid, None)
            else:
                objects[uid] = located

    def runs(self, fetch: Fetch | None = None) -> Iterator[DeliveryRun]:
        """The last versions, per partition in position order and the partitions in the
        order they came, as runs a load takes before the window's; a located version whose
        record could not be fetched (damaged since it was indexed) is left out."""
        for key, objects in self._last.items():
            located = [v for v in objects.values() if isinstance(v, Located)]
            fetched = fetch(key, located) if located and fetch is not None else {}
            versions = sorted(
                (v if not isinstance(v, Located) else (v.position, *fetched[v.position])
                 for v in objects.values()
                 if not isinstance(v, Located) or v.position in fetched),
                key=lambda version: version[0])
            if versions:
                yield DeliveryRun(key[0], key[1], [v[0] for v in versions],
                                  [v[1] for v in versions], [v[2] for v in versions])


def scan(before: Iterable[Delivery | DeliveryRun]) -> Iterator[DeliveryRun]:
    """Each object's last version in ``before`` (the records up to the window's start)."""
    last = LastVersions()
    for item in before:
        last.take(item)
    return last.runs()


def own_copy(e: Envelope, data: bytes) -> tuple[Envelope, bytes]:
    """The envelope and its object's bytes apart from the block they were decoded from
    (keeping a view would keep every block before the window in memory)."""
    span = e.object
    if not isinstance(span, tuple):
        return e, b""
    body = bytes(data[span[0]:span[1]])
    return msgspec.structs.replace(e, object=(0, len(body))), body

