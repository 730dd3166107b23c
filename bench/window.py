"""What a window of a local log costs, step by step, beside the whole log: finding the
window (the summary; the first one builds the time index), the source's read alone, the
state at the window's start alone (``replayer.window_start``: from the object index, the
first time built where missing, and by a scan of every earlier record), the load (wall and
CPU), the window's load without its state (what the state adds), a load of the window's
first microsecond alone (the load's fixed part), and each load's projection refresh by
model (CPU).
``python -m bench.window LOG [--prefix ktrace]``; the window is ``phases.WINDOW``.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Iterator, Sequence

import duckdb

from bench.logtool import log_parser
from bench.phases import middle_window
from replayer import db, projections
from replayer.replay import replay
from replayer.record_filter import RecordFilter
from replayer.window_start import state_at
from transports import versions
from transports.locallog.source import LocalLogSource
from transports.source import DeliveryRun
from transports.window import Window

#: The refresh's models printed, by CPU (the rest summed).
TOP_MODELS = 8


class _WithoutState(LocalLogSource):
    """The log without the state at a window's start: a window's load of its own records
    alone, beside the real one (what the state costs is the difference)."""

    def last_versions(self, topics: Sequence[str], before_us: int) -> Iterator[DeliveryRun]:
        return iter(())


def main(argv: list[str] | None = None) -> int:
    parser = log_parser("bench.window", __doc__)
    opts = parser.parse_args(argv)
    for attempt in ("first summary", "next summary"):
        source = LocalLogSource(opts.log)
        began = time.perf_counter()
        summaries = source.summarize(source.topics(opts.prefix))
        print(f"{attempt}: {time.perf_counter() - began:.3f} s, {asdict(source.counts)}")
    windows = {"whole": Window(), "window": middle_window(summaries)}
    counted: dict[str, int] = {}
    for name, window in windows.items():
        source = LocalLogSource(opts.log)
        began = time.perf_counter()
        records = sum(len(getattr(item, "offsets", (item,))) for item in source.read(
            source.topics(opts.prefix), window=window, runs=True))
        counted[name] = records
        print(f"{name}, the source alone: {records:,} records in "
              f"{time.perf_counter() - began:.2f} s, {asdict(source.counts)}")
        if window.since_us is not None:
            _state_at_start(opts.log, opts.prefix, window.since_us, records, counted["whole"])
        _load(name, LocalLogSource(opts.log), opts.prefix, window)
    window = windows["window"]
    _load("window without its state", _WithoutState(opts.log), opts.prefix, window)
    _load("its first microsecond without its state (the fixed part)", _WithoutState(opts.log),
          opts.prefix, Window(window.since_us, window.since_us + 1))
    return 0


def _load(name: str, source: LocalLogSource, prefix: str, window: Window) -> None:
    """The load into a new database (wall and CPU, the database's opening and closing
    included), then its refresh by model."""
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "w.duckdb")
        wall, cpu = time.perf_counter(), time.process_time()
        con = db.open_db(path)
        summary = replay(source, con, source_name=source.locator, prefix=prefix, window=window)
        con.close()
        print(f"{name}, the load: {summary.records:,} records in "
              f"{time.perf_counter() - wall:.2f} s, {time.process_time() - cpu:.2f} CPU-s")
        con = db.open_db(path)
        try:
            print(f"{name}, {_refresh_by_model(con)}")
        finally:
            con.close()


def _refresh_by_model(con: duckdb.DuckDBPyConnection) -> str:
    """The refresh of every object again (as a load's first refresh, but for deleting the
    rows it replaces), CPU by model; rolled back."""
    spent: Counter[str] = Counter()
    con.begin()
    try:
        projections.rescope_all(con)
        began = time.process_time()
        for step, _ in projections.refreshing(con):
            now = time.process_time()
            spent[step], began = now - began, now
    finally:
        con.rollback()
    top = spent.most_common(TOP_MODELS)
    rest = sum(spent.values()) - sum(cpu for _, cpu in top)
    return (f"the refresh again: {sum(spent.values()):.2f} CPU-s (" + ", ".join(
        f"{step} {cpu:.3f}" for step, cpu in top) + f", the other {len(spent) - len(top)} "
            f"{rest:.3f})")


def _state_at_start(log: str, prefix: str, since_us: int, window_records: int,
                    all_records: int) -> None:
    """The state at the window's start alone: from the object index (the first time built
    where missing), and by the scan of every earlier record a source without one does."""
    def from_index(source: LocalLogSource) -> Iterator[DeliveryRun]:
        return state_at(source, prefix, RecordFilter(), since_us)

    def by_scan(source: LocalLogSource) -> Iterator[DeliveryRun]:
        return versions.scan(source.read(source.topics(prefix),
                                         window=Window.ending_before(since_us), runs=True))

    for way, state in (("from the object index", from_index), ("from it again", from_index),
                       ("by a scan of every earlier record", by_scan)):
        source = LocalLogSource(log)
        wall, cpu = time.perf_counter(), time.process_time()
        objects = sum(len(run.offsets) for run in state(source))
        print(f"window, the state at its start {way}: {objects:,} objects "
              f"({objects / all_records:.1%} of the recording, "
              f"{objects / window_records:.2f}x the window's records) in "
              f"{time.perf_counter() - wall:.2f} s, {time.process_time() - cpu:.2f} CPU-s, "
              f"{asdict(source.counts)}")


if __name__ == "__main__":
    raise SystemExit(main())
