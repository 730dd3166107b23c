"""One measured phase each; ``bench.child`` runs each in a fresh process so its peak RSS is
its own. Every phase returns plain numbers: events, seconds, and what it found."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import duckdb

from bench import namespace
from bench.follow import follow_lag
from bench.recorder_path import record_file
from replayer import db
from replayer.analyses.gaps import gaps
from replayer.analyses.races import races
from replayer.analyses.stuck import stuck
from replayer.analyses.timeline import timeline
from replayer.replay import replay as replay_source
from transports.source import Source, TopicSummary
from transports.kafka.source import KafkaSource
from transports.locallog.source import LocalLogSource
from transports.kafka.settings import KafkaSettings
from transports.window import Window

Result = dict[str, Any]
QUERY_RUNS = 3
#: The recent stretch ``races_recent`` and ``gaps_recent`` ask about: the last this many
#: records. At a steady rate a fixed-length window (``races --since end-10m``) holds a fixed
#: count of records, so races' cost must not grow with the recording before it (gaps judges
#: the whole history and keeps the recent part: only its answer is the stretch's).
RECENT_RECORDS = 50_000
#: The moment ``stuck_at_100k`` judges at: when this many records had been received. The
#: workloads are cloned clone after clone (bench/workload.py), so at every size the same
#: objects are live then; only the history after it grows.
MOMENT_RECORDS = 100_000
#: The window ``window`` loads, as shares of the recording's receive-time span: the middle
#: tenth, so a start and an end inside the data (the seek and the stop) are both measured.
WINDOW = (0.45, 0.55)


def middle_window(summaries: list[TopicSummary]) -> Window:
    """``WINDOW`` of the receive-time span the topics' ``summaries`` cover."""
    first = min(s.first_received_us for s in summaries if s.first_received_us is not None)
    last = max(s.last_received_us for s in summaries if s.last_received_us is not None)
    since_us, until_us = (first + int((last - first) * share) for share in WINDOW)
    return Window(since_us, until_us)


def recorder(workload: str, bootstrap: str | None, prefix: str, state_dir: str,
             schema_registry: str | None = None, stop_at_live: bool = False,
             out: str | None = None) -> Result:
    """``main_cpu_s``: the recording thread's own CPU; the rest of ``cpu_s`` is the Kafka
    producer's threads (batching, compression, checksums). With ``schema_registry``, the
    same path writing the Confluent framing; with ``stop_at_live``, only until
    ``LIVE_TARGET`` objects are live (the RSS-at-100k-live phase); with ``bootstrap`` None,
    into the local log at ``out`` (the source of ``replay_local``)."""
    start, main_cpu = time.perf_counter(), time.thread_time()
    run = record_file(workload, bootstrap=bootstrap, prefix=prefix, state_dir=state_dir,
                      schema_registry=schema_registry, stop_at_live=stop_at_live, out=out)
    return {"events": run.events, "seconds": time.perf_counter() - start,
            "main_cpu_s": time.thread_time() - main_cpu,
            "records": run.records, "live_objects": run.live_objects,
            "at_live_target": run.at_live_target, "cpu_marks": run.cpu_marks}


def recorder_baseline(workload: str, out: str) -> Result:
    """The same bytes through the standard json module, out as JSON lines."""
    start, events = time.perf_counter(), 0
    with open(workload, "rb") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            dst.write(json.dumps(json.loads(line)) + "\n")
            events += 1
    return {"events": events, "seconds": time.perf_counter() - start}


def replay(bootstrap: str | None, prefix: str, database: str, store_objects: bool = False,
           log: str | None = None) -> Result:
    """``store_objects``: as ``replay --store-objects all`` (every object's JSON stored);
    ``bootstrap`` None: from the local log at ``log``."""
    source = _source(bootstrap, log)
    con = db.open_db(database, rebuild=True)
    start = time.perf_counter()
    summary = replay_source(source, con, source_name=source.locator, prefix=prefix,
                            store_objects=store_objects)
    con.close()  # the checkpoint into the file is part of loading
    seconds = time.perf_counter() - start
    source.close()
    return {"events": summary.stats.deliveries, "seconds": seconds, "loaded": summary.records,
            "problems": summary.stats.problem_count(), "duplicates": summary.stats.duplicates}


