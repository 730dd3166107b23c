"""The recorder's ratio to its baseline in two source trees, alternating on one broker.

The bench's recorder figure is a ratio of two runs (the recorder, and the same bytes
through the standard json module); its baseline's own speed moves several percent from run
to run and a tree run second is often faster. To tell whether a change moved the recorder,
this runs both phases of each tree in turn, ABBA (the order flips every round), on the same
workload (this tree's) and the same broker, each phase in a fresh interpreter pinned to one
CPU as the bench does, and prints every round and the means.

    python -m bench.recorder_trees OLD_TREE NEW_TREE [--rounds 11] [--events 100000] [--work DIR]

``--work`` keeps the workload for the next run; by default a temporary directory.

Each tree must have ``bench.child`` with the ``recorder`` and ``recorder_baseline`` phases.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import machine, workload
from bench.broker import kafka_bootstrap


def phase(tree: Path, name: str, args: dict[str, Any], cpu: int) -> dict[str, Any]:
    """``name`` run by ``tree``'s own ``bench.child``."""
    argv = [sys.executable, "-m", "bench.child", name, json.dumps(args), "--cpu", str(cpu)]
    done = subprocess.run(argv, cwd=tree, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    if done.returncode:
        raise SystemExit(f"{tree}: phase {name} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def one_round(tree: Path, events: Path, bootstrap: str, work: Path, prefix: str,
              cpu: int) -> dict[str, float]:
    baseline = phase(tree, "recorder_baseline",
                     {"workload": str(events), "out": str(work / "baseline.jsonl")}, cpu)
    recorded = phase(tree, "recorder", {"workload": str(events), "bootstrap": bootstrap,
                                        "prefix": prefix, "state_dir": str(work / f"state-{prefix}")},
                     cpu)
    recorder_eps = recorded["events"] / recorded["seconds"]
    baseline_eps = baseline["events"] / baseline["seconds"]
    return {"recorder_eps": recorder_eps, "baseline_eps": baseline_eps,
            "ratio": recorder_eps / baseline_eps,
            "cpu_us_per_event": recorded["cpu_s"] / recorded["events"] * 1e6}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recorder_trees",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="the first tree (e.g. a worktree of an older commit)")
    parser.add_argument("new", type=Path, help="the second tree")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--work", type=Path, help="keep the workload here (reused)")
    opts = parser.parse_args(argv)
    if opts.work is None:
        with tempfile.TemporaryDirectory(prefix="ktrace-trees-") as work:
            return compare(opts.old, opts.new, opts.rounds, opts.events, Path(work))
    opts.work.mkdir(parents=True, exist_ok=True)
    return compare(opts.old, opts.new, opts.rounds, opts.events, opts.work)


def compare(old: Path, new: Path, rounds_wanted: int, size: int, work: Path) -> int:
    trees = {"old": old.resolve(), "new": new.resolve()}
    events = workload.build(workload.cached(work, f"workload-{size}"), size, workload.seed_templates())
    cpu, token = machine.pinned_cpu(), secrets.token_hex(3)
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    with kafka_bootstrap(work / "kafka", off_cpu=cpu) as (bootstrap, _):
        one_round(trees["new"], events, bootstrap, work, f"warm-up-{token}", cpu)
        for n in range(rounds_wanted):
            for name in (("old", "new") if n % 2 == 0 else ("new", "old")):
                found = one_round(trees[name], events, bootstrap, work,
                                  f"trees-{name}-{n}-{token}", cpu)
                rounds[name].append(found)
                print(json.dumps({"round": n + 1, "tree": name, **found,
                                  "load": os.getloadavg()[0]}), flush=True)
    for name, runs in rounds.items():
        print(f"{name}: {trees[name]}: ratio to baseline mean {statistics.mean(r['ratio'] for r in runs):.3f}, "
              f"recorder {statistics.mean(r['recorder_eps'] for r in runs):,.0f} events/s, "
              f"{statistics.mean(r['cpu_us_per_event'] for r in runs):.1f} CPU-µs/event")
    paired = [new["ratio"] / old["ratio"] for old, new in zip(rounds["old"], rounds["new"])]
    print(f"new/old ratio, paired by round: mean {statistics.mean(paired):.3f}, "
          f"median {statistics.median(paired):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
