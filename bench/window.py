"""What a window of a local log costs, step by step, beside the whole log: finding the
window (the summary; the first one builds the time index), the source's read alone, the
state at the window's start alone (``replayer.window_start``: from the object index, the
first time built where missing, and by a scan of every earlier record), and the load.
``python -m bench.window LOG [--prefix ktrace]``; the window is ``phases.WINDOW``.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Iterator

from bench.logtool import log_parser
from bench.phases import middle_window
from replayer import db
from replayer.replay import replay
from replayer.record_filter import RecordFilter
from replayer.window_start import state_at
from transports import versions
from transports.locallog.source import LocalLogSource
from transports.source import DeliveryRun
from transports.window import Window


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
        with tempfile.TemporaryDirectory() as folder:
            con = db.open_db(str(Path(folder) / "w.duckdb"))
            began = time.perf_counter()
            summary = replay(LocalLogSource(opts.log), con, source_name=opts.log,
                             prefix=opts.prefix, window=window)
            con.close()
            print(f"{name}, the load: {summary.records:,} records in "
                  f"{time.perf_counter() - began:.2f} s")
    return 0


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
        began = time.perf_counter()
        objects = sum(len(run.offsets) for run in state(source))
        print(f"window, the state at its start {way}: {objects:,} objects "
              f"({objects / all_records:.1%} of the recording, "
              f"{objects / window_records:.2f}x the window's records) in "
              f"{time.perf_counter() - began:.2f} s, {asdict(source.counts)}")


if __name__ == "__main__":
    raise SystemExit(main())