def window(bootstrap: str | None, prefix: str, database: str, log: str | None = None) -> Result:
    """``replay --since/--until`` of the middle tenth (``WINDOW``) of the recording into a
    new database, as ``incident`` loads one. Finding the window's times comes first, timed
    apart (``index_s``): from the local log the first summary builds its time index (once
    per segment), from Kafka it reads each partition's first and last record."""
    source = _source(bootstrap, log)
    start = time.perf_counter()
    summaries = source.summarize(source.topics(prefix))
    index_s = time.perf_counter() - start
    window = middle_window(summaries)
    con = db.open_db(database, rebuild=True)
    start = time.perf_counter()
    summary = replay_source(source, con, source_name=source.locator, prefix=prefix,
                            window=window)
    state_records = con.execute("SELECT count(*) FROM raw_events WHERE received_at < "
                                "make_timestamp(?)", [window.since_us]).fetchone()[0]
    con.close()
    seconds = time.perf_counter() - start
    counts = getattr(source, "counts", None)  # the local log's blocks read and skipped
    source.close()
    return {"events": summary.stats.deliveries, "seconds": seconds, "loaded": summary.records,
            "state_records": state_records,  # of ``loaded``: the state at the window's start
            "index_s": index_s, "window_us": [window.since_us, window.until_us],
            "read": asdict(counts) if counts is not None else None}


def _source(bootstrap: str | None, log: str | None) -> Source:
    return (LocalLogSource(log) if bootstrap is None
            else KafkaSource(KafkaSettings(bootstrap=bootstrap)))


def replay_baseline(workload: str, database: str) -> Result:
    """DuckDB's read_json loading the same watch events into a table (type, object JSON).
    Letting read_json infer a struct for every object is ~10x slower (managedFields keys)."""
    con = duckdb.connect(database)
    start = time.perf_counter()
    con.execute("CREATE TABLE events AS SELECT * FROM read_json(?, format = 'newline_delimited', "
                "columns = {type: 'VARCHAR', object: 'JSON'})", [workload])
    events = con.execute("SELECT count(*) FROM events").fetchone()[0]
    con.close()
    return {"events": events, "seconds": time.perf_counter() - start}


def queries(database: str, deployment: str, namespace: str) -> Result:
    """Each analysis ``QUERY_RUNS`` times on an open database: the first and the median."""
    start = time.perf_counter()
    con = db.open_readonly(database)  # as every analysis opens it: nothing written
    opened_ms = (time.perf_counter() - start) * 1000
    recent, moment = (_nth_newest(con, RECENT_RECORDS), _nth_oldest(con, MOMENT_RECORDS))
    analyses: dict[str, Callable[[], Any]] = {
        "stuck": lambda: stuck(con).rows,
        "stuck_at_100k": lambda: stuck(con, at=moment).rows,
        "races": lambda: races(con),
        "races_recent": lambda: races(con, since=recent),
        "timeline": lambda: timeline(con, f"deploy/{deployment}", namespace),
        "gaps": lambda: gaps(con),
        "gaps_recent": lambda: gaps(con, since=recent),
    }
    result: Result = {"open_ms": opened_ms, "events": con.execute(
        "SELECT count(*) FROM raw_events").fetchone()[0]}
    for name, run in analyses.items():
        times, cpu, rows = [], [], 0
        for _ in range(QUERY_RUNS):
            began, began_cpu = time.perf_counter(), time.process_time()
            rows = len(run()[1])
            times.append((time.perf_counter() - began) * 1000)
            cpu.append((time.process_time() - began_cpu) * 1000)
        result[name] = {"first_ms": times[0], "median_ms": statistics.median(times),
                        "median_cpu_ms": statistics.median(cpu), "rows": rows}
    con.close()
    return result


def _nth_newest(con: duckdb.DuckDBPyConnection, n: int) -> Any:
    """The receive time of the ``n``-th newest record (the first when there are fewer)."""
    return con.execute("SELECT min(received_at) FROM (SELECT received_at FROM raw_events "
                       "ORDER BY received_at DESC LIMIT ?)", [n]).fetchone()[0]


def _nth_oldest(con: duckdb.DuckDBPyConnection, n: int) -> Any:
    """The receive time of the ``n``-th oldest record (the last when there are fewer)."""
    return con.execute("SELECT max(received_at) FROM (SELECT received_at FROM raw_events "
                       "ORDER BY received_at LIMIT ?)", [n]).fetchone()[0]


PHASES: dict[str, Callable[..., Result]] = {
    "recorder": recorder, "recorder_registry": recorder, "recorder_live": recorder,
    "recorder_local": recorder, "recorder_baseline": recorder_baseline,
    "replay": replay, "replay_stored": replay, "replay_local": replay,
    "replay_baseline": replay_baseline, "queries": queries,
    "window": window, "window_local": window,
    "namespace": namespace.load, "namespace_local": namespace.load, "follow": follow_lag,
}
