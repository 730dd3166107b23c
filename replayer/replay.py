"""Load a recording (Kafka, local log) or kubectl captures into a replay database."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Sequence

import duckdb

from replayer import db
from replayer.importer import capture_topic, read_capture
from replayer.loader import Loader, LoadStats
from replayer.record_filter import RecordFilter
from replayer.window_start import state_at
from transports.source import Delivery, DeliveryRun, PartitionKey, Passed, Source, Wants
from transports.window import Window
from schemas.redaction import Redactor

#: How long a follower that found nothing to load waits before it looks again: part of
#: the lag (a look costs ~2 ms of CPU on a local log).
FOLLOW_POLL_S = 0.1
#: How long a follower leaves the file after a catch-up that loaded records: analyses
#: waiting for it (they look every ``db.TURN_POLL_S``) connect in that time.
TURN_GAP_S = 0.05
#: The longest a catch-up loads before it lets analyses in (the rest waits for the next):
#: a follower far behind, or starved of CPU, would otherwise hold the file until analyses
#: give up (``db.LOCK_WAIT_S``).
CATCH_UP_MAX_S = 5.0
#: kubectl captures are one-off files, likely gone after the import: their objects are kept.
IMPORT_LOCATOR = "import"


@dataclass(frozen=True)
class Summary:
    """What a database holds after a load, for the closing lines of ``replay``/``import``."""

    stats: LoadStats
    records: int
    kinds: list[tuple[str, int]]
    first: object
    last: object
    gaps: int
    problems: list[tuple[str, int]]


def replay(source: Source, con: duckdb.DuckDBPyConnection, *, source_name: str, prefix: str,
           keep: RecordFilter = RecordFilter(), window: Window = Window(),
           store_objects: bool = False,
           on_batch: Callable[[LoadStats], None] | None = None) -> Summary:
    """Load every topic of ``prefix`` from ``source``, resuming after what ``con`` holds."""
    loader = Loader(con, source_name, locator=source.locator, keep=keep,
                    store_objects=store_objects)
    loader.load(_to_load(source, prefix, loader, window), on_batch=on_batch)
    loader.finish()
    return summarize(con, loader.stats)


def _to_load(source: Source, prefix: str, loader: Loader, window: Window
             ) -> Iterator[Delivery | DeliveryRun | Passed]:
    """The records ``loader`` takes: after what it holds, within the window; a window's
    first load takes each object's state at the window's start first (window_start.py),
    and a load after one that stopped inside the state takes the rest of it first."""
    after = dict(loader.positions)  # as it was: the state at the start moves the positions
    if window.since_us is not None and not after:
        loader.con.execute("INSERT INTO window_starts VALUES (?, make_timestamp(?))",
                           [loader.source_id, window.since_us])
    state = window.since_us is not None and (not after or _state_unfinished(loader, window))
    return _records(source, prefix, loader.keep, after, window, state=state,
                    wants=loader.scope.wants(prefix))


def _records(source: Source, prefix: str, keep: RecordFilter, after: dict[PartitionKey, int],
             window: Window, *, state: bool, wants: Wants | None = None
             ) -> Iterator[Delivery | DeliveryRun | Passed]:
    """With ``state``, the versions of the state at the window's start after ``after``
    first; ``wants``: what the source may pass by (``read``)."""
    if state and window.since_us is not None:
        for run in state_at(source, prefix, keep, window.since_us):
            yield from _after(run, after.get((run.topic, run.partition)))
    yield from read(source, prefix, keep, after=after, window=window, wants=wants)


def _state_unfinished(loader: Loader, window: Window) -> bool:
    """Whether this source's load of ``window`` began with the state at its start and
    stopped before any record of the window itself was committed: the state is loaded
    first and in order, so until one is, the state may lack its later versions."""
    since_us = window.since_us
    if since_us is None:
        return False  # no start, no state at it
    return loader.con.execute(
        "SELECT EXISTS (SELECT 1 FROM window_starts WHERE source_id = ? "
        "    AND since = make_timestamp(?)) "
        "  AND NOT EXISTS (SELECT 1 FROM raw_events WHERE source_id = ? "
        "    AND received_at >= make_timestamp(?))",
        [loader.source_id, since_us, loader.source_id, since_us]).fetchone()[0]


def _after(run: DeliveryRun, position: int | None) -> Iterator[DeliveryRun]:
    """The records of ``run`` after ``position`` (all of them without one)."""
    kept = [i for i, offset in enumerate(run.offsets) if position is None or offset > position]
    if len(kept) == len(run.offsets):
        yield run
    elif kept:
        yield DeliveryRun(run.topic, run.partition, [run.offsets[i] for i in kept],
                          [run.envelopes[i] for i in kept], [run.data_of(i) for i in kept])


@dataclass(frozen=True)
class Turn:
    """One catch-up's time at the file, two shares of the follow lag: ``waited_s`` until
    the database was open (analyses open on it finish first), ``held_s`` loading,
    refreshing and closing it."""

    waited_s: float
    held_s: float


def follow(source: Source, path: str, *, source_name: str, prefix: str,
           keep: RecordFilter = RecordFilter(), window: Window = Window(),
           store_objects: bool = False, stop: threading.Event,
           on_batch: Callable[[LoadStats], None] | None = None,
           on_caught_up: Callable[[LoadStats], None] | None = None,
           on_turn: Callable[[Turn], None] | None = None) -> Summary:
    """Keep the database at ``path`` current until ``stop`` is set: each catch-up loads
    everything the source holds (new topics included) and releases the file; the next
    starts as soon as analyses waiting for the file had their turn (``db.follower_turn``),
    or, when there was nothing to load, after ``FOLLOW_POLL_S``. So a catch-up takes all
    that arrived during the last one, up to ``CATCH_UP_MAX_S`` of loading: under load
    they grow, never queue.

    One Loader serves every catch-up: what it knows (positions, the versions seen) is not
    read again from the whole history each time. ``stop`` is checked between catch-ups, so
    every committed batch is whole. ``on_turn`` hears each catch-up's time at the file."""
    loader: Loader | None = None
    earlier = LoadStats()  # of loaders replaced because another load wrote meanwhile
    state_due = False  # a catch-up was cut inside the state at the window's start

    while True:
        reading = None if loader is None else _records(
            source, prefix, keep, dict(loader.positions), window, state=state_due,
            wants=loader.scope.wants(prefix))
        pending = None if reading is None else _first_and_rest(reading)
        if loader is None or pending is not None:
            asked = time.monotonic()
            with db.follower_turn(path):
                con = db.open_db(path)
                opened = time.monotonic()
                try:
                    if loader is None or not loader.reattach(con):
                        if loader is not None:
                            earlier.add(loader.stats)
                        loader = Loader(con, source_name, locator=source.locator, keep=keep,
                                        store_objects=store_objects)
                        if reading is not None:
                            reading.close()
                        reading = pending = _to_load(source, prefix, loader,
                                                     window)  # from the database's
                    loader.load(_for_at_most(pending, CATCH_UP_MAX_S), on_batch=on_batch)
                    loader.finish()
                    cut = next(pending, None) is not None  # its rest left to the next
                    state_due = cut and _state_unfinished(loader, window)
                finally:
                    if reading is not None:  # its rest left to the next catch-up
                        reading.close()
                    con.close()
            if on_turn is not None:
                on_turn(Turn(opened - asked, time.monotonic() - opened))
        total = earlier.copy()
        total.add(loader.stats)
        if on_caught_up is not None:
            on_caught_up(total)
        if stop.wait(FOLLOW_POLL_S if pending is None else TURN_GAP_S):
            con = db.open_readonly(path)
            try:
                return summarize(con, total)
            finally:
                con.close()


