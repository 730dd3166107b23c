"""What a window of a local log costs, step by step, beside the whole log: finding the
window (the summary; the first one builds the time index), the source's read alone, the
state at the window's start alone (``replayer.window_start``), and the load.
``python -m bench.window LOG [--prefix ktrace]``; the window is ``phases.WINDOW``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from bench.phases import WINDOW
from replayer import db
from replayer.replay import replay
from replayer.record_filter import RecordFilter
from replayer.window_start import state_at
from transports.locallog.source import LocalLogSource


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.window",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--prefix", default="ktrace")
    opts = parser.parse_args(argv)
    for attempt in ("first summary", "next summary"):
        source = LocalLogSource(opts.log)
        began = time.perf_counter()
        summaries = source.summarize(source.topics(opts.prefix))
        print(f"{attempt}: {time.perf_counter() - began:.3f} s, {asdict(source.counts)}")
    first = min(s.first_received_us for s in summaries if s.first_received_us is not None)
    last = max(s.last_received_us for s in summaries if s.last_received_us is not None)
    windows = {"whole": (None, None),
               "window": tuple(first + int((last - first) * share) for share in WINDOW)}
    for name, (since_us, until_us) in windows.items():
        source = LocalLogSource(opts.log)
        began = time.perf_counter()
        records = sum(len(getattr(item, "offsets", (item,))) for item in source.read(
            source.topics(opts.prefix), since_us=since_us, until_us=until_us, runs=True))
        print(f"{name}, the source alone: {records:,} records in "
              f"{time.perf_counter() - began:.2f} s, {asdict(source.counts)}")
        if since_us is not None:
            source = LocalLogSource(opts.log)
            began = time.perf_counter()
            state = sum(len(run.offsets) for run in state_at(
                source, opts.prefix, RecordFilter(), since_us))
            print(f"{name}, the state at its start alone: {state:,} objects in "
                  f"{time.perf_counter() - began:.2f} s, {asdict(source.counts)}")
        with tempfile.TemporaryDirectory() as folder:
            con = db.open_db(str(Path(folder) / "w.duckdb"))
            began = time.perf_counter()
            summary = replay(LocalLogSource(opts.log), con, source_name=opts.log,
                             prefix=opts.prefix, since_us=since_us, until_us=until_us)
            con.close()
            print(f"{name}, the load: {summary.records:,} records in "
                  f"{time.perf_counter() - began:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
