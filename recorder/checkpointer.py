"""When checkpoints are saved: only once the sink holds every record they account for.

At each checkpoint point (every ``flush_records`` records or ``flush_interval_s``) the
changed watches' checkpoints are taken (their journal lines, or a copy of the known map
when a snapshot is due), and saved when the sink has made every record sent so far
durable. For Kafka that is a flush in the background (``Sink.flush_behind``): the recording
thread goes on while the broker acknowledges, and the records it sends meanwhile belong to
the next point; a point that comes while that flush still waits is skipped, so a slow
acknowledgement never stalls the recording thread. A crash in between loses checkpoints,
never records: the restart resumes from an earlier checkpoint and records some events
twice. ``flush`` waits for the sink and saves everything: the session's end.

``on_confirmed`` is called (in the thread that saw it) each time the destination itself
confirmed every record sent before a point: acknowledged by Kafka, written and fsynced by the
local log. Records that went to the spool instead are durable but not yet confirmed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Callable

from recorder.checkpoint import CheckpointStore, Taken
from transports.sink import Sink

if TYPE_CHECKING:  # the writer imports the sinks; this module only reads its watch states
    from recorder.writer import WatchState


class Checkpointer:
    def __init__(self, sink: Sink, store: CheckpointStore | None,
                 states: Mapping[str, WatchState],
                 on_confirmed: Callable[[], None] = lambda: None) -> None:
        self.sink, self.store, self.states = sink, store, states
        self.on_confirmed = on_confirmed

    def mark(self) -> None:
        """A checkpoint point: what changed is saved once the records so far are durable.
        Skipped while the last point's flush behind still waits: recording goes on (the
        sink holds what it is sent meanwhile, within its bound) and the next point covers
        those records."""
        if self.sink.flushing_behind():
            return
        dirty = [state for state in self.states.values() if state.dirty]
        store = self.store
        if store is None or not dirty:
            self.sink.flush_behind(self._confirm)
            return
        taken = [(state.target.key, state.checkpoint.take(
            snapshot=store.snapshot_due(state.target.key))) for state in dirty]
        for state in dirty:
            state.dirty = False

        def settled() -> None:
            _save(store, taken)
            self._confirm()
        self.sink.flush_behind(settled)

    def flush(self) -> None:
        """Everything sent durable, then every changed checkpoint saved."""
        self.sink.flush()
        for state in self.states.values():
            if state.dirty:
                if self.store is not None:
                    self.store.save(state.target.key, state.checkpoint)
                state.dirty = False
        self._confirm()

    def _confirm(self) -> None:
        """After a flush: ``on_confirmed`` unless records are in the spool. A spooling sink
        leaves spooling only once the spool is drained, so not spooling means every record
        sent before the flush was acknowledged (a later send's failure errs on the safe side)."""
        if not getattr(self.sink, "spooling", False):
            self.on_confirmed()


def _save(store: CheckpointStore, taken: list[tuple[str, Taken]]) -> None:
    for key, checkpoint in taken:
        store.save_taken(key, checkpoint)
