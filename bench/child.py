"""Runs one phase in a fresh interpreter, so its peak RSS is its own (ru_maxrss).

    python -m bench.child PHASE '{"arg": …}' [--cpu N] [--profile OUT]

Prints one JSON line: the phase's result plus ``rss_mb`` (peak), ``rss_start_mb`` (after
imports, before the work) and ``cpu_s`` (CPU time of the work, every thread). ``--cpu`` pins the process (and its threads) to one CPU;
``--profile`` samples the phase with pyinstrument and writes OUT.txt and OUT.html.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class PhaseFailed(RuntimeError):
    """A phase's process exited with an error."""


def run(phase: str, args: dict[str, Any], *, cpu: int | None = None,
        profile: Path | None = None) -> dict[str, Any]:
    """Run ``phase`` in a child process and return its result."""
    argv = [sys.executable, "-m", "bench.child", phase, json.dumps(args)]
    if cpu is not None:
        argv += ["--cpu", str(cpu)]
    if profile is not None:
        argv += ["--profile", str(profile)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise PhaseFailed(f"phase {phase} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def cpu_seconds() -> float:
    """User + system time of this process, all its threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.child")
    parser.add_argument("phase")
    parser.add_argument("args")
    parser.add_argument("--cpu", type=int)
    parser.add_argument("--profile", type=Path)
    opts = parser.parse_args(argv)
    if opts.cpu is not None:
        os.sched_setaffinity(0, {opts.cpu})
    from bench.phases import PHASES  # after pinning: imported libraries may start threads

    started_mb, started_cpu = peak_rss_mb(), cpu_seconds()
    phase, kwargs = PHASES[opts.phase], json.loads(opts.args)
    result = phase(**kwargs) if opts.profile is None else profiled(phase, kwargs, opts.profile)
    print(json.dumps({**result, "cpu_s": cpu_seconds() - started_cpu, "rss_mb": peak_rss_mb(),
                      "rss_start_mb": started_mb}))
    return 0


def profiled(phase: Callable[..., dict[str, Any]], kwargs: dict[str, Any],
             out: Path) -> dict[str, Any]:
    """The phase under pyinstrument (the calling thread only: not the producer's sender)."""
    from pyinstrument import Profiler  # the "bench" extra

    from bench.profile import top_self_time

    profiler = Profiler(interval=0.001)
    with profiler:
        result = phase(**kwargs)
    out.with_suffix(".txt").write_text(profiler.output_text(unicode=True, show_all=False))
    out.with_suffix(".html").write_text(profiler.output_html())
    return {**result, "top": top_self_time(profiler.last_session)}


if __name__ == "__main__":
    sys.exit(main())
