"""`-o` on every command that prints answers, on the demo recording: the default table fits
80 columns, JSON carries exactly the keys docs/cli.md documents (ktrace/views.py) with every
time in UTC with `Z`, csv is one table (or one file per section), and a reader that closes
the pipe ends the command quietly with status 0."""

from __future__ import annotations

import csv
import functools
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from click.testing import CliRunner

from ktrace import views
from ktrace.cli import cli
from ktrace.commands.replay import demo_recording
from ktrace.output import fit
from schemas.formats import duration

KTRACE = [sys.executable, "-c", "from ktrace.entry import main; main()"]
WINDOW = ["--since", "2026-12-07T14:35:00Z", "--until", "2026-12-07T14:39:00Z"]

#: every command that prints answers, with arguments that give it rows on the demo data
#: (``db``: the demo database, ``held``: the evidence id of the pod held by a finalizer)
COMMANDS: dict[str, Callable[[str, str], list[str]]] = {
    "stuck": lambda db, held: ["stuck", "--db", db],
    "gaps": lambda db, held: ["gaps", "--db", db],
    "races": lambda db, held: ["races", "--db", db],
    "state": lambda db, held: ["state", "--at", "end-1m", "--db", db],
    "timeline": lambda db, held: ["timeline", "deploy/web", "-n", "race", "--db", db],
    "explain": lambda db, held: ["explain", "held", "--db", db],
    "evidence": lambda db, held: ["evidence", held, "--db", db],
    "query": lambda db, held: ["query", "SELECT * FROM pod_lifecycle", "--db", db],
    "topics": lambda db, held: ["topics", demo_recording()],
    "get": lambda db, held: ["get", "pods,deploy,rs,no,ns,ev", "-A", "--db", db],
    "info": lambda db, held: ["info", "--db", db],
    "demo": lambda db, held: ["demo"],
    "incident": lambda db, held: ["incident", demo_recording(), *WINDOW],
}
SECTIONED = ("races", "demo", "incident", "info")
STAMP = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d")


def invoke(*args: str, columns: int | None = None) -> Any:
    env = {"COLUMNS": str(columns)} if columns else {"COLUMNS": ""}
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module", autouse=True)
def in_a_scratch_folder(tmp_path_factory) -> Any:
    """``incident`` writes its window's database into the working folder: keep it out of the
    checkout."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("cwd"))
        yield


@pytest.fixture(scope="module")
def held(demo_db: str) -> str:
    rows = json.loads(invoke("stuck", "--db", demo_db, "-o", "json").stdout)
    return str(next(r["evidence_event_id"] for r in rows if r["name"] == "held"))


@pytest.fixture(scope="module")
def args(demo_db: str, held: str) -> Callable[[str], list[str]]:
    return lambda command: COMMANDS[command](demo_db, held)


@pytest.fixture(scope="module")
def as_json(args) -> Callable[[str], Any]:
    """A command's -o json document, run once per module (demo and incident replay)."""
    return functools.cache(lambda command: json.loads(invoke(*args(command), "-o", "json").stdout))


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("command", COMMANDS)
def test_the_default_table_fits_the_terminal(command, columns, args):
    out = invoke(*args(command), columns=columns).stdout
    assert len(out.splitlines()) > 1
    too_wide = [line for line in out.splitlines() if len(line) > columns]
    assert too_wide == [], "\n".join(too_wide)


@pytest.mark.parametrize("command", [c for c in COMMANDS if c not in ("query", "get")])
def test_json_keys_are_the_documented_schema(command, as_json):
    doc = as_json(command)
    names = views.COMMAND_VIEWS[command]
    if command in SECTIONED:
        assert list(doc) == list(names)
        sections = {name: doc[name] for name in names}
    elif command == "evidence":
        sections = {"evidence": [doc]}
    else:
        sections = {names[0]: doc}
    assert any(sections.values()), "the demo data gives this command rows"
    for name, rows in sections.items():
        for row in rows:
            assert list(row) == views.VIEWS[name].keys, name


