"""``python -m bench [--quick] [--profile] …``: see docs/performance.md.

Prints the table, then, as its last line, one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from bench.child import PhaseFailed
from bench.report import summary, table
from bench.run import PATH_GROUPS, ROUNDS, Options, Run

FULL_SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (10_000, 100_000)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop at 100k events (< 5 min)")
    parser.add_argument("--sizes", type=lambda v: tuple(int(x) for x in v.split(",")),
                        help="comma-separated workload sizes (default 10000,100000,1000000)")
    parser.add_argument("--profile", nargs="?", const=10_000, type=int, metavar="EVENTS",
                        help="also profile both paths with pyinstrument (default on 10000 events)")
    parser.add_argument("--paths", type=lambda v: tuple(v.split(",")), default=tuple(PATH_GROUPS),
                        help="recorder: only the recorder phases (and the RSS at 100k live "
                             "objects); default recorder,replay (replay also runs the analyses)")
    parser.add_argument("--work", type=Path,
                        help="keep workloads, databases and profiles here (reused); default: a "
                             "temporary directory, removed at the end")
    parser.add_argument("--kafka", help="HOST:PORT of a broker to use (default $KTRACE_TEST_KAFKA, "
                                        "else one started for the run)")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help=f"times the recorder and its baseline run in turn at each size; "
                             f"each one's median counts (default {ROUNDS})")
    parser.add_argument("--schema-registry", default=os.environ.get("KTRACE_TEST_REGISTRY"),
                        metavar="URL", help="also run the recorder path in the Confluent framing "
                                            "through this registry (default $KTRACE_TEST_REGISTRY)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if "recorder" not in args.paths or set(args.paths) - set(PATH_GROUPS):
        print(f"Error: --paths takes recorder or recorder,replay (the replay reads what the "
              f"recorder wrote), not {','.join(args.paths)}", file=sys.stderr)
        return 2
    # SIGTERM unwinds like ^C: the broker this run started stops, its temporary files go.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    work = args.work or Path(tempfile.mkdtemp(prefix="ktrace-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        run = Run(Options(sizes, work.resolve(), args.kafka, args.profile, args.schema_registry,
                          args.paths, max(args.rounds, 1))).execute()
    except PhaseFailed as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    figures = summary(run)
    print(table(run, figures))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
