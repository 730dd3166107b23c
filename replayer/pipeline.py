"""A load's three threads: reading, parsing and writing batches overlap.

A reader thread takes deliveries into batches (Python, holding the GIL), a parser thread
parses the next batch's objects (DuckDB, which releases the GIL) while the calling thread
writes the batch before it, so a load keeps two cores busy. Batches are written one at a
time, in the order they were taken; an error on any thread is raised by the calling
thread after the batches before it are written, and the others stop.
"""

from __future__ import annotations

import queue
import threading
from typing import Callable, Generic, Iterator, TypeVar

#: Batches the reader may take ahead of the one being parsed, and parsed ahead of the one
#: being written.
READ_AHEAD = 1
PARSE_AHEAD = 1
_END = object()

Batch = TypeVar("Batch")


class Pipeline(Generic[Batch]):
    """``take`` (given the stop event, to check between its deliveries) yields batches on
    the reader thread, ``parse`` prepares each on the parser thread, ``write`` writes each
    on the calling thread; ``discard`` releases what a batch parsed but never written
    holds."""

    def __init__(self, take: Callable[[threading.Event], Iterator[Batch]],
                 parse: Callable[[Batch], None], write: Callable[[Batch], None],
                 discard: Callable[[Batch], None]) -> None:
        self._take, self._parse, self._write, self._discard = take, parse, write, discard
        self._taken: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
        self._parsed: queue.Queue = queue.Queue(maxsize=PARSE_AHEAD)
        self._stop = threading.Event()

    def run(self) -> None:
        """Every batch taken, parsed and written, or the first error raised."""
        threads = [threading.Thread(target=self._reader, name="ktrace-load-reader", daemon=True),
                   threading.Thread(target=self._parser, name="ktrace-load-parser", daemon=True)]
        for thread in threads:
            thread.start()
        try:
            while (batch := self._parsed.get()) is not _END:
                if isinstance(batch, BaseException):
                    raise batch
                self._write(batch)
        finally:
            self._stop.set()
            leftovers = []
            for thread in threads:  # one blocked on a full queue sees stop
                while thread.is_alive():
                    leftovers += self._drain()
            for leftover in leftovers + self._drain():
                if not isinstance(leftover, BaseException) and leftover is not _END:
                    self._discard(leftover)

    def _reader(self) -> None:
        try:
            for batch in self._take(self._stop):
                if not self._hand_over(self._taken, batch):
                    return
            self._hand_over(self._taken, _END)
        except BaseException as exc:  # the writer raises it, after the batches before it
            self._hand_over(self._taken, exc)

    def _parser(self) -> None:
        """Parse each taken batch, in order; the reader's end or error is passed on as it
        came."""
        while not self._stop.is_set():
            try:
                batch = self._taken.get(timeout=0.1)
            except queue.Empty:
                continue
            if batch is not _END and not isinstance(batch, BaseException):
                try:
                    self._parse(batch)
                except BaseException as exc:
                    self._discard(batch)
                    batch = exc
            if not self._hand_over(self._parsed, batch) or batch is _END \
                    or isinstance(batch, BaseException):
                return

    def _hand_over(self, q: queue.Queue, item: object) -> bool:
        """Put ``item`` on ``q`` once it has room; False when the load stopped first."""
        while not self._stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                pass
        return False

    def _drain(self) -> list[object]:
        """What the queues hold, taken off them (a thread blocked on one then sees stop)."""
        items = []
        for q in (self._taken, self._parsed):
            try:
                while True:
                    items.append(q.get(timeout=0.02))
            except queue.Empty:
                pass
        return items
