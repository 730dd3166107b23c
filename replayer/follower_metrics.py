"""The findings of a followed database as Prometheus metrics (``ktrace replay --follow
--metrics-port``): what is stuck and why, how exposed each Deployment's last rollout left
its Service, the stretches the recording did not see, and how far the follower is behind.

The follower refreshes them between catch-ups — the only time it has the database closed —
on a read-only connection, at most every ``every_s`` while records keep coming (a refresh
runs the analyses, seconds at a large recording, and each catch-up would wait for it), and a
scrape serves the last refresh, so a scrape never waits on a load nor blocks one. Label values are bounded (docs/agents.md, "Metrics"): kinds, causes,
problems and unseen types come from fixed vocabularies; namespaces and Deployments are cut to
the ``top`` that matter most, the rest folded into the label value ``other``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable, Iterator

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from replayer import db

log = logging.getLogger(__name__)

#: namespaces (by stuck objects) and Deployments (by exposure) kept as label values
DEFAULT_TOP = 20
#: The shortest time between two refreshes of the findings: a Prometheus scrape interval.
DEFAULT_EVERY_S = 15.0
OTHER = "other"
STUCK_LABELS = ("cluster", "namespace", "kind", "problem", "cause")
ROLLOUT_LABELS = ("cluster", "namespace", "deployment")


def epoch(value: datetime | None) -> float | None:
    """A naive database TIMESTAMP (UTC) as Unix seconds."""
    return None if value is None else value.replace(tzinfo=timezone.utc).timestamp()


def top(weights: dict[str, float], n: int) -> set[str]:
    """The ``n`` keys of the greatest weight (ties by name), the rest to be folded."""
    return set(sorted(weights, key=lambda k: (-weights[k], k))[:n])


@dataclass
class Findings:
    """One refresh: each gauge's samples by label values."""

    stuck: dict[tuple[str, ...], int] = field(default_factory=dict)
    stuck_longest: dict[tuple[str, ...], float] = field(default_factory=dict)
    rollout_exposed: dict[tuple[str, ...], float] = field(default_factory=dict)
    rollout_raced: dict[tuple[str, ...], int] = field(default_factory=dict)
    rollout_terminated: dict[tuple[str, ...], int] = field(default_factory=dict)
    unseen: dict[str, int] = field(default_factory=dict)
    unseen_seconds: dict[str, float] = field(default_factory=dict)
    unseen_last_end: dict[str, float] = field(default_factory=dict)
    newest_record: float | None = None
    folded_namespaces: int = 0
    folded_deployments: int = 0


def read_findings(path: str, *, top_n: int = DEFAULT_TOP) -> Findings:
    """The findings of the database at ``path``, opened read-only for as long as it takes."""
    from replayer.analyses import data_end
    from replayer.analyses.info import unseen
    from replayer.analyses.rollout_exposure import rollout_exposure
    from replayer.analyses.stuck import stuck
    con = db.open_readonly(path)
    try:
        judged = stuck(con).rows
        exposure = rollout_exposure(con)
        stretches = unseen(con)
        newest = data_end(con)
    finally:
        con.close()
    found = Findings(newest_record=epoch(newest))
    _fold_stuck(found, judged, top_n)
    _fold_rollouts(found, exposure, top_n)
    for row in (dict(zip(stretches[0], r)) for r in stretches[1]):
        found.unseen[row["type"]] = row["stretches"]
        found.unseen_seconds[row["type"]] = float(row["total_s"] or 0)
        found.unseen_last_end[row["type"]] = epoch(row["last_end_at"]) or 0.0
    return found


def _fold_stuck(found: Findings, judged: tuple[list[str], list[tuple]], top_n: int) -> None:
    rows = [dict(zip(judged[0], r)) for r in judged[1]]
    per_namespace: dict[str, float] = defaultdict(float)
    for row in rows:
        per_namespace[row["namespace"] or ""] += 1
    kept = top(per_namespace, top_n)
    found.folded_namespaces = len(per_namespace) - len(kept)
    for row in rows:
        namespace = row["namespace"] or ""
        key = (row["cluster"] or "", namespace if namespace in kept else OTHER, row["kind"],
               row["problem"], row["top_cause"] or "unknown")
        found.stuck[key] = found.stuck.get(key, 0) + 1
        found.stuck_longest[key] = max(found.stuck_longest.get(key, 0.0),
                                       float(row["stuck_for_s"] or 0))


def _fold_rollouts(found: Findings, exposure: tuple[list[str], list[tuple]], top_n: int) -> None:
    rows = [dict(zip(exposure[0], r)) for r in exposure[1]]
    names = {(r["cluster"] or "", r["namespace"], r["deployment"]): r for r in rows}
    kept = top({k: float(r["exposed_s"]) for k, r in names.items()}, top_n)
    found.folded_deployments = len(names) - len(kept)
    for name, row in names.items():
        key = name if name in kept else (name[0], OTHER, OTHER)
        found.rollout_exposed[key] = max(found.rollout_exposed.get(key, 0.0),
                                         float(row["exposed_s"]))
        found.rollout_raced[key] = found.rollout_raced.get(key, 0) + row["pods_raced"]
        found.rollout_terminated[key] = (found.rollout_terminated.get(key, 0)
                                         + row["pods_terminated"])


