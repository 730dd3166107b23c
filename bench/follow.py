"""Follow lag: ``replay --follow`` under a writer appending at a steady rate, with an analysis
running beside it.

A writer process records the bench workload through the recorder path
(``bench.recorder_path``: the recorder's Writer, sink and flush cadence) at ``rate`` events
per second, paced, into a local log or Kafka. The follower (``replayer.replay.follow``, as
``ktrace replay --follow`` runs it) follows in this process, and a reader process runs
``stuck`` and ``races`` on the same database over and over, as a live page or an agent would.

What is measured, per record: **lag = visible − received**. *received* is the record's
``receivedAt``, stamped by the recorder when the writer handed it the watch line (so the
recorder's own flush cadence, up to ``flush_interval_s``, is part of the lag, as it is in a
cluster); *visible* is the end of the follower's catch-up that loaded it: its batches
committed, the projections refreshed and the file released, the moment an analysis can
read it. Also the follower's CPU (this process, every thread), per second of records
too (what keeping up takes: under 1, one free core keeps up), the reader's waits and
failures, and the writer's CPU per event (what the recorder's flush cadence costs it: compare
``--flush-interval`` values).

    python -m bench.follow [--rate 2000] [--seconds 120] [--source local|kafka] [--reader-every 1]
        [--flush-interval S]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the replayer is imported where it runs (the writer process need not)
    from replayer.replay import Turn

#: Records visible more than this long after they were received count as behind.
LAG_TARGET_S = 2.0
#: Seconds at the start left out of the lag figures: the first catch-up reads what the
#: writer wrote while the follower started.
SETTLE_S = 5.0
#: How long the follower may take to load the writer's last record once it stopped.
DRAIN_TIMEOUT_S = 120.0


def paced(lines, rate: float, seconds: float):
    """``lines`` at ``rate`` per second for at most ``seconds`` (sleeping ahead of time,
    never bursting to catch up more than the schedule says)."""
    began = time.monotonic()
    for i, line in enumerate(lines):
        due = began + i / rate
        if due - began >= seconds:
            return
        if (wait := due - time.monotonic()) > 0:
            time.sleep(wait)
        yield line


def write_paced(workload: str, rate: float, seconds: float, bootstrap: str | None,
                prefix: str, state_dir: str, out: str | None, done: Any,
                flush_interval_s: float | None = None) -> None:
    """The writer process: the recorder path fed at ``rate``, flushed every
    ``flush_interval_s`` (default: the recorder's); its records and CPU go to ``done``."""
    from bench.recorder_path import Pipeline
    pipeline = Pipeline(bootstrap, prefix, state_dir, out=out)
    if flush_interval_s is not None:
        pipeline.settings = replace(pipeline.settings, flush_interval_s=flush_interval_s)
    cpu_before = _cpu_s()
    pipeline.start()
    with open(workload, "rb") as fh:
        events = pipeline.feed(paced(fh, rate, seconds))
    run = pipeline.finish(events)
    done.put({"events": run.events, "records": run.records, "cpu_s": _cpu_s() - cpu_before,
              "flush_interval_s": pipeline.settings.flush_interval_s})


def read_beside(path: str, every_s: float, stop: Any, out: Any) -> None:
    """The reader process: ``stuck`` and ``races`` on a read-only connection, every
    ``every_s`` until ``stop``; each attempt's wait for the file, its query time, or why it
    failed."""
    from replayer import db
    from replayer.analyses.races import races
    from replayer.analyses.stuck import stuck
    attempts = []
    while not stop.is_set():
        began = time.monotonic()
        try:
            con = db.open_readonly(path)
            opened = time.monotonic()
            try:
                stuck(con)
                races(con)
            finally:
                con.close()
            attempts.append({"wait_s": opened - began, "query_s": time.monotonic() - opened})
        except Exception as exc:  # noqa: BLE001 — counted and reported, the loop goes on
            attempts.append({"wait_s": time.monotonic() - began, "error": str(exc)[:200]})
        stop.wait(every_s)
    out.put(attempts)


@dataclass
class CatchUps:
    """When each catch-up ended, and how many records were loaded by then."""

    ends: list[tuple[float, int]] = field(default_factory=list)

    def heard(self, loaded: int) -> None:
        if not self.ends or loaded != self.ends[-1][1]:
            self.ends.append((time.time(), loaded))


def lags(received: list[tuple[int, float]], ends: list[tuple[float, int]]) -> list[float]:
    """Each record's (event_id, received epoch s) lag: the end of the first catch-up whose
    loaded total reached its event id (a fresh database numbers records 1, 2, … in load
    order)."""
    out, at = [], 0
    for event_id, received_s in received:
        while at < len(ends) and ends[at][1] < event_id:
            at += 1
        if at == len(ends):
            break  # never visible before the follower stopped
        out.append(ends[at][0] - received_s)
    return out


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def follow_lag(workload: str, database: str, *, rate: float, seconds: float,
               bootstrap: str | None, prefix: str, work: str, reader_every_s: float | None,
               flush_interval_s: float | None = None) -> dict[str, Any]:
    """One run: writer, follower and reader together for ``seconds``; the figures."""
    from replayer import db
    from replayer.replay import follow
    from transports.kafka.settings import KafkaSettings
    from transports.kafka.source import KafkaSource
    from transports.locallog.source import LocalLogSource
    log = str(Path(work) / f"{prefix}-log") if bootstrap is None else None
    if log is not None:
        Path(log).mkdir(parents=True)  # the follower may look before the writer's first block
    db.open_db(database, rebuild=True).close()  # the schema made before the clock starts
    context = multiprocessing.get_context("spawn")
    done, stop_reader, read = context.Queue(), context.Event(), context.Queue()
    writer = context.Process(target=write_paced, args=(
        workload, rate, seconds, bootstrap, prefix, str(Path(work) / f"state-{prefix}"), log,
        done, flush_interval_s))
    reader = None if reader_every_s is None else context.Process(
        target=read_beside, args=(database, reader_every_s, stop_reader, read))
    writer.start()
    source = (LocalLogSource(log) if bootstrap is None
              else KafkaSource(KafkaSettings(bootstrap=bootstrap)))
    catch_ups, stop, turns = CatchUps(), threading.Event(), []
    written: dict[str, int] = {}

    def caught_up(stats) -> None:
        catch_ups.heard(stats.loaded)
        if not written and not done.empty():
            written.update(done.get())
        if written and stats.loaded >= written["records"]:
            stop.set()  # the writer's last record is visible
        elif written and time.time() - catch_ups.ends[-1][0] > DRAIN_TIMEOUT_S:
            stop.set()

    if reader is not None:
        reader.start()
    began, cpu_before = time.time(), _cpu_s()
    try:
        summary = follow(source, database, source_name=source.locator, prefix=prefix,
                         stop=stop, on_caught_up=caught_up, on_turn=turns.append)
    finally:
        wall, cpu = time.time() - began, _cpu_s() - cpu_before
        stop_reader.set()
        attempts = read.get(timeout=120) if reader is not None else []
        for process in (writer, reader):
            if process is not None:
                process.join(timeout=60)
        source.close()
    con = db.open_readonly(database)
    received = con.execute("SELECT event_id, epoch_us(received_at) / 1e6 FROM raw_events "
                           "ORDER BY event_id").fetchall()
    con.close()
    steady = [(e, r) for e, r in received if r >= began + SETTLE_S]
    lag = lags(steady, catch_ups.ends)
    if not lag:
        raise RuntimeError(f"no record written after the first {SETTLE_S:g} s became visible "
                           f"({summary.records} loaded)")
    sizes = [b[1] - a[1] for a, b in zip([(0, 0)] + catch_ups.ends, catch_ups.ends)]
    return {
        "rate": rate, "seconds": seconds, "source": "Kafka" if bootstrap else "local log",
        "written": written, "loaded": summary.records, "lost": written.get("records", 0)
        - summary.records, "lag_records": len(lag),
        "lag_p50_s": quantile(lag, 0.5), "lag_p99_s": quantile(lag, 0.99), "lag_max_s": max(lag),
        "behind_share": sum(x > LAG_TARGET_S for x in lag) / len(lag),
        "catch_ups": len(catch_ups.ends), "catch_up_records_median": statistics.median(sizes),
        "catch_up_records_max": max(sizes),
        **turn_figures(turns[1:]),  # the first loads what was written while it started
        "follower_cpu_s": cpu, "follower_cores": cpu / wall, "wall_s": wall,
        "follower_cpu_per_data_s": cpu / (summary.records / rate),
        "writer_flush_interval_s": written.get("flush_interval_s"),
        "writer_cpu_us_per_event": written["cpu_s"] / written["events"] * 1e6
        if written.get("events") else None,
        "reader": reader_figures(attempts),
    }


def turn_figures(turns: list[Turn]) -> dict[str, float]:
    """Where a catch-up's time goes: waiting for the file (an analysis open on it), and
    holding it (load, refresh, close)."""
    waited, held = [t.waited_s for t in turns], [t.held_s for t in turns]
    return {"file_wait_p50_s": quantile(waited, 0.5), "file_wait_max_s": max(waited),
            "catch_up_held_p50_s": quantile(held, 0.5), "catch_up_held_p90_s": quantile(held, 0.9)
            } if turns else {}


def reader_figures(attempts: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [a for a in attempts if "error" not in a]
    return {"attempts": len(attempts), "failed": len(attempts) - len(ok),
            "errors": sorted({a["error"] for a in attempts if "error" in a})[:3],
            "wait_p50_s": quantile([a["wait_s"] for a in ok], 0.5) if ok else None,
            "wait_max_s": max((a["wait_s"] for a in ok), default=None),
            "query_p50_s": quantile([a["query_s"] for a in ok], 0.5) if ok else None}


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def describe(result: dict[str, Any]) -> str:
    r, rd = result, result["reader"]
    line = (f"follow at {r['rate']:,.0f} events/s ({r['source']}, {r['seconds']:.0f} s): "
            f"lag p50 {r['lag_p50_s']:.2f} s, p99 {r['lag_p99_s']:.2f} s, max "
            f"{r['lag_max_s']:.2f} s ({r['behind_share']:.1%} over {LAG_TARGET_S:g} s); "
            f"{r['catch_ups']} catch-ups (median {r['catch_up_records_median']:,.0f} records, "
            f"max {r['catch_up_records_max']:,}); follower CPU {r['follower_cores']:.2f} cores, "
            f"{r['follower_cpu_per_data_s']:.2f} CPU-s per second of records; "
            f"{r['loaded']:,} of {r['written'].get('records', 0):,} records loaded")
    if "file_wait_p50_s" in r:
        line += (f"; a catch-up in the file p50 {r['catch_up_held_p50_s']:.2f} s, p90 "
                 f"{r['catch_up_held_p90_s']:.2f} s, waiting for it p50 "
                 f"{r['file_wait_p50_s']:.2f} s, max {r['file_wait_max_s']:.2f} s")
    if r["writer_cpu_us_per_event"] is not None:
        line += (f"; writer (flush every {r['writer_flush_interval_s']:g} s) "
                 f"{r['writer_cpu_us_per_event']:.1f} CPU-µs per event")
    if rd["attempts"]:
        line += (f"; reader: {rd['attempts']} stuck+races, {rd['failed']} failed, wait p50 "
                 f"{rd['wait_p50_s'] or 0:.2f} s max {rd['wait_max_s'] or 0:.2f} s, query p50 "
                 f"{rd['query_p50_s'] or 0:.2f} s")
    return line


#: The bench's follow phase (``python -m bench``): this long at ``RATE``, from each source,
#: on the largest size's workload (45 s at 2k events/s: 90,000 of the 100k workload's).
BENCH_SECONDS = 45.0
RATE = 2000.0
SOURCES = {"local log": None, "Kafka": "kafka"}


def phase_args(work: Path, workload: str, bootstrap: str, token: str) -> dict[str, dict[str, Any]]:
    """The follow phase's arguments per source, for ``bench.run``."""
    return {name: {"workload": workload, "database": str(work / f"follow-{i}.duckdb"),
                   "rate": RATE, "seconds": BENCH_SECONDS, "prefix": f"bench-follow-{i}-{token}",
                   "bootstrap": bootstrap if kind else None, "work": str(work),
                   "reader_every_s": 1.0}
            for i, (name, kind) in enumerate(SOURCES.items())}


def targets(found: dict[str, dict[str, Any]]) -> dict[str, tuple[bool, float, str]]:
    """(met, value, goal) of the follow lag per source."""
    return {f"follow_lag_p99 ({source})": (r["lag_p99_s"] < LAG_TARGET_S and not r["lost"],
                                           round(r["lag_p99_s"], 2),
                                           f"< {LAG_TARGET_S:g} s at {r['rate']:,.0f} events/s, "
                                           "an analysis beside it, nothing lost")
            for source, r in found.items()}


def main(argv: list[str] | None = None) -> int:
    from bench import workload
    from bench.broker import kafka_bootstrap
    parser = argparse.ArgumentParser(prog="python -m bench.follow",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=2000.0, help="events/s (default 2000)")
    parser.add_argument("--seconds", type=float, default=120.0, help="how long the writer writes")
    parser.add_argument("--source", choices=("local", "kafka"), default="local")
    parser.add_argument("--kafka", help="HOST:PORT of a broker (else $KTRACE_TEST_KAFKA, else "
                                        "one started for the run)")
    parser.add_argument("--reader-every", type=float, default=1.0, metavar="S",
                        help="seconds between the reader's stuck+races (negative: no reader)")
    parser.add_argument("--flush-interval", type=float, metavar="S",
                        help="the writer's flush cadence (default: the recorder's, "
                             "flush_interval_s)")
    parser.add_argument("--work", type=Path, help="keep the workload and database here")
    opts = parser.parse_args(argv)
    work = (opts.work or Path(tempfile.mkdtemp(prefix="ktrace-follow-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    events = int(opts.rate * opts.seconds) + 1
    path = workload.build(workload.cached(work, f"workload-{events}"), events)
    reader = None if opts.reader_every < 0 else opts.reader_every
    prefix = f"follow-{int(time.time())}"
    args = dict(rate=opts.rate, seconds=opts.seconds, prefix=prefix, work=str(work),
                reader_every_s=reader, database=str(work / "follow.duckdb"),
                flush_interval_s=opts.flush_interval)
    if opts.source == "local":
        result = follow_lag(str(path), bootstrap=None, **args)
    else:
        with kafka_bootstrap(work / "kafka", opts.kafka) as (bootstrap, _):
            result = follow_lag(str(path), bootstrap=bootstrap, **args)
    print(describe(result), file=sys.stderr)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
