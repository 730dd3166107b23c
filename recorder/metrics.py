"""Prometheus metrics and the health endpoints, served on one port.

``/metrics`` (Prometheus text), ``/healthz`` (the recording loop is alive), ``/readyz``
(every watch has finished its first list or resumed from its checkpoint).
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.utils import floatToGoString

log = logging.getLogger(__name__)

LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300)


class Metrics:
    """The recorder's metrics, in a registry of their own (several recorders per process in
    tests must not collide)."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.events = RecordCounts()
        r.register(self.events)
        self.gaps = Counter("ktrace_gaps", "GAP records written (relists after 410 Gone)",
                            ["resource"], registry=r)
        self.relists = Counter("ktrace_relists", "Relists begun", ["resource"], registry=r)
        self.watch_problems = Counter("ktrace_watch_problems", "Watch failures handled "
                                      "(disconnect, malformed, server_error)",
                                      ["resource", "what"], registry=r)
        self.truncated = Counter("ktrace_truncated", "Objects recorded truncated", ["resource"],
                                 registry=r)
        self.producer_errors = Counter("ktrace_producer_errors", "Kafka send/flush failures",
                                       registry=r)
        self.dead_lettered = Counter("ktrace_dead_lettered", "Records the broker rejected for "
                                     "good, kept in dead-letter.jsonl beside the spool",
                                     ["topic"], registry=r)
        self.spool_records = Gauge("ktrace_spool_records", "Records waiting in the spool",
                                   registry=r)
        self.spool_bytes = Gauge("ktrace_spool_bytes", "Bytes waiting in the spool", registry=r)
        self.synced = Gauge("ktrace_watch_synced", "1 once a watch listed or resumed",
                            ["resource", "namespace"], registry=r)
        self.lag = LagHistogram()
        r.register(self.lag)
        self.last_flush = Gauge("ktrace_last_flush_timestamp_seconds",
                                "When the destination last confirmed every record sent before "
                                "a flush (acknowledged by Kafka, or fsynced to the local log); "
                                "records going to the spool do not advance it", registry=r)


class RecordCounts:
    """``ktrace_events``: records written by resource and type, counted in a plain dict by
    the writer's thread and read at scrape time (a prometheus ``Counter.inc`` takes a lock,
    ~1 µs a record)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], int] = {}

    def inc(self, resource: str, event_type: str) -> None:
        key = (resource, event_type)
        self.counts[key] = self.counts.get(key, 0) + 1

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily("ktrace_events", "Records written, by resource and type",
                                     labels=["resource", "type"])
        for (resource, event_type), count in dict(self.counts).items():  # one copy under the GIL
            family.add_metric([resource, event_type], count)
        yield family


class LagHistogram:
    """``ktrace_watch_lag_seconds`` by resource, bucketed by the writer's thread in plain lists
    and read at scrape time (a prometheus ``Histogram.observe`` costs ~4 µs per record)."""

    def __init__(self, buckets: tuple[float, ...] = LAG_BUCKETS) -> None:
        self.bounds = buckets
        self.by_resource: dict[str, list[float]] = {}  # resource → counts per bucket, +Inf, sum

    def observe(self, resource: str, seconds: float) -> None:
        counts = self.by_resource.get(resource)
        if counts is None:
            counts = self.by_resource[resource] = [0.0] * (len(self.bounds) + 2)
        counts[bisect.bisect_left(self.bounds, seconds)] += 1  # the first bound ≥ seconds
        counts[-1] += seconds

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily("ktrace_watch_lag_seconds", "Receive time minus the "
                                       "server's write time (managedFields, 1 s precision)",
                                       labels=["resource"])
        for resource, counts in dict(self.by_resource).items():
            counts = list(counts)
            cumulative, buckets = 0.0, []
            for bound, count in zip((*map(floatToGoString, self.bounds), "+Inf"), counts):
                cumulative += count
                buckets.append((bound, cumulative))
            family.add_metric([resource], buckets, sum_value=counts[-1])
        yield family


class HealthServer:
    """A small HTTP server in a daemon thread; port 0 picks a free port (see ``port``)."""

    def __init__(self, metrics: Metrics, *, port: int, host: str = "0.0.0.0",
                 alive: Callable[[], bool], ready: Callable[[], bool]) -> None:
        handler = _handler(metrics, alive, ready)
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="health", daemon=True)

    def start(self) -> HealthServer:
        self._thread.start()
        log.info("metrics and health on port %d", self.port)
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(metrics: Metrics, alive: Callable[[], bool],
             ready: Callable[[], bool]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            path = self.path.split("?")[0]
            if path == "/metrics":
                self._send(200, generate_latest(metrics.registry), CONTENT_TYPE_LATEST)
            elif path in ("/healthz", "/livez"):
                ok = alive()
                self._send(200 if ok else 503, b"ok\n" if ok else b"recording loop stalled\n")
            elif path == "/readyz":
                ok = ready()
                self._send(200 if ok else 503, b"ok\n" if ok else b"initial lists not synced\n")
            else:
                self._send(404, b"not found\n")

        def _send(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            log.debug("health: " + format, *args)

    return Handler


class Heartbeat:
    """The recording loop beats; /healthz fails when it has not for ``limit`` seconds."""

    def __init__(self, limit: float = 120.0) -> None:
        self.limit, self._at = limit, time.monotonic()

    def beat(self) -> None:
        self._at = time.monotonic()

    def alive(self) -> bool:
        return time.monotonic() - self._at < self.limit