@pytest.mark.parametrize("command", COMMANDS)
def test_every_time_in_json_is_utc_with_z(command, as_json):
    doc = as_json(command)
    stamps = [s for s in _strings(doc) if STAMP.match(s)]
    assert stamps, "the answer holds times"
    assert [s for s in stamps if not re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", s)] == []


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_yaml_is_the_json_document(args, as_json):
    assert yaml.safe_load(invoke(*args("stuck"), "-o", "yaml").stdout) == as_json("stuck")


def test_wide_adds_columns_and_name_prints_kind_slash_name(args):
    table = invoke(*args("stuck")).stdout.splitlines()[0].split()
    wide = invoke(*args("stuck"), "-o", "wide").stdout.splitlines()[0].split()
    assert set(table) < set(wide) and "UID" in wide and "UID" not in table
    names = invoke(*args("stuck"), "-o", "name").stdout.split()
    assert "pod/held" in names and "namespace/doomed" in names
    assert all(re.fullmatch(r"[a-z]+/[\w.-]+", n) for n in names)


def test_csv_is_one_table_with_the_schema_as_header(args):
    rows = list(csv.reader(io.StringIO(invoke(*args("stuck"), "-o", "csv").stdout)))
    assert rows[0] == views.STUCK.keys and len(rows) > 2
    assert all(len(r) == len(rows[0]) for r in rows)


def test_a_report_writes_one_csv_per_section_or_refuses_csv(args, tmp_path: Path):
    refused = CliRunner().invoke(cli, ["races", "--db", args("stuck")[-1], "-o", "csv"],
                                 prog_name="ktrace")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "Error: -o csv writes one file per section: give --output-dir DIR "
        "(see 'ktrace races --help')"]
    written = invoke(*args("demo"), "-o", "csv", "--output-dir", str(tmp_path / "out"))
    assert written.stdout == ""
    for name in views.COMMAND_VIEWS["demo"]:
        with open(tmp_path / "out" / f"{name}.csv", newline="") as file:
            assert next(csv.reader(file)) == views.VIEWS[name].keys


def test_explain_and_evidence_refuse_csv(args):
    result = CliRunner().invoke(cli, [*args("explain"), "-o", "csv"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: explain prints a document, not a table")


@pytest.mark.parametrize("fmt", ["json", "table", "csv"])
def test_stuck_into_head_exits_0_without_a_traceback(demo_db, fmt):
    shell = f"{' '.join(KTRACE[:2])} '{KTRACE[2]}' stuck --db {demo_db} -o {fmt} | head -c 10"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True,
                          timeout=60)
    assert done.returncode == 0 and len(done.stdout) == 10, done.stderr
    assert b"Traceback" not in done.stderr and done.stderr == b""


@pytest.mark.parametrize("fmt", ["json", "yaml", "table", "csv", "name"])
def test_a_pipe_closed_before_the_answer_exits_0_quietly(demo_db, fmt):
    process = subprocess.Popen([*KTRACE, "stuck", "--db", demo_db, "-o", fmt],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # gone before ktrace writes a byte: its write meets EPIPE
    assert process.wait(timeout=60) == 0
    assert process.stderr.read() == b""


@pytest.mark.parametrize("seconds, text", [
    (0, "0s"), (0.0312, "31ms"), (1.93125244, "1.9s"), (45.4, "45s"), (123, "2m03s"), (3725, "1h02m"),
    (273600, "3d04h"), (-1.25, "-1.2s"), (59.6, "1m00s")])
def test_durations_read_like_kubectl(seconds, text):
    assert duration(seconds) == text


def test_fit_shrinks_prose_before_names_and_never_a_whole_column():
    assert fit([10, 30, 8], ["name", "prose", "name"], 40) == [10, 22, 8]
    assert fit([20, 30, 8], ["name", "prose", "name"], 30) == [12, 10, 8]
    assert fit([20, 30, 8], ["name", "prose", "whole"], 20) == [6, 6, 8]
    assert fit([20, 30, 12], ["whole", "prose", "whole"], 20) == [20, 4, 12]


@pytest.mark.parametrize("command, codes", [
    ("stuck", ("problem", "top_cause", "evidence_event_id")),
    ("timeline", ("step", "time", "evidence_event_id")),
    ("gaps", ("category", "type", "evidence_event_id"))])
def test_an_80_column_table_leaves_codes_and_times_whole(command, codes, args, as_json):
    """A cut code reads as nothing (``ter…``): the table leaves a column out instead, and
    says which on stderr; evidence ids are never left out."""
    result = invoke(*args(command), columns=80)
    table = result.stdout
    header = table.splitlines()[0]
    left_out = re.search(r"note: (.+) left out to fit 80 columns", result.stderr)[1].split(", ")
    for key in codes:
        title = views.VIEWS[command].columns[views.VIEWS[command].keys.index(key)].title
        assert (title in header) != (title in left_out), title
        if title not in header:
            continue
        for row in as_json(command):
            value = row[key] if key != "time" else row[key][11:23] + "Z"  # the clock, as shown
            assert re.search(rf"(^|  ){re.escape(value)}(  |$)", table, re.M), (key, value)
    assert "EVIDENCE" in header


def test_a_reports_notes_name_the_section_they_are_about(args):
    notes = [line for line in invoke(*args("demo"), columns=80).stderr.splitlines()
             if line.startswith("note: ")]
    assert notes and all(re.match(r"note: .+ left out of [A-Z][\w -]+ to fit 80 columns", n)
                         for n in notes), notes