def _for_at_most(deliveries: Iterator[Delivery | DeliveryRun],
                 seconds: float) -> Iterator[Delivery | DeliveryRun]:
    """``deliveries`` until ``seconds`` passed: a catch-up that long ends (its projections
    refreshed, the file released) and lets analyses in before the next goes on."""
    ends = time.monotonic() + seconds
    for delivery in deliveries:
        yield delivery
        if time.monotonic() > ends:
            return


def read(source: Source, prefix: str, keep: RecordFilter, *,
         after: Mapping[PartitionKey, int], window: Window = Window(),
         wants: Wants | None = None) -> Iterator[Delivery | DeliveryRun | Passed]:
    """The records of ``prefix``'s topics that ``keep`` may keep, as runs, each group of
    ``keep.read_order`` read after the one before (the objects that name a namespace's
    dependencies before the dependencies); with ``wants`` (a load's ``Scope.wants``) the
    source passes by those it refuses undecoded."""
    # a generator, not a chain: closing it closes the source's read under way
    for group in keep.read_order(source.topics(prefix), prefix):
        yield from source.read(group, after=after, window=window, runs=True, wants=wants)


def _first_and_rest(deliveries: Iterator[Delivery]) -> Iterator[Delivery] | None:
    """``deliveries`` again, or None when there is none (known without opening the db)."""
    first = next(deliveries, None)
    return None if first is None else itertools.chain([first], deliveries)


def import_captures(paths: Sequence[str], con: duckdb.DuckDBPyConnection, *, cluster: str,
                    keep: RecordFilter = RecordFilter(), redactor: Redactor | None = None,
                    on_batch: Callable[[LoadStats], None] | None = None) -> Summary:
    """Load kubectl watch captures, redacted (by default as the recorder redacts);
    re-importing a file loads only what it gained since."""
    loader = Loader(con, "import " + " ".join(paths), locator=IMPORT_LOCATOR, keep=keep,
                    store_objects=True)
    redactor = redactor or Redactor()

    def captured(after: Callable[[str], int | None]) -> Iterator[Delivery]:
        return itertools.chain.from_iterable(
            read_capture(p, cluster=cluster, redactor=redactor, after=after(p)) for p in paths)

    if keep.namespace is not None:  # what the namespace's objects name, wherever it comes
        loader.scope.learn(DeliveryRun.of(d) for d in captured(lambda p: None)
                           if d.record is not None)
    loader.load(captured(lambda p: loader.positions.get((capture_topic(p), 0))),
                on_batch=on_batch)
    loader.finish()
    return summarize(con, loader.stats)


def summarize(con: duckdb.DuckDBPyConnection, stats: LoadStats) -> Summary:
    records, first, last = con.execute(
        "SELECT count(*), min(received_at), max(received_at) FROM raw_events").fetchone()
    kinds = con.execute("SELECT coalesce(kind, type), count(*) FROM raw_events "
                        "GROUP BY ALL ORDER BY 2 DESC, 1").fetchall()
    gaps = con.execute("SELECT count(*) FROM gaps WHERE category = 'unseen'").fetchone()[0]
    problems = con.execute("SELECT problem, count(*) FROM load_problems "
                           "GROUP BY ALL ORDER BY 2 DESC, 1").fetchall()
    return Summary(stats, records, kinds, first, last, gaps, problems)
