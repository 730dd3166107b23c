"""What one catch-up of a follower costs, step by step: a local log caught up into a copy of a
database in parts of ``--part`` records, as ``replay --follow`` catches up (open, the Loader,
the load, the projection refresh model by model, close), CPU seconds per step (every
DuckDB thread included). ``--new-loader`` makes a Loader per catch-up, as followers did
before one Loader served them all.

    python -m bench.follow_steps LOG DATABASE [--prefix ktrace] [--part 1000] [--new-loader]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from replayer import db, projections
from replayer.loader import Loader
from transports.locallog.source import LocalLogSource


def refresh_by_model(con) -> Counter:
    """``projections.refresh``, each model's CPU seconds counted."""
    spent: Counter = Counter()
    began = time.process_time()
    projections.mark_touched(con)
    spent["(scope)"] += time.process_time() - began
    for model in projections.ordered_models():
        began = time.process_time()
        for statement in model.refresh():
            con.execute(statement)
        spent[model.name] += time.process_time() - began
    con.execute("DELETE FROM projection_scope")
    con.execute("INSERT OR REPLACE INTO ktrace_meta VALUES (?, ?)",
                [projections.PROJECTED_THROUGH, str(projections.loaded_through(con))])
    return spent


def catch_up(path: str, part: list, loader: Loader | None, source: LocalLogSource,
             new_loader: bool) -> tuple[Loader, Counter, Counter]:
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
    loader.load(iter(part))
    steps["load"] = time.process_time() - began
    began = time.process_time()
    con.begin()
    models = refresh_by_model(con)
    con.commit()
    steps["refresh"] = time.process_time() - began
    began = time.process_time()
    loader.finish()
    con.close()
    steps["close"] = time.process_time() - began
    return loader, steps, models


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.follow_steps",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("database", help="copied first (the original is left as it is); "
                                         "one that does not exist: start from an empty one")
    parser.add_argument("--prefix", default="ktrace")
    parser.add_argument("--part", type=int, default=1000, help="records per catch-up")
    parser.add_argument("--new-loader", action="store_true")
    opts = parser.parse_args(argv)
    source = LocalLogSource(opts.log)
    runs = list(source.read(source.topics(opts.prefix), runs=True))
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "copy.duckdb")
        if Path(opts.database).exists():
            shutil.copy(opts.database, path)
        db.open_db(path).close()  # the projections made again here if their SQL differs
        loader, taken = None, 0
        while taken < len(runs):
            part, records = [], 0
            while taken < len(runs) and records < opts.part:
                part.append(runs[taken])
                records += len(getattr(runs[taken], "offsets", (0,)))
                taken += 1
            loader, steps, models = catch_up(path, part, loader, source, opts.new_loader)
            top = ", ".join(f"{name} {cpu:.2f}" for name, cpu in models.most_common(4))
            print(f"{records:>6,} records: " + ", ".join(f"{k} {v:.2f}" for k, v in steps.items())
                  + f" CPU-s; refresh: {top}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
