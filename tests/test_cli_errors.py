"""Every bad input of issue 9's list: one ``Error:`` line and the documented exit status
(README "Exit status": 2 usage error, 1 runtime error, 130 interrupted, 0 closed pipe)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from tests.replayer_data import recording

KTRACE = [sys.executable, "-c", "from ktrace.cli import main; main()"]


@pytest.fixture(scope="module")
def dbfile(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("errors") / "k.duckdb")
    assert CliRunner().invoke(cli, ["replay", recording("scenarios"), "--db", path]).exit_code == 0
    return path


def _kubeconfig(tmp: Path, user: str = "", cluster: str = "", raw: bytes | None = None) -> str:
    path = tmp / "kubeconfig"
    path.write_bytes(raw if raw is not None else (
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:1'{cluster}}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        f"users: [{{name: u, user: {{{user}}}}}]\n").encode())
    return str(path)


def _file(tmp: Path, name: str, data: bytes) -> str:
    (tmp / name).write_bytes(data)
    return str(tmp / name)


def _dir(tmp: Path, name: str) -> str:
    (tmp / name).mkdir()
    return str(tmp / name)


def _segment() -> bytes:
    return next(Path(recording("scenarios"), "ktrace.pods").glob("*.avro")).read_bytes()


# (id, argv builder given tmp and the database, exit status, text the Error line contains)
CASES: list[tuple[str, Callable[[Path, str], list[str]], int, str]] = [
    ("empty SQL", lambda t, d: ["query", "", "--db", d], 2, "no SQL given"),
    ("empty SQL on stdin", lambda t, d: ["query", "-", "--db", d], 2, "no SQL given"),
    ("missing client-certificate", lambda t, d: [
        "record", "--kubeconfig", _kubeconfig(t, "client-certificate: nowhere.crt, "
                                                 "client-key: nowhere.key")],
     1, f"client-certificate file {{t}}{os.sep}nowhere.crt does not exist"),
    ("bad CA data", lambda t, d: [
        "record", "--kubeconfig", _kubeconfig(t, cluster=", certificate-authority-data: "
                                                         "bm90IGEgY2VydGlmaWNhdGU=")],
     1, "certificate-authority is not a PEM certificate"),
    ("non-UTF-8 kubeconfig", lambda t, d: [
        "record", "--kubeconfig", _kubeconfig(t, raw=b"apiVersion: v1\nname: \xff\xfe\n")],
     1, "is not UTF-8 text"),
    ("an unreachable API server", lambda t, d: [
        "record", "--kubeconfig", _kubeconfig(t), "--out", str(t / "log"), "--duration", "10s"],
     1, "GET https://127.0.0.1:1/api"),
    ("empty replay directory", lambda t, d: ["replay", _dir(t, "empty"), "--db", str(t / "x")],
     1, "no topics with prefix 'ktrace' in {t}/empty; it holds no topics at all"),
    ("a topic directory for the log root", lambda t, d: [
        "replay", str(Path(recording("scenarios"), "ktrace.pods")), "--db", str(t / "x")],
     1, "is one topic's directory (it holds segments); give the local log's root"),
    ("wrong --topic-prefix", lambda t, d: [
        "replay", recording("scenarios"), "--topic-prefix", "prod", "--db", str(t / "x")],
     1, "no topics with prefix 'prod'"),
    ("import an Avro file", lambda t, d: [
        "import", _file(t, "pods.avro", _segment()), "--db", str(t / "x")],
     1, "it is an Avro object container file"),
    ("import random bytes", lambda t, d: [
        "import", _file(t, "noise.json", os.urandom(4096).replace(b"{", b"x")), "--db",
        str(t / "x")], 1, "no item is a Kubernetes object or watch event"),
    ("import an empty file", lambda t, d: ["import", _file(t, "e.json", b""), "--db", str(t / "x")],
     1, "the file is empty"),
    ("--since after --until", lambda t, d: [
        "replay", recording("scenarios"), "--since", "2026-11-30T08:00:00Z", "--until",
        "2026-11-30T07:00:00Z", "--db", str(t / "x")], 2, "is after --until"),
    ("--since after --until (incident)", lambda t, d: [
        "incident", recording("scenarios"), "--since", "2026-11-30T08:00:00Z", "--until",
        "2026-11-30T07:00:00Z"], 2, "is after --until"),
    ("--since after --until (report)", lambda t, d: [
        "report", "--db", d, "--html", str(t / "r.html"), "--since", "2026-11-30T08:00:00Z",
        "--until", "2026-11-30T07:00:00Z"], 2, "is after --until"),
    ("a window outside the data (report)", lambda t, d: [
        "report", "--db", d, "--html", str(t / "r.html"), "--since", "2020-01-01T00:00:00Z",
        "--until", "2020-01-02T00:00:00Z"], 1,
     "no records between 2020-01-01T00:00:00.000000Z and 2020-01-02T00:00:00.000000Z: the "
     "database holds 2026-11-30T"),
    ("a window after the data (report)", lambda t, d: [
        "report", "--db", d, "--perfetto", str(t / "r.json"), "--since", "2030-01-01T00:00:00Z"],
     1, "no records between 2030-01-01T00:00:00.000000Z and the end: the database holds"),
    ("a window outside the recording", lambda t, d: [
        "replay", recording("scenarios"), "--since", "2020-01-01T00:00:00Z", "--until",
        "2020-01-02T00:00:00Z", "--db", str(t / "x")], 1, "the window lies outside the recording"),
    ("a window after the recording (the state at its start is no record of it)", lambda t, d: [
        "replay", recording("scenarios"), "--since", "2030-01-01T00:00:00Z", "--db", str(t / "x")],
     1, "the window lies outside the recording"),
    ("unknown kind", lambda t, d: ["state", "--at", "2026-11-30T07:12:00Z", "--kind", "Bogus",
                                   "--db", d], 1, "unknown kind 'Bogus'; known: pods, replicasets"),
    ("negative stuck margin", lambda t, d: ["stuck", "--margin", "-1", "--db", d], 2,
     "'-1': a duration cannot be negative"),
    ("negative races margin", lambda t, d: ["races", "--margin", "-5", "--db", d], 2,
     "'-5': a duration cannot be negative"),
    ("negative gap threshold", lambda t, d: ["gaps", "--threshold", "create_to_schedule=-1",
                                             "--db", d], 2, "a duration cannot be negative"),
    ("no database", lambda t, d: ["stuck", "--db", str(t / "none.duckdb")], 1, "no database at"),
]


@pytest.mark.parametrize(("build", "code", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_input_is_one_error_line_and_its_exit_status(tmp_path, dbfile, build, code, message):
    result = CliRunner().invoke(cli, build(tmp_path, dbfile), input="")
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: ") and message.format(t=tmp_path) in line, line
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("build", [
    lambda t: ["replay", _dir(t, "empty"), "--db", str(t / "x.duckdb")],
    lambda t: ["replay", recording("scenarios"), "--since", "2020-01-01T00:00:00Z", "--until",
               "2020-01-02T00:00:00Z", "--db", str(t / "x.duckdb")],
    lambda t: ["import", _file(t, "noise.json", b"not json{"), "--db", str(t / "x.duckdb")],
    lambda t: ["incident", recording("scenarios"), "--since", "2020-01-01T00:00:00Z",
               "--until", "2020-01-02T00:00:00Z", "--db", str(t / "x.duckdb")],
], ids=["no topics", "a window outside the recording", "an unreadable capture", "incident"])
def test_a_failed_load_leaves_no_database_behind(tmp_path, build):
    result = CliRunner().invoke(cli, build(tmp_path))
    assert result.exit_code == 1, result.output
    assert sorted(p.name for p in tmp_path.iterdir() if ".duckdb" in p.name) == []


def test_a_failed_load_into_an_existing_database_keeps_it(tmp_path, dbfile):
    target = tmp_path / "k.duckdb"
    shutil.copy(dbfile, target)
    records = ["query", "SELECT count(*) AS n FROM raw_events", "-o", "csv", "--db", str(target)]
    before = CliRunner().invoke(cli, records).stdout
    result = CliRunner().invoke(cli, ["import", _file(tmp_path, "noise.json", b"not json{"),
                                      "--db", str(target)])
    assert result.exit_code == 1 and target.exists()
    assert CliRunner().invoke(cli, records).stdout == before != "n\n0\n"


def test_kinds_are_taken_as_kubectl_names_them(dbfile):
    by_kind = CliRunner().invoke(cli, ["state", "--at", "2026-11-30T07:12:00Z", "--kind", "Pod",
                                       "--db", dbfile, "-o", "csv"])
    by_resource = CliRunner().invoke(cli, ["state", "--at", "2026-11-30T07:12:00Z", "--kind",
                                           "pods", "--db", dbfile, "-o", "csv"])
    assert by_kind.exit_code == by_resource.exit_code == 0
    assert by_kind.stdout == by_resource.stdout and by_kind.stdout.count("\nPod,") > 5


@pytest.mark.parametrize("command", ["demo", "incident"])
def test_demo_and_incident_leave_an_existing_database_byte_identical(tmp_path, dbfile, command):
    target = tmp_path / "mine.duckdb"
    shutil.copy(dbfile, target)
    before = target.read_bytes()
    args = ["demo"] if command == "demo" else ["incident", recording("scenarios"), "--since",
                                               "2026-11-30T07:00:00Z"]
    result = CliRunner().invoke(cli, [*args, "--db", str(target)])
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {target} already exists; pass --rebuild to start it over, "
                             "or choose another --db\n")
    assert target.read_bytes() == before


#: the read system call's number in /proc/PID/syscall, by machine
READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}


def _reading_stdin(pid: int) -> bool:
    """Whether the process is blocked in read(0, …): waiting for its SQL on stdin."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return fields[:2] == [READ_SYSCALL[os.uname().machine], "0x0"]


