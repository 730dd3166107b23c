"""A follower under a writer that keeps writing: each catch-up takes everything that arrived
during the one before (catch-ups grow under load, they never queue), nothing is lost or
loaded twice, one Loader serves every catch-up, and analyses and the follower take turns at
the file — a stream of analyses cannot keep the follower out, nor the follower an analysis
longer than one catch-up. The figures at 2k events/s are the bench's (``python -m
bench.follow``, docs/performance.md)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

from replayer import db
from replayer.loader import LoadStats
from replayer import replay
from replayer.replay import follow
from tests.replayer_data import recorded_records
from transports.locallog.sink import LocalLogSink
from transports.locallog.source import LocalLogSource

STEP = 30  # records the writer appends at a time
HOLD_S = 0.5  # how long an analysis holds the file at least, once the writer stopped
ROOT = Path(__file__).resolve().parents[1]
#: An analysis in a process of its own (DuckDB's lock is per process): opens the database
#: read-only, says how many records it sees, and holds it until its stdin closes.
ANALYSIS = ("import sys; from replayer import db; con = db.open_readonly(sys.argv[1]); "
            "print(con.execute('SELECT count(*) FROM raw_events').fetchone()[0], flush=True); "
            "sys.stdin.read(); con.close()")


def analysis(path: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", ANALYSIS, path], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def release(process: subprocess.Popen) -> None:
    process.stdin.close()
    assert process.wait(timeout=60) == 0
    process.stdout.close()


class Follower:
    """``replay --follow`` in a thread over a local log, each catch-up's total kept."""

    def __init__(self, log: Path, path: str) -> None:
        self.source, self.path = LocalLogSource(str(log)), path
        self.stop, self.totals, self.turns = threading.Event(), [], []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        try:
            follow(self.source, self.path, source_name="log", prefix="ktrace", stop=self.stop,
                   on_caught_up=self._heard, on_turn=self.turns.append)
        except BaseException as exc:  # noqa: BLE001 — the test reports it
            self.error = exc

    def _heard(self, stats: LoadStats) -> None:
        if not self.totals or self.totals[-1] != stats.loaded:
            self.totals.append(stats.loaded)

    def wait_for(self, loaded: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not self.totals or self.totals[-1] < loaded:
            assert self.error is None, self.error
            assert time.monotonic() < deadline, f"loaded {self.totals[-1:]} of {loaded}"
            time.sleep(0.02)

    def end(self) -> None:
        self.stop.set()
        self.thread.join(timeout=60)
        assert self.error is None, self.error


def in_turn(path: str) -> bool:
    """Whether a follower holds its turn at the file (an analysis could not connect now)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def append(sink: LocalLogSink, records: list) -> None:
    for topic, record in records:
        sink.send(topic, record)
    sink.flush()


@contextlib.contextmanager
def held_follower(tmp_path: Path) -> Iterator[tuple[list, LocalLogSink, Follower, str,
                                                    subprocess.Popen]]:
    """A follower that caught up on the first STEP records of the recording and an analysis
    that then opened its database and holds it: (records, sink, follower, path, analysis)."""
    records = recorded_records()
    log, path = tmp_path / "log", str(tmp_path / "f.duckdb")
    sink = LocalLogSink(str(log))
    append(sink, records[:STEP])
    follower = Follower(log, path)
    follower.thread.start()
    try:
        follower.wait_for(STEP)
        reader = analysis(path)
        assert int(reader.stdout.readline()) == STEP
        yield records, sink, follower, path, reader
    finally:
        follower.end()
        sink.close()


def test_a_follower_kept_out_by_an_analysis_catches_up_in_one_go(tmp_path: Path):
    """While an analysis holds the file the writer keeps writing, step by step; the
    follower then takes all of it in one or two catch-ups (the local log is read topic by
    topic: a topic read before the hold ended may leave its later records to the next),
    and every record is loaded exactly once, by one Loader."""
    with held_follower(tmp_path) as (records, sink, follower, path, reader):
        written = STEP
        for start in range(STEP, len(records) - STEP, STEP):  # the writer goes on meanwhile
            append(sink, records[start:start + STEP])
            written = start + STEP
            time.sleep(0.05)
        held_since = follower.totals[-1]
        time.sleep(HOLD_S)
        release(reader)
        follower.wait_for(written)
        append(sink, records[written:])
        follower.wait_for(len(records))
    after_hold = [t for t in follower.totals if held_since < t <= written]
    steps = (written - held_since) // STEP
    assert after_hold[-1] == written and len(after_hold) <= 2 < steps, (follower.totals, steps)
    # the catch-up kept out says so: its wait for the file, apart from its time in it
    assert max(t.waited_s for t in follower.turns) >= HOLD_S, follower.turns
    con = db.open_readonly(path)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT (session, resource, seq)) "
                           "FROM raw_events").fetchone() == (len(records), len(records))
        assert con.execute("SELECT count(*) FROM loads").fetchone() == (1,)
        assert con.execute("SELECT count(*) FROM load_problems").fetchone() == (0,)
    finally:
        con.close()


def test_an_analysis_waits_for_a_follower_that_wants_the_file(tmp_path: Path):
    """A follower waiting for one analysis keeps the next one out until its catch-up is
    done: that one then sees the new records, and the follower never waits behind it."""
    with held_follower(tmp_path) as (records, sink, follower, path, first):
        append(sink, records[STEP:])
        deadline = time.monotonic() + 30
        while not in_turn(path):  # the follower took its turn and waits for the first
            assert time.monotonic() < deadline and follower.error is None, follower.error
            time.sleep(0.01)
        second = analysis(path)
        time.sleep(0.5)
        assert in_turn(path)  # the second is kept out while the turn lasts
        release(first)
        assert int(second.stdout.readline()) == len(records)
        release(second)


def test_a_long_catch_up_is_cut_so_analyses_get_in(tmp_path: Path, monkeypatch):
    """A catch-up loads for at most CATCH_UP_MAX_S, then releases the file and the next
    goes on from there (here cut after each delivery at first, then not): nothing is lost
    or loaded twice."""
    monkeypatch.setattr(replay, "CATCH_UP_MAX_S", 0.0)
    records = recorded_records()
    log, path = tmp_path / "log", str(tmp_path / "f.duckdb")
    sink = LocalLogSink(str(log))
    append(sink, records)
    follower = Follower(log, path)
    follower.thread.start()
    try:
        follower.wait_for(1)
        while len(follower.totals) < 3:
            assert follower.error is None, follower.error
            time.sleep(0.02)
        monkeypatch.setattr(replay, "CATCH_UP_MAX_S", 60.0)
        follower.wait_for(len(records))
    finally:
        follower.end()
        sink.close()
    assert follower.totals[2] < len(records) // 2, follower.totals  # three short catch-ups
    con = db.open_readonly(path)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT (session, resource, seq)) "
                           "FROM raw_events").fetchone() == (len(records), len(records))
        assert con.execute("SELECT count(*) FROM load_problems").fetchone() == (0,)
    finally:
        con.close()