class FollowerMetrics:
    """The follower's findings and progress, refreshed between catch-ups at most every
    ``every_s``, served from the last refresh (a collector of a registry of its own)."""

    def __init__(self, path: str, *, top_n: int = DEFAULT_TOP,
                 every_s: float = DEFAULT_EVERY_S) -> None:
        self.path, self.top_n, self.every_s = path, top_n, every_s
        self.registry = CollectorRegistry()
        self._lock = threading.Lock()
        self._findings: Findings | None = None
        self._loaded = -1  # records loaded, as the follower last said
        self._refreshed: tuple[float, int] | None = None  # when, and at how many records
        self._lag: float | None = None
        self._checked_at: float | None = None
        self._refresh_seconds = 0.0
        self._failures = 0
        self.registry.register(self)

    def caught_up(self, loaded: int) -> None:
        """The follower ended a catch-up (``loaded``: records so far); refresh the findings
        when it loaded something new since the last refresh, and that was ``every_s`` ago
        (else a later catch-up does, or the next look that finds nothing new)."""
        now = time.time()
        with self._lock:
            self._loaded, self._checked_at = loaded, now
        if self._refreshed is not None and (self._refreshed[1] == loaded
                                            or now - self._refreshed[0] < self.every_s):
            return
        try:
            found = read_findings(self.path, top_n=self.top_n)
        except Exception as exc:  # noqa: BLE001 — the metrics must never stop the follower
            log.warning("metrics not refreshed (the last refresh is served): %s", exc)
            with self._lock:
                self._failures += 1
            self._refreshed = (now, -1)  # tried again after every_s
            return
        self._refreshed = (now, loaded)
        with self._lock:
            self._findings, self._refresh_seconds = found, time.time() - now
            if found.newest_record is not None:
                self._lag = max(0.0, now - found.newest_record)

    def serve(self, port: int, host: str = "127.0.0.1") -> tuple[object, int]:
        """Serve ``/metrics`` on ``host:port`` (0: a free port) in a thread; (server, port)."""
        server, _ = start_http_server(port, addr=host, registry=self.registry)
        return server, server.server_address[1]

    def describe(self) -> Iterable[Metric]:
        return []  # the families are known only once collected: nothing checked at register

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            found, lag, checked = self._findings, self._lag, self._checked_at
            loaded, took, failures = self._loaded, self._refresh_seconds, self._failures
        if checked is not None:
            yield _gauge("ktrace_follower_last_catch_up_timestamp_seconds",
                         "When the follower last read the source to its end", {(): checked})
            yield _counter("ktrace_follower_records_loaded",
                           "Records the follower loaded since it started", max(loaded, 0))
            yield _gauge("ktrace_follower_refresh_seconds",
                         "How long the last refresh of these findings took", {(): took})
            yield _counter("ktrace_follower_refresh_failures", "Refreshes of these findings "
                           "that failed (the follower logs why and serves the last one)",
                           failures)
        if found is None:
            return
        if found.newest_record is not None:
            yield _gauge("ktrace_follower_newest_record_timestamp_seconds",
                         "When the recorder received the newest record in the database",
                         {(): found.newest_record})
        if lag is not None:
            yield _gauge("ktrace_follower_lag_seconds",
                         "At the last refresh of these findings: how long after the "
                         "recorder received the newest record it was in the database",
                         {(): lag})
        yield _gauge("ktrace_stuck_objects", "Objects stuck now, by namespace (top N, the "
                     "rest 'other'), kind, problem and top-ranked cause",
                     found.stuck, STUCK_LABELS)
        yield _gauge("ktrace_stuck_longest_seconds", "How long the longest-stuck object of "
                     "each series has been stuck", found.stuck_longest, STUCK_LABELS)
        yield _gauge("ktrace_stuck_namespaces_folded",
                     "Namespaces with stuck objects folded into namespace='other'",
                     {(): found.folded_namespaces})
        yield _gauge("ktrace_rollout_exposed_seconds", "Each Deployment's last rollout: the "
                     "longest an old pod's endpoint stayed routable after its containers "
                     "stopped (0: none raced)", found.rollout_exposed, ROLLOUT_LABELS)
        yield _gauge("ktrace_rollout_raced_pods", "Each Deployment's last rollout: old pods "
                     "whose containers stopped before their endpoint went off",
                     found.rollout_raced, ROLLOUT_LABELS)
        yield _gauge("ktrace_rollout_terminated_pods", "Each Deployment's last rollout: old "
                     "pods it terminated behind a Service", found.rollout_terminated,
                     ROLLOUT_LABELS)
        yield _gauge("ktrace_rollout_deployments_folded", "Deployments folded into "
                     "deployment='other' (their greatest exposure, their pods summed)",
                     {(): found.folded_deployments})
        by_type = ("type",)
        yield _gauge("ktrace_unseen_stretches", "Stretches the recording did not see, by type",
                     {(t,): n for t, n in found.unseen.items()}, by_type)
        yield _gauge("ktrace_unseen_seconds", "How long the recording did not see, by type",
                     {(t,): s for t, s in found.unseen_seconds.items()}, by_type)
        yield _gauge("ktrace_unseen_last_end_timestamp_seconds", "When the latest unseen "
                     "stretch of each type ended",
                     {(t,): s for t, s in found.unseen_last_end.items()}, by_type)


def _gauge(name: str, doc: str, samples: dict[tuple[str, ...], float],
           labels: tuple[str, ...] = ()) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=list(labels))
    for values, value in sorted(samples.items()):
        family.add_metric(list(values), value)
    return family


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, value=value)
