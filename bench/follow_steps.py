"""What one catch-up of a follower costs, step by step, against how much history the
database holds: a local log's records received up to the ``--history``-th are loaded first
(one load, not timed), then ``--catch-ups`` catch-ups of the next ``--part`` records each, by
received time across every topic, as ``replay --follow`` catches up (open, the Loader, the
load, the projection refresh model by model, close): CPU seconds per step (every DuckDB
thread included) and the rows the refresh wrote. ``--new-loader`` makes a Loader per catch-up, as followers did before one
Loader served them all.

    python -m bench.follow_steps LOG [--prefix ktrace] [--history 0] [--part 2000]
        [--catch-ups 5] [--new-loader] [--history-db PATH]
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.logtool import log_parser
from replayer import db, projections
from replayer.loader import Loader
from replayer.record_filter import RecordFilter
from replayer.replay import read
from transports.locallog.source import LocalLogSource
from transports.window import Window


def refresh_by_model(con) -> tuple[Counter, Counter]:
    """``projections.refresh``: each step's CPU seconds, and the rows each model wrote."""
    spent: Counter = Counter()
    written: Counter = Counter()
    began = time.process_time()
    for name, rows in projections.refreshing(con):
        spent[name] += time.process_time() - began
        written[name] += rows
        began = time.process_time()
    return spent, written


def catch_up(path: str, until_us: int, loader: Loader | None, source: LocalLogSource,
             prefix: str, new_loader: bool) -> tuple[Loader, Counter, Counter, Counter]:
    """One catch-up of the records received up to ``until_us``, timed step by step."""
    steps: Counter = Counter()
    began = time.process_time()
    con = db.open_db(path)
    steps["open"] = time.process_time() - began
    began = time.process_time()
    if new_loader or loader is None or not loader.reattach(con):
        loader = Loader(con, "steps", locator=source.locator)
    steps["loader"] = time.process_time() - began
    began = time.process_time()
    loader.project = lambda: None  # timed apart, below
    loader.load(read(source, prefix, RecordFilter(), after=loader.positions,
                     window=Window(until_us=until_us)))
    steps["load"] = time.process_time() - began
    began = time.process_time()
    con.begin()
    models, written = refresh_by_model(con)
    con.commit()
    steps["refresh"] = time.process_time() - began
    began = time.process_time()
    loader.finish()
    con.close()
    steps["close"] = time.process_time() - began
    return loader, steps, models, written


def received_times(source: LocalLogSource, prefix: str) -> list[int]:
    """Every record's receivedAt (µs), in order."""
    return sorted(e.received_at for run in source.read(source.topics(prefix), runs=True)
                  for e in getattr(run, "envelopes", ()))


def records_held(path: str) -> int:
    con = db.open_readonly(path)
    try:
        return projections.loaded_through(con)
    finally:
        con.close()


def main(argv: list[str] | None = None) -> int:
    parser = log_parser("bench.follow_steps", __doc__)
    parser.add_argument("--history", type=int, default=0, help="records loaded first")
    parser.add_argument("--part", type=int, default=2000, help="records per catch-up")
    parser.add_argument("--catch-ups", type=int, default=5)
    parser.add_argument("--new-loader", action="store_true")
    parser.add_argument("--history-db", type=Path, help="start from a copy of this database "
                        "(its records are the --history ones); made here after the "
                        "history's load when missing")
    opts = parser.parse_args(argv)
    source = LocalLogSource(opts.log)
    times = received_times(source, opts.prefix)
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "follow.duckdb")
        loader = None
        if opts.history_db and opts.history_db.exists():
            shutil.copy(opts.history_db, path)
        elif opts.history:
            loader, *_ = catch_up(path, times[min(opts.history, len(times)) - 1], None,
                                  source, opts.prefix, False)
            if opts.history_db:
                shutil.copy(path, opts.history_db)
        db.open_db(path).close()  # the projections made again here if their SQL differs
        for k in range(1, opts.catch_ups + 1):
            end = min(opts.history + k * opts.part, len(times)) - 1
            held = records_held(path)
            loader, steps, models, written = catch_up(path, times[end], loader, source,
                                                      opts.prefix, opts.new_loader)
            top = ", ".join(f"{name} {cpu:.3f}" for name, cpu in models.most_common(5))
            print(f"{held:>9,} held, {records_held(path) - held:>6,} records: "
                  + ", ".join(f"{k} {v:.3f}" for k, v in steps.items())
                  + f" CPU-s; refresh: {top}; {sum(written.values()):,} rows written",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
