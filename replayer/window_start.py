"""The state at a window's start. A window (``replay --since``, ``incident``) holds only what
was received inside it, so an object alive at its start whose last change came earlier
would be missing: its state there, its timeline's first step, the stuck pod that has been
pending for an hour. Before the window's records, a window load takes each such object's
last version received before the window, and notes the window's start in ``window_starts``
so that sequence holes and session coverage leave those records out (they are a snapshot,
not a stretch the recorder delivered).

The last versions are found by reading the topics up to the window's start, envelopes only
(no object is parsed, nothing is written): exact whatever the look-back — an object listed
when the recording began and never changed since is found as surely as one changed a
second before the window (a bounded look-back cannot be exact: docs/performance.md).
"""

from __future__ import annotations

from typing import Iterable, Iterator

import msgspec

from replayer.dedup import OBJECT_TYPES
from schemas.envelope import Envelope
from transports.source import Delivery, DeliveryRun, PartitionKey

#: Versions that say the object is gone: not part of the state at the window's start.
_GONE = frozenset({"DELETED", "INFERRED_DELETED"})

_LastVersion = tuple[int, Envelope, bytes]  # position, envelope, the object's bytes


def last_versions(before: Iterable[Delivery | DeliveryRun]) -> Iterator[DeliveryRun]:
    """Each object's last version in ``before`` (the records up to the window's start; none
    for an object whose last version says it was deleted), per partition in position order
    and the partitions in the order they came, as runs a load takes before the window's."""
    last: dict[PartitionKey, dict[str, _LastVersion]] = {}
    for item in before:
        if isinstance(item, Delivery):
            if item.record is None:
                continue  # damage before the window: the window's own read reports its own
            item = DeliveryRun.of(item)
        objects = last.setdefault((item.topic, item.partition), {})
        for i, e in enumerate(item.envelopes):
            if e.type not in OBJECT_TYPES or not e.uid:
                continue
            if e.type in _GONE:
                objects.pop(e.uid, None)
            else:
                objects[e.uid] = (item.offsets[i], *_own_copy(e, item.data_of(i)))
    for (topic, partition), objects in last.items():
        versions = sorted(objects.values(), key=lambda version: version[0])
        if versions:
            yield DeliveryRun(topic, partition, [v[0] for v in versions],
                              [v[1] for v in versions], [v[2] for v in versions])


def _own_copy(e: Envelope, data: bytes) -> tuple[Envelope, bytes]:
    """The envelope and its object's bytes apart from the block they were decoded from
    (keeping a view would keep every block before the window in memory)."""
    span = e.object
    if not isinstance(span, tuple):
        return e, b""
    body = bytes(data[span[0]:span[1]])
    return msgspec.structs.replace(e, object=(0, len(body))), body
