"""One recording session: connect, start a watch thread per target, write records in one
thread, flush and checkpoint regularly, stop cleanly on SIGTERM/SIGINT or after --duration.

Only this module deals with threads and signals; the informer and the writer it connects
are plain, testable objects.
"""

from __future__ import annotations

import fcntl
import logging
import os
import queue
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from typing import BinaryIO
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from recorder.checkpoint import Checkpoint, CheckpointStore
from recorder.checkpointer import Checkpointer
from recorder.informer import Informer, InformerError, Item, KubeWatchApi
from recorder.kube.catalogue import Target, parse_kinds, resolve_targets
from recorder.kube.client import ApiClient
from recorder.kube.config import ClusterConfig, load_config
from recorder.metrics import HealthServer, Heartbeat, Metrics
from schemas.redaction import Redactor
from recorder.settings import DEFAULT_OUT, RecordSettings
from recorder.spooling.deadletter import DeadLetters
from recorder.spooling.spool import Spool, SpoolFull
from recorder.writer import Writer
from schemas import topics
from schemas.errors import KtraceError
from transports.sink import Sink

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Failed:
    """A watch thread ended with an error retrying cannot fix."""
    error: BaseException


@dataclass
class Summary:
    session: str
    cluster: str
    cause: str
    destination: str
    records: int
    targets: list[str] = field(default_factory=list)
    health_port: int | None = None


def record(settings: RecordSettings, *, stop: threading.Event | None = None) -> Summary:
    """Record until stopped (signal, ``stop`` set, ``--duration``); returns what happened.
    Raises KtraceError for a failure the recorder cannot ride out (after ending the session)."""
    resources = parse_kinds(settings.kinds)  # refuse bad input before touching the cluster
    redactor = Redactor(settings.redact, enabled=not settings.no_redact)
    with exclusive_directories(settings):
        config = load_config(settings.kubeconfig, settings.context)
        api = ApiClient(config)
        try:
            namespaces = list(dict.fromkeys(settings.namespaces))  # -n a -n a: one watch
            targets = resolve_targets(api, resources, namespaces)
            cluster = settings.cluster or config.context or urlsplit(config.server).hostname or "cluster"
            recording = Recording(settings, api, config, targets, cluster, redactor,
                                  stop or threading.Event())
            with stop_on_signals(recording):
                return recording.run()
        finally:
            api.close()
            config.cleanup()


LOCK_FILE = "recorder.lock"


@contextmanager
def exclusive_directories(settings: RecordSettings) -> Iterator[None]:
    """Hold the state and spool directories for this process: two recorders (two shards, or
    the old and new pod of a rolling update on one volume) sharing them would overwrite each
    other's checkpoints and spool, so the second is refused with one line."""
    held: list[BinaryIO] = []
    try:
        for directory in dict.fromkeys(d for d in (settings.state_dir, settings.spool_dir) if d):
            held.append(_lock_directory(directory))
        yield
    finally:
        for handle in held:
            handle.close()  # closing releases the lock


def _lock_directory(directory: str) -> BinaryIO:
    """The lock file of ``directory``, open and locked (closing it releases the lock)."""
    try:
        os.makedirs(directory, exist_ok=True)
        handle = open(os.path.join(directory, LOCK_FILE), "a+b")
    except OSError as exc:
        raise KtraceError(f"cannot use {directory}: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise KtraceError(f"{directory} is in use by another running recorder: give each "
                          "recorder (each shard, each pod) its own --state-dir/--spool-dir") from None
    return handle


