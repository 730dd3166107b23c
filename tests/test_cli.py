"""The CLI surface: help for every command, version, errors as one line, topics."""

from __future__ import annotations

import subprocess
import sys

import click
import orjson
import pytest
from click.testing import CliRunner

from ktrace import __version__
from ktrace.cli import cli
from transports.locallog.sink import LocalLogSink
from tests import samples


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield prefix + (name,)
        if isinstance(command, click.Group):
            yield from _commands(command, prefix + (name,))


@pytest.mark.parametrize("path", list(_commands(cli)), ids=" ".join)
def test_every_command_has_help(path):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage: " in result.output and len(result.output.splitlines()) > 3


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_topics_of_a_local_log_in_every_format(tmp_path):
    sink = LocalLogSink(str(tmp_path))
    for record in samples.interleaved(30, keys=3):
        sink.send("ktrace.pods", record)
    sink.close()
    runner = CliRunner()
    table = runner.invoke(cli, ["topics", str(tmp_path)])
    assert table.exit_code == 0, table.output
    assert "ktrace.pods" in table.output and " 30 " in table.output
    rows = orjson.loads(runner.invoke(cli, ["topics", str(tmp_path), "-o", "json"]).output)
    assert rows == [{"topic": "ktrace.pods", "partitions": 1, "records": 30,
                     "first_received_at": "2025-11-24T16:00:00.000000Z",
                     "last_received_at": "2025-11-24T16:00:00.029000Z"}]
    csv = runner.invoke(cli, ["topics", str(tmp_path), "-o", "csv"]).output.splitlines()
    assert csv[0] == "topic,partitions,records,first_received_at,last_received_at"
    assert len(csv) == 2


def test_errors_are_one_line_and_a_nonzero_exit(tmp_path):
    result = CliRunner().invoke(cli, ["topics", str(tmp_path / "missing")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: no local log at {tmp_path / 'missing'}: not a directory"]


def test_unreachable_broker_is_one_line(tmp_path):
    # a real process: the client library's own log lines would reach its stderr
    done = subprocess.run([sys.executable, "-c", "from ktrace.entry import main; main()", "topics",
                           "--kafka", "127.0.0.1:9", "--kafka-timeout", "1"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("Error: Kafka broker 127.0.0.1:9 unreachable within 1s (")
