"""A sink that keeps recording while Kafka is unreachable: records go to the on-disk spool
and are drained to the broker in order once it answers again.

Records sent to the inner sink stay in memory until a flush confirms them. When a send or a
flush fails, those unconfirmed records and every later one go to the spool (so some may
reach the broker twice: duplicates share session, topic and seq and keep their order); the
failed producer is closed in the background and a drainer thread delivers the spool through
a fresh one, then switches back to direct sends. A full spool blocks ``send``: the recorder
stops reading watches instead of dropping records. A record the broker rejects for a reason
retrying cannot cure is tried once more on its own (a batch-level refusal may have been
about its neighbours) and then dead-lettered (``recorder.deadletter``): kept beside the spool,
replaced by a marker, and recording goes on.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from recorder.deadletter import DeadLetters
from recorder.sinks import RecordsRejected, Rejection, Sink
from recorder.spool import Entry, Spool, SpoolFull
from schemas import codec
from schemas.codec import Record

log = logging.getLogger(__name__)


class SpoolingSink:
    def __init__(self, connect: Callable[[], Sink], spool: Spool, *, flush_timeout: float = 10.0,
                 retry_initial_s: float = 1.0, retry_max_s: float = 15.0,
                 on_error: Callable[[BaseException], None] = lambda exc: None,
                 dead_letters: DeadLetters | None = None) -> None:
        self._connect, self._spool = connect, spool
        self.dead_letters = dead_letters or DeadLetters(spool.directory)
        self._flush_timeout = flush_timeout
        self._retry = (retry_initial_s, retry_max_s)
        self._on_error = on_error
        self._inner: Sink | None = connect()  # a broker unreachable at start is a clear error
        self.max_record_bytes = self._inner.max_record_bytes
        self._unconfirmed: list[tuple[str, Record]] = []
        # ``send`` takes the lock itself: entering the Condition is a Python call more per record
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._spooling = len(spool) > 0
        self._stopping = False
        self._wake = threading.Event()
        self._drainer = threading.Thread(target=self._drain_loop, name="spool-drainer", daemon=True)
        self._drainer.start()

    @property
    def spooling(self) -> bool:
        return self._spooling

    def depth(self) -> tuple[int, int]:
        """(records, bytes) waiting in the spool."""
        with self._cond:
            return len(self._spool), self._spool.bytes

    def send(self, topic: str, record: Record) -> None:
        with self._lock:
            if not self._spooling:
                try:
                    assert self._inner is not None
                    try:
                        self._inner.send(topic, record)
                        self._unconfirmed.append((topic, record))
                        return
                    except RecordsRejected as rejected:
                        # settling replaces the producer: what it still holds is confirmed
                        # first (a producer that refused may fail the rest, unseen once closed)
                        self.flush()
                        if not self._spooling:
                            self._settle(rejected.rejected)
                            return
                except Exception as exc:  # any producer failure means "spool from here on"
                    self._fail(exc)
            self._append(topic, codec.frame(codec.encode(record)))

    def flush(self, timeout: float | None = None) -> None:
        """Durable on return: acknowledged by the broker, or fsynced into the spool."""
        with self._cond:
            if not self._spooling:
                try:
                    assert self._inner is not None
                    try:
                        self._inner.flush(timeout=timeout or self._flush_timeout)
                    except RecordsRejected as rejected:  # the rest were acknowledged
                        self._unconfirmed = [(r.topic, r.record) for r in rejected.rejected]
                        self._settle(rejected.rejected)
                    self._unconfirmed.clear()
                    return
                except Exception as exc:
                    self._fail(exc)
            self._spool.sync()
        self._wake.set()

    def close(self) -> None:
        """Flush; records still spooled stay on disk for the next run."""
        try:
            self.flush()
        finally:
            with self._cond:
                self._stopping = True
                self._cond.notify_all()
            self._wake.set()
            self._drainer.join(timeout=self._flush_timeout + 5)
            with self._cond:
                if self._inner is not None and not self._spooling:
                    self._inner.close()
                if len(self._spool):
                    log.warning("%d records stay in the spool %s: the next run with this spool "
                                "directory sends them first", len(self._spool), self._spool.directory)
                self._spool.close()

    def stop_waiting(self) -> None:
        """Make a ``send`` blocked on a full spool raise SpoolFull (shutdown)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    # --- failure and spool --------------------------------------------------------------

    def _fail(self, exc: BaseException) -> None:
        """Called with the lock held: move to spooling and keep every unconfirmed record."""
        log.error("Kafka unavailable (%s); spooling %d unconfirmed and all new records to %s",
                  exc, len(self._unconfirmed), self._spool.directory)
        self._on_error(exc)
        self._spooling = True
        inner, self._inner = self._inner, None
        if inner is not None:
            # close() waits for the producer's own retries; never block the recorder on it
            threading.Thread(target=_close_quietly, args=(inner,), daemon=True).start()
        pending, self._unconfirmed = self._unconfirmed, []
        for topic, record in pending:
            self._append(topic, codec.frame(codec.encode(record)))

    def _append(self, topic: str, framed: bytes) -> None:
        while True:
            try:
                self._spool.append(topic, framed)
                return
            except SpoolFull:
                if self._stopping:
                    raise
                log.warning("spool full (%d bytes): pausing until Kafka takes records again",
                            self._spool.bytes)
                self._wake.set()
                self._cond.wait(timeout=5)

    # --- drainer thread -------------------------------------------------------------------

    def _drain_loop(self) -> None:
        delay = self._retry[0]
        while True:
            self._wake.wait(timeout=delay)
            self._wake.clear()
            with self._cond:
                if self._stopping:
                    return
                busy = self._spooling
            if not busy:
                continue
            if self._drain():
                delay = self._retry[0]
            else:
                delay = min(delay * 2, self._retry[1])

    def _drain(self) -> bool:
        """Send the spool through a (fresh) producer in order; False when the broker failed."""
        try:
            self._inner = self._inner or self._connect()
            while not self._stopping:
                with self._cond:
                    batch = self._spool.peek(2000)
                    if not batch:
                        self._spooling = False  # later sends go direct, after all spooled ones
                        log.warning("spool drained; sending to Kafka directly again")
                        return True
                self._send_batch(batch)
                with self._cond:
                    self._spool.commit(batch)
                    self._cond.notify_all()
            return True
        except Exception as exc:  # broker still away: keep the spool, retry later
            log.info("spool drain failed (%s); retrying", exc)
            self._on_error(exc)
            inner, self._inner = self._inner, None
            if inner is not None:
                threading.Thread(target=_close_quietly, args=(inner,), daemon=True).start()
            return False

    def _send_batch(self, batch: list[Entry]) -> None:
        for entry in batch:
            fingerprint, body = codec.unframe(entry.framed)
            try:
                self._inner.send(entry.topic, codec.decode(body, fingerprint))
            except RecordsRejected as rejected:
                self._inner.flush(timeout=self._flush_timeout)  # as in send: the rest first
                self._settle(rejected.rejected)
        try:
            self._inner.flush(timeout=self._flush_timeout)
        except RecordsRejected as rejected:
            self._settle(rejected.rejected)

    # --- rejections -----------------------------------------------------------------------

    def _settle(self, rejected: list[Rejection]) -> None:
        """Each rejected record alone once more (a batch may have been refused for one of
        its records), through a fresh producer: an idempotent producer that met a fatal error
        refuses everything after it. If refused again, it is dead-lettered and its marker
        sent. Other failures propagate (the caller spools, as for any failure)."""
        for rejection in rejected:
            try:
                self._send_alone(rejection.topic, rejection.record)
            except RecordsRejected:
                marker = self.dead_letters.keep(rejection)
                self._send_alone(rejection.topic, marker)

    def _send_alone(self, topic: str, record: Record) -> None:
        inner, self._inner = self._inner, None
        if inner is not None:
            threading.Thread(target=_close_quietly, args=(inner,), daemon=True).start()
        self._inner = self._connect()
        self._inner.send(topic, record)
        self._inner.flush(timeout=self._flush_timeout)


def _close_quietly(sink: Sink) -> None:
    try:
        sink.close()
    except Exception as exc:  # the broker is gone; this producer's leftovers are in the spool
        log.debug("closing a failed producer: %s", exc)
