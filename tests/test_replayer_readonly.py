"""Analyses open the database read-only: they write nothing, work on a read-only file and
answer while `replay --follow` keeps the same file current. `query` is read-only too."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import stat
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from transports.locallog.sink import LocalLogSink
from tests.replayer_data import recording
from tests.follower import start_follower, wait_for_line
from tests.replayer_data import recorded_records

ANALYSES = [["stuck"], ["races"], ["gaps"], ["timeline", "held"],
            ["query", "SELECT count(*) FROM raw_events"], ["state", "--at", "2026-11-30T07:13:00Z"]]


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("ro") / "k.duckdb")
    assert run("replay", recording("scenarios"), "--db", path).exit_code == 0
    return path


@pytest.mark.parametrize("args", ANALYSES, ids=lambda a: a[0])
def test_analyses_work_on_a_read_only_file_and_change_nothing(loaded: str, tmp_path: Path,
                                                              args: list[str]):
    copy = str(tmp_path / "ro.duckdb")
    shutil.copy(loaded, copy)
    os.chmod(copy, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    before = digest(copy)
    result = run(*args, "--db", copy)
    assert result.exit_code == 0, result.output
    assert digest(copy) == before and not os.path.exists(copy + ".wal")


@pytest.mark.parametrize("sql", [
    "DROP TABLE raw_events", "DELETE FROM pods", "COPY raw_events TO '/tmp/ktrace-leak.csv'",
    "ATTACH '/tmp/ktrace-other.duckdb'", "SELECT * FROM read_csv('/etc/passwd')",
    "INSTALL httpfs", "SELECT 1; DROP TABLE pods", "CREATE TEMP TABLE x AS SELECT 1",
])
def test_query_refuses_what_is_not_a_read(loaded: str, sql: str):
    before = digest(loaded)
    result = run("query", sql, "--db", loaded)
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and len(result.output.splitlines()) == 1
    assert digest(loaded) == before
    assert not os.path.exists("/tmp/ktrace-leak.csv")


@pytest.mark.parametrize("sql", ["SHOW TABLES", "DESCRIBE pods", "SUMMARIZE nodes",
                                 "PRAGMA table_info('pods')", "EXPLAIN SELECT * FROM pods",
                                 "WITH x AS (SELECT 1 AS a) SELECT a FROM x"])
def test_query_runs_reads(loaded: str, sql: str):
    assert run("query", sql, "--db", loaded).exit_code == 0


def test_query_write_allows_dml(loaded: str, tmp_path: Path):
    copy = str(tmp_path / "w.duckdb")
    shutil.copy(loaded, copy)
    assert run("query", "DELETE FROM k8s_events", "--db", copy, "--write").exit_code == 0
    out = run("query", "SELECT count(*) AS n FROM k8s_events", "--db", copy, "-o", "csv")
    assert out.output.split() == ["n", "0"]


def test_a_runaway_query_stops_at_the_timeout(loaded: str):
    started = time.monotonic()
    result = run("query", "SELECT count(*) FROM range(100000000000) a", "--db", loaded,
                 "--timeout", "1")
    assert time.monotonic() - started < 20
    assert result.exit_code == 1 and "time limit" in result.output


def test_analyses_answer_beside_a_follower(tmp_path: Path):
    """The follower holds the file only while a catch-up loads; analyses wait their turn
    and always see whole batches."""
    records = recorded_records()
    log, path = tmp_path / "log", str(tmp_path / "f.duckdb")
    sink = LocalLogSink(str(log))
    for topic, record in records[:300]:
        sink.send(topic, record)
    sink.flush()
    follower, lines = start_follower(log, path)
    try:
        wait_for_line(lines, "caught up: 300 records loaded")
        counts = []
        for topic, record in records[300:306]:
            sink.send(topic, record)
            sink.flush()
            for args in ANALYSES:
                if args[0] != "timeline":  # its pod is in the later records
                    result = run(*args, "--db", path)
                    assert result.exit_code == 0, (args, result.output)
            out = run("query", "SELECT count(*) FROM raw_events", "--db", path, "-o", "csv")
            counts.append(int(out.output.split()[1]))
        assert counts == sorted(counts) and counts[0] >= 300
        for topic, record in records[306:]:
            sink.send(topic, record)
        sink.flush()
        wait_for_line(lines, "caught up: 510 records loaded")
    finally:
        follower.send_signal(signal.SIGINT)
        out, _ = follower.communicate(timeout=60)
        sink.close()
    assert follower.returncode == 0, out
