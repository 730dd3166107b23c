"""`ktrace` explains itself to a newcomer: plain `ktrace` prints its help, commands are listed
in sections in the order of use, a mistyped command is offered the nearest, and a duration
flag's default reads as a duration."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ktrace.cli import SECTIONS, cli

COMMANDS_AT_80 = """\
Record and load:
  record    Record a cluster's list/watch stream to Kafka or a local log.
  topics    List the ktrace topics of a local log or a Kafka broker.
  replay    Load a recording into a database (resumes; --follow keeps up).
  import    Load kubectl get/--watch JSON captures into a database.
  incident  Load one time window into a new database, print every finding.
  demo      Replay the packaged recording and print what ktrace finds.

Analyse a database:
  stuck     What is stuck, with ranked causes and evidence.
  races     Pods whose containers stopped before their endpoint went off.
  gaps      Slow lifecycle steps and stretches the recording did not see.
  timeline  A pod's (or a workload's pods') lifecycle, step by step.
  explain   One object's whole story, in sentences with evidence.
  evidence  The record behind an evidence id.
  state     Every object as it was at a moment.
  get       Objects at a moment, as kubectl get shows them.
  info      What a database holds: windows, sessions, kinds, unseen stretches.
  query     Run SQL against the database (read-only unless --write).

Report and export:
  report    Draw an incident as one offline HTML file or a Perfetto trace.
  serve     Serve the report as a live page beside a follower.
  export    Export the database as Parquet partitioned by kind and date.
  mcp       Serve the analyses to AI agents as MCP tools (read-only).
"""


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "80"}).invoke(cli, list(args), prog_name="ktrace")


def test_plain_ktrace_prints_its_help_and_succeeds():
    result = invoke()
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == invoke("--help").stdout
    assert result.stdout.startswith("Usage: ktrace [OPTIONS] COMMAND [ARGS]...")


def test_help_lists_the_commands_in_sections_that_fit_80_columns():
    out = invoke("--help").stdout
    assert out.endswith(COMMANDS_AT_80)
    assert max(len(line) for line in out.splitlines()) <= 80


def test_every_command_is_in_one_section():
    names = [name for section in SECTIONS.values() for name in section]
    assert len(names) == len(set(names)) == 20


@pytest.mark.parametrize("typed, offered", [
    ("stcuk", "Did you mean 'stuck'?"),
    ("timline", "Did you mean 'timeline'?"),
    ("exlpain", "Did you mean 'explain'?"),
    ("replya", "(Did you mean one of: 'explain', 'replay'?)"),
    ("imprt", "Did you mean 'import'?"),
])
def test_a_mistyped_command_is_offered_the_nearest(typed, offered):
    result = invoke(typed)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"Error: No such command '{typed}'. {offered} "
                             "(see 'ktrace --help')\n")


def test_a_command_like_no_other_gets_no_suggestion():
    result = invoke("xyzzy")
    assert result.exit_code == 2
    assert result.stderr == "Error: No such command 'xyzzy'. (see 'ktrace --help')\n"


@pytest.mark.parametrize("command, option, default", [
    ("stuck", "--margin", "30s"),
    ("stuck", "--threshold", "1m"),
    ("races", "--margin", "1s"),
    ("query", "--timeout", "30s"),
    ("topics", "--kafka-timeout", "10s"),
])
def test_duration_defaults_read_as_durations(command, option, default):
    out = invoke(command, "--help").stdout
    text = " ".join(out.partition(f"  {option} DURATION")[2].split("\n  -")[0].split())
    assert text.endswith(f"[default: {default}]"), text