@contextmanager
def stop_on_signals(recording: Recording) -> Iterator[None]:
    """SIGTERM/SIGINT end the session cleanly (only possible from the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in handlers:
        signal.signal(sig, lambda signum, frame: recording.request_stop(signal.Signals(signum).name))
    try:
        yield
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def destination_of(settings: RecordSettings) -> str:
    if settings.kafka is not None:
        return f"kafka:{settings.kafka.bootstrap}/{settings.topic_prefix}"
    return f"local:{os.path.abspath(settings.out or DEFAULT_OUT)}/{settings.topic_prefix}"


def open_sink(settings: RecordSettings, metrics: Metrics, topic_names: list[str]) -> Sink:
    if settings.kafka is None:
        from transports.locallog.sink import LocalLogSink

        return LocalLogSink(settings.out or DEFAULT_OUT, retention_bytes=settings.retention_bytes,
                            retention_age_s=settings.retention_age_s)
    from recorder.spooling.sink import SpoolingSink
    from transports.kafka.framing import RegistryFraming
    from transports.kafka.sink import KafkaSink, framing_for

    spool_dir = settings.spool_dir or (os.path.join(settings.state_dir, "spool") if settings.state_dir
                                       else tempfile.mkdtemp(prefix="ktrace-spool-"))
    spool = Spool(spool_dir, max_bytes=settings.spool_max_bytes)
    kafka = settings.kafka
    dead_letters = DeadLetters(spool_dir, on_dead_letter=lambda topic: metrics.dead_lettered
                               .labels(topic=topic).inc())
    value_framing = framing_for(kafka)
    if isinstance(value_framing, RegistryFraming):
        value_framing.register(topic_names)  # an incompatible schema refuses to start
    return SpoolingSink(lambda: KafkaSink(kafka, value_framing=value_framing, topics=topic_names),
                        spool,
                        dead_letters=dead_letters,
                        on_error=lambda exc: metrics.producer_errors.inc())


class Recording:
    def __init__(self, settings: RecordSettings, api: ApiClient, config: ClusterConfig,
                 targets: list[Target], cluster: str, redactor: Redactor, stop: threading.Event) -> None:
        self.settings, self.targets, self.cluster, self.stop = settings, targets, cluster, stop
        self.session = str(uuid.uuid4())
        self.metrics = Metrics()
        self.heartbeat = Heartbeat()
        self.cause: str | None = None
        self.destination = destination_of(settings)
        self.store = (CheckpointStore(settings.state_dir, f"{cluster}|{config.server}|{self.destination}")
                      if settings.state_dir else None)
        self.queue: queue.Queue[tuple[str, Item | Failed]] = queue.Queue(settings.queue_size)
        self.sink = open_sink(settings, self.metrics, sorted(
            {topics.topic_for(settings.topic_prefix, t.resource) for t in targets}))
        self.writer = Writer(self.sink, cluster=cluster, session=self.session,
                             topic_prefix=settings.topic_prefix,
                             redactor=redactor,
                             metrics=self.metrics,
                             typed_facts=settings.typed_facts)
        self.checkpointer = Checkpointer(self.sink, self.store, self.writer.states,
                                         on_confirmed=self.metrics.last_flush.set_to_current_time)
        self.informers = [self._informer(KubeWatchApi(api), t) for t in targets]
        self.threads: list[threading.Thread] = []
        self.health: HealthServer | None = None
        self._sent_since_flush, self._flushed_at = 0, time.monotonic()

    def _informer(self, api: KubeWatchApi, target: Target) -> Informer:
        checkpoint = self.store.load(target.key) if self.store else None
        self.writer.add_watch(target, checkpoint)
        cp = checkpoint or Checkpoint()
        cause = "checkpoint without resourceVersion" if cp.known and not cp.resource_version else None
        if cp.resource_version:
            log.info("%s: resuming from checkpoint resourceVersion %s", target.key, cp.resource_version)
        return Informer(api, target, start_rv=cp.resource_version, relist_cause=cause,
                        stop=self.stop, settings=self.settings.informer)

    def request_stop(self, cause: str) -> None:
        if self.cause is None:
            self.cause = cause
            log.warning("stopping: %s", cause)
        self.stop.set()
        stop_waiting = getattr(self.sink, "stop_waiting", None)
        if stop_waiting is not None:
            stop_waiting()

    # --- the loop -------------------------------------------------------------------------

    def run(self) -> Summary:
        error: BaseException | None = None
        try:
            self.writer.start_session(self._describe())
            self._mark()  # flushed behind: the watches need not wait for the broker
            self._start_health()
            self._start_watches()
            self._loop()
        except SpoolFull:
            pass  # only raised once stopping: the spool keeps what it holds for the next run
        except (KtraceError, OSError) as exc:
            error = exc
            self.request_stop(f"error: {exc}")
        finally:
            error = self._shutdown() or error
        if error is not None:
            raise error if isinstance(error, KtraceError) else KtraceError(str(error))
        return Summary(self.session, self.cluster, self.cause or "stopped", self.destination,
                       self.writer.records_written, [t.key for t in self.targets],
                       self.health.port if self.health else None)

    def _loop(self) -> None:
        deadline = time.monotonic() + self.settings.duration if self.settings.duration else None
        while not self.stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                self.request_stop("duration")
                break
            try:
                key, item = self.queue.get(timeout=0.2)
            except queue.Empty:
                pass
            else:
                if isinstance(item, Failed):
                    raise item.error if isinstance(item.error, KtraceError) else KtraceError(
                        f"watch {key} failed: {item.error!r}")
                self.writer.handle(key, item)
                self._sent_since_flush += 1
            self.heartbeat.beat()
            self._maybe_flush()

    def _maybe_flush(self) -> None:
        due = time.monotonic() - self._flushed_at >= self.settings.flush_interval_s
        if (due and self._sent_since_flush) or self._sent_since_flush >= self.settings.flush_records:
            self._mark()
        elif due:
            self._flushed_at = time.monotonic()
            self._update_spool_gauges()

    def _mark(self) -> None:
        """A checkpoint point: what was sent is made durable, and only then checkpointed,
        while recording goes on (``recorder.checkpointer``)."""
        self.checkpointer.mark()
        self._flushed()

    def _flush(self) -> None:
        """Make everything sent durable, then (only then) checkpoint what it accounts for."""
        self.checkpointer.flush()
        self._flushed()

    def _flushed(self) -> None:
        self._sent_since_flush, self._flushed_at = 0, time.monotonic()
        self._update_spool_gauges()

    def _update_spool_gauges(self) -> None:
        depth = getattr(self.sink, "depth", None)
        if depth is not None:
            records, size = depth()
            self.metrics.spool_records.set(records)
            self.metrics.spool_bytes.set(size)

    # --- threads --------------------------------------------------------------------------

    def _start_watches(self) -> None:
        for informer in self.informers:
            thread = threading.Thread(target=self._pump, args=(informer,), daemon=True,
                                      name=f"watch-{informer.target.key}")
            thread.start()
            self.threads.append(thread)

    def _pump(self, informer: Informer) -> None:
        key = informer.target.key
        try:
            for item in informer.items():
                if not self._put(key, item):
                    return
        except InformerError as exc:
            log.error("%s", exc)
            self._put(key, Failed(exc))
        except Exception as exc:  # a bug must end the session visibly, not kill a thread quietly
            log.exception("watch %s failed", key)
            self._put(key, Failed(exc))

    def _put(self, key: str, item: Item | Failed) -> bool:
        """Blocks while the writer is behind (backpressure); False once stopping."""
        while not self.stop.is_set():
            try:
                self.queue.put((key, item), timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def _start_health(self) -> None:
        if self.settings.metrics_port is None:
            return
        self.health = HealthServer(self.metrics, port=self.settings.metrics_port,
                                   host=self.settings.metrics_host, alive=self._alive,
                                   ready=self._ready).start()

    def _alive(self) -> bool:
        return self.heartbeat.alive() or bool(getattr(self.sink, "spooling", False))

    def _ready(self) -> bool:
        return all(state.ready for state in self.writer.states.values())

    # --- the end --------------------------------------------------------------------------

    def _shutdown(self) -> BaseException | None:
        """Stop watching, record what was already read, end the session, flush, checkpoint."""
        self.request_stop(self.cause or "stopped")
        for informer in self.informers:
            informer.interrupt()
        deadline = time.monotonic() + 5  # a thread stuck in a LIST request is left behind (daemon)
        for thread in self.threads:
            thread.join(timeout=max(deadline - time.monotonic(), 0))
        error: BaseException | None = None
        try:
            self._drain_queue()
            self.writer.end_session(self.cause or "stopped")
            self._flush()
        except SpoolFull as exc:
            log.error("spool full and Kafka unreachable at shutdown: %s; the next run resumes "
                      "from the last checkpoint", exc)
        except (KtraceError, OSError) as exc:
            error = exc
        finally:
            self._close()
        return error

    def _drain_queue(self) -> None:
        while True:
            try:
                key, item = self.queue.get_nowait()
            except queue.Empty:
                return
            if not isinstance(item, Failed):
                self.writer.handle(key, item)

    def _close(self) -> None:
        try:
            self.sink.close()
        except (KtraceError, OSError) as exc:
            log.error("closing the sink: %s", exc)
        if self.health is not None:
            self.health.stop()

    def _describe(self) -> str:
        namespaces = ",".join(self.settings.namespaces) or "all"
        redaction = "off" if self.settings.no_redact else "on"
        return f"namespaces={namespaces} redaction={redaction} destination={self.destination}"