def _default_sigint() -> None:
    # as a terminal starts it: a test run started in the background (`cmd &`, CI) ignores
    # SIGINT, and an ignored signal stays ignored across exec
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_exits_130_without_a_traceback(dbfile):
    process = subprocess.Popen([*KTRACE, "query", "-", "--db", dbfile], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=_default_sigint)
    deadline = time.monotonic() + 60
    while not _reading_stdin(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _reading_stdin(process.pid), "ktrace query - never waited on stdin"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert b"Traceback" not in err and err.strip().splitlines()[-1] == b"interrupted"


def test_a_closed_pipe_ends_quietly(dbfile):
    reader = subprocess.Popen([*KTRACE, "query", "SELECT * FROM range(200000)", "--db", dbfile,
                               "-o", "csv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.read(10)
    reader.stdout.close()
    err = reader.stderr.read()
    assert reader.wait(timeout=60) == 0 and err == b""


def test_ctrl_c_while_the_commands_still_load_exits_130_without_a_traceback():
    """The console script catches a Ctrl-C that lands while ktrace's modules are imported
    (a second or more: DuckDB, Kafka, Arrow); here it lands exactly then, every time."""
    code = ("import sys\n"
            "class Interrupt:\n"
            "    def find_spec(self, name, *args):\n"
            "        if name == 'ktrace.cli':\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Interrupt())\n"
            "from ktrace.entry import main\n"
            "main()\n")
    result = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True,
                            timeout=60)
    assert result.returncode == 130
    assert result.stderr == b"interrupted\n" and result.stdout == b""
