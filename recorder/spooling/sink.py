"""A sink that keeps recording while Kafka is unreachable: records go to the on-disk spool
and are drained to the broker in order once it answers again.

Records sent to the inner sink stay in memory until a flush confirms them. When a send or a
flush fails, those unconfirmed records and every later one go to the spool (so some may
reach the broker twice: duplicates share session, topic and seq and keep their order); the
failed producer is closed in the background and a drainer thread delivers the spool through
a fresh one, then switches back to direct sends. A full spool blocks ``send``: the recorder
stops reading watches instead of dropping records. A record the broker rejects for a reason
retrying cannot cure is tried once more on its own (a batch-level refusal may have been
about its neighbours) and then dead-lettered (``deadletter``): kept beside the spool, replaced
by a marker, and recording goes on.

A flush behind (``flush_behind``) waits for the broker in a thread of its own: meanwhile
``send`` keeps records in memory rather than in the producer (whose flush waits for all it
holds, so records arriving during it would keep it waiting), and hands them over once the
flush is settled — in order, the spool taking them if it failed.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

from recorder.spooling.deadletter import DeadLetters
from recorder.spooling.spool import Entry, Spool, SpoolFull
from schemas import codec
from schemas.codec import Record
from transports.sink import Outgoing, RecordsRejected, Rejection, Sink

log = logging.getLogger(__name__)

#: Bytes of records a flush behind may keep waiting in memory (~2,700 records of 6 KB:
#: over a tenth of a second at 20k records/s, where an acknowledgement usually takes ~25
#: ms); beyond that ``send`` waits for the flush, as a flush in the recording thread would.
#: Counted in bytes, as memory is: a bound of 10,000 records cost ~100 MB of peak RSS.
HELD_MAX_BYTES = 16 * 1024 * 1024


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
        self._unconfirmed: list[tuple[str, Outgoing]] = []
        #: records sent while a flush behind waits for the producer, and whether one does
        self._held: list[tuple[str, Outgoing]] = []
        self._held_bytes = 0
        self._holding = False
        self._flusher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flush-behind")
        self._behind: Future[None] | None = None
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
        self.send_encoded(topic, Outgoing.of(record))

    def send_encoded(self, topic: str, outgoing: Outgoing) -> None:
        with self._lock:
            while self._holding:
                if self._held_bytes < HELD_MAX_BYTES:
                    self._held.append((topic, outgoing))
                    self._held_bytes += len(outgoing.body)
                    return
                self._cond.wait()  # the broker is slow to acknowledge: wait, as flush does
            if not self._spooling:
                try:
                    assert self._inner is not None
                    try:
                        self._inner.send_encoded(topic, outgoing)
                        self._unconfirmed.append((topic, outgoing))
                        return
                    except RecordsRejected as rejected:
                        # settling replaces the producer: what it still holds is confirmed
                        # first (a producer that refused may fail the rest, unseen once closed)
                        self._flush_now()
                        if not self._spooling:
                            self._settle(rejected.rejected)
                            return
                except Exception as exc:  # any producer failure means "spool from here on"
                    self._fail(exc)
            self._append(topic, codec.frame(outgoing.body))

    def flush(self, timeout: float | None = None) -> None:
        """Durable on return: acknowledged by the broker, or fsynced into the spool."""
        self._wait_behind()
        self._flush_now(timeout)

    def _flush_now(self, timeout: float | None = None) -> None:
        with self._cond:
            if not self._spooling:
                self._settle_flush(self._producer_flush(timeout))
            spooling = self._spooling
            if spooling:
                self._spool.sync()
        if spooling:
            self._wake.set()

    def flush_behind(self, then: Callable[[], None]) -> None:
        """``flush`` in the flusher thread, then ``then`` there; returns at once."""
        self._wait_behind()
        self._behind = self._flusher.submit(self._flush_then, then)

    def flushing_behind(self) -> bool:
        behind = self._behind
        return behind is not None and not behind.done()

    def _wait_behind(self) -> None:
        """The flush behind in flight (if any) finished; its error raised here."""
        behind, self._behind = self._behind, None
        if behind is not None:
            behind.result()

    def _flush_then(self, then: Callable[[], None]) -> None:
        with self._cond:
            self._holding = not self._spooling
        if self._holding:  # only this thread touches the producer until holding ends
            error = self._producer_flush(None)
            with self._cond:
                self._holding = False
                self._settle_flush(error)
                held, self._held, self._held_bytes = self._held, [], 0
                for topic, outgoing in held:  # after the flushed ones: direct, or spooled
                    self.send_encoded(topic, outgoing)
                self._cond.notify_all()
        with self._cond:
            spooling = self._spooling
            if spooling:
                self._spool.sync()
        if spooling:
            self._wake.set()
        then()

    def _producer_flush(self, timeout: float | None) -> BaseException | None:
        try:
            assert self._inner is not None
            self._inner.flush(timeout=timeout or self._flush_timeout)
        except Exception as exc:  # settled by _settle_flush, with the lock held
            return exc
        return None

    def _settle_flush(self, error: BaseException | None) -> None:
        """Called with the lock held, after the producer's flush: the unconfirmed records
        are confirmed, or (rejected) sent alone and dead-lettered, or spooled."""
        try:
            if isinstance(error, RecordsRejected):  # the rest were acknowledged
                self._unconfirmed = [(r.topic, Outgoing.of(r.record)) for r in error.rejected]
                self._settle(error.rejected)
            elif error is not None:
                raise error
            self._unconfirmed.clear()
        except Exception as exc:  # any producer failure means "spool from here on"
            self._fail(exc)

    def close(self) -> None:
        """Flush; records still spooled stay on disk for the next run."""
        try:
            self.flush()
        finally:
            self._flusher.shutdown()
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
        for topic, outgoing in pending:
            self._append(topic, codec.frame(outgoing.body))

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
