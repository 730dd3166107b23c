"""The recorder path's instructions per event, counted by callgrind (repeatable on a busy machine).

``python -m bench.instructions [--events N]``: CPU seconds vary with a shared machine's load,
the instructions an event costs do not.

The recorder path (``bench.recorder_path.Pipeline`` into a local log, flushed by count only:
a flush every second would come as often as callgrind slows the process) runs twice, each in
its own process under ``valgrind --tool=callgrind``: over the first 500 events of the bench
workload, and over the first 500 + N. The difference over N is one event's cost past start-up.
``PYTHONHASHSEED`` is fixed, so two runs of one tree agree within ~0.3k instructions/event.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import workload

START_UP_EVENTS = 500


def record(path: str, events: int) -> None:
    """The first ``events`` lines of ``path`` through the recorder path (the counted child)."""
    from bench.recorder_path import Pipeline

    with tempfile.TemporaryDirectory(prefix="ktrace-instructions-") as work:
        pipeline = Pipeline(None, "bench", os.path.join(work, "state"), out=os.path.join(work, "log"))
        pipeline.settings = dataclasses.replace(pipeline.settings, flush_interval_s=float("inf"))
        pipeline.start()
        with open(path, "rb") as fh:
            pipeline.finish(pipeline.feed(itertools.islice(fh, events)))


def counted(path: Path, events: int) -> int:
    """Instructions callgrind counts for a process recording ``events`` events."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         "-m", "bench.instructions", "--child", str(path), str(events)],
        capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000, help="events counted (default 1000)")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "EVENTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        record(args.child[0], int(args.child[1]))
        return 0
    with tempfile.TemporaryDirectory(prefix="ktrace-instructions-") as work:
        path = workload.build(workload.cached(Path(work), "workload"), START_UP_EVENTS + args.events)
        start_up = counted(path, START_UP_EVENTS)
        total = counted(path, START_UP_EVENTS + args.events)
    print(f"{(total - start_up) / args.events / 1000:.1f}k instructions/event "
          f"(events {START_UP_EVENTS}-{START_UP_EVENTS + args.events} of the bench workload)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
