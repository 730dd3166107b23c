"""The state at a window's start. A window (``replay --since``, ``incident``) holds only what
was received inside it, so an object alive at its start whose last change came earlier
would be missing: its state there, its timeline's first step, the stuck pod that has been
pending for an hour. Before the window's records, a window load takes each such object's
last version received before the window, and notes the window's start in ``window_starts``
so that sequence holes and session coverage leave those records out (they are a snapshot,
not a stretch the recorder delivered).

The source finds the last versions (``Source.last_versions``): the local log from its
index by object (the stretches before the window merged, only the last versions decoded),
Kafka by reading each partition up to the window's start (of a topic keyed by object,
only each key's last message decoded). Both are exact whatever the look-back — an object
listed when the recording began and never changed since is found as surely as one changed
a second before the window (a bounded look-back cannot be exact: docs/performance.md).
"""

from __future__ import annotations

from typing import Iterator

from replayer.record_filter import RecordFilter
from transports.source import DeliveryRun, Source


def state_at(source: Source, prefix: str, keep: RecordFilter, since_us: int
             ) -> Iterator[DeliveryRun]:
    """Each object's last version before ``since_us`` in ``prefix``'s topics, the groups of
    ``keep.read_order`` in their order (as the window's own records are read)."""
    for group in keep.read_order(source.topics(prefix), prefix):
        yield from source.last_versions(group, since_us)
