"""Load a recording (Kafka, local log) or kubectl captures into a replay database."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Sequence

import duckdb

from replayer import db
from replayer.importer import capture_topic, read_capture
from replayer.loader import Loader, LoadStats
from replayer.record_filter import RecordFilter
from transports.source import Delivery, DeliveryRun, PartitionKey, Source
from schemas.redaction import Redactor

FOLLOW_POLL_S = 1.0
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
           keep: RecordFilter = RecordFilter(), since_us: int | None = None,
           until_us: int | None = None, store_objects: bool = False,
           on_batch: Callable[[LoadStats], None] | None = None) -> Summary:
    """Load every topic of ``prefix`` from ``source``, resuming after what ``con`` holds."""
    loader = Loader(con, source_name, locator=source.locator, keep=keep,
                    store_objects=store_objects)
    loader.load(read(source, prefix, keep, after=loader.positions, since_us=since_us,
                     until_us=until_us), on_batch=on_batch)
    loader.finish()
    return summarize(con, loader.stats)


def follow(source: Source, path: str, *, source_name: str, prefix: str,
           keep: RecordFilter = RecordFilter(), since_us: int | None = None,
           until_us: int | None = None, store_objects: bool = False, stop: threading.Event,
           on_batch: Callable[[LoadStats], None] | None = None,
           on_caught_up: Callable[[LoadStats], None] | None = None) -> Summary:
    """Keep the database at ``path`` current: catch up every second (new topics included)
    until ``stop`` is set. The file is open only while a catch-up has records to load, so
    read-only analyses run beside the follower; ``stop`` is checked between catch-ups, so
    every committed batch is whole."""
    total = LoadStats()
    positions = None
    while True:
        pending = None if positions is None else _first_and_rest(
            read(source, prefix, keep, after=positions, since_us=since_us, until_us=until_us))
        if positions is None or pending is not None:
            con = db.open_db(path)
            try:
                loader = Loader(con, source_name, locator=source.locator, keep=keep,
                                store_objects=store_objects)
                if pending is None:  # the first catch-up resumes from the database
                    pending = read(source, prefix, keep, after=loader.positions,
                                   since_us=since_us, until_us=until_us)
                loader.load(pending, on_batch=on_batch)
                loader.finish()
                positions = dict(loader.positions)
                total.add(loader.stats)
                summary = summarize(con, total)
            finally:
                con.close()
        if on_caught_up is not None:
            on_caught_up(total)
        if stop.wait(FOLLOW_POLL_S):
            return summary


def read(source: Source, prefix: str, keep: RecordFilter, *,
         after: Mapping[PartitionKey, int], since_us: int | None,
         until_us: int | None) -> Iterator[Delivery | DeliveryRun]:
    """The records of ``prefix``'s topics that ``keep`` may keep, as runs, each group of
    ``keep.read_order`` read after the one before (the objects that name a namespace's
    dependencies before the dependencies)."""
    groups = keep.read_order(source.topics(prefix), prefix)
    return itertools.chain.from_iterable(
        source.read(group, after=after, since_us=since_us, until_us=until_us, runs=True)
        for group in groups)


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
