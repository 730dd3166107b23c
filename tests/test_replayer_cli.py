"""The replayer's commands, end to end on the recorded scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from tests.replayer_data import captures, recording


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


@pytest.fixture(scope="module")
def dbfile(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("cli") / "k.duckdb")
    result = run("replay", recording("scenarios"), "--db", path)
    assert result.exit_code == 0, result.output
    return path


def test_replay_prints_a_summary_and_a_rerun_loads_nothing(dbfile: str):
    again = run("replay", recording("scenarios"), "--db", dbfile)
    assert again.exit_code == 0
    assert again.stdout == ""  # the summary is not data: stderr
    assert again.stderr.splitlines()[0] == "loaded 0 of 0 records (0 duplicates, 0 filtered out, 0 problems)"
    assert "database: 510 records from 2026-11-30T07:11:23.310237Z" in again.stderr
    assert "15 unseen stretches" in again.output


def test_query_with_parameters_and_stdin(dbfile: str):
    out = run("query", "SELECT step FROM pod_transitions WHERE pod = $pod ORDER BY step_no",
              "-p", "pod", "held", "--db", dbfile, "-o", "csv")
    assert out.output.split() == ["step", "created", "scheduled", "running", "ready",
                                  "deletion_requested", "containers_stopped", "terminal"]
    out = run("query", "-", "--db", dbfile, "-o", "json",
              input="SELECT count(*) AS n FROM races WHERE verdict = 'ok'")
    assert json.loads(out.output) == [{"n": 3}]


def test_timeline_of_a_deployment(dbfile: str):
    out = run("timeline", "deploy/web", "-n", "race", "--db", dbfile, "-o", "json")
    steps = json.loads(out.output)
    assert {s["pod"] for s in steps} >= {"web-857bb4bd9d-84bp4", "web-857bb4bd9d-99vfd"}
    first = [s for s in steps if s["pod"] == "web-857bb4bd9d-84bp4"]
    assert [s["step"] for s in first][-3:] == ["terminal", "deleted", "endpoint_removed"]
    assert all(s["time"].endswith("Z") and s["uid"] for s in first)
    table = run("timeline", "held", "--db", dbfile)
    assert table.output.splitlines()[0].split()[:3] == ["NAMESPACE", "POD", "STEP"]


def test_stuck_at_a_time_and_at_the_end(dbfile: str):
    out = run("stuck", "--db", dbfile, "-o", "json")
    found = json.loads(out.output)
    assert len(found) == 9
    # the lost node itself, NotReady since its kubelet (kwok) was stopped: a Node's own finding
    assert [(r["name"], r["problem"], r["top_cause"]) for r in found if r["kind"] == "Node"] == [
        ("kwok-node-2", "node_not_ready", "node_not_ready")]
    out = run("stuck", "--at", "2026-11-30T07:12:50Z", "-n", "gone", "--db", dbfile, "-o", "json")
    assert [(r["name"], r["top_cause"]) for r in json.loads(out.output)] == [("orphan", "node_deleted")]


def test_gaps_with_a_threshold_override(dbfile: str):
    out = run("gaps", "--threshold", "stopped_to_deleted=60", "--db", dbfile, "-o", "json")
    assert [g for g in json.loads(out.output) if g["category"] in ("slow", "unknown")] == []
    out = run("gaps", "--db", dbfile, "-o", "json")  # the override did not stick
    assert [g["name"] for g in json.loads(out.output) if g["category"] == "unknown"] == ["missed"]
    bad = CliRunner().invoke(cli, ["gaps", "--threshold", "nope=1", "--db", dbfile])
    assert bad.exit_code == 1 and "unknown threshold 'nope'" in bad.output


def test_gaps_since_keeps_what_ended_then_or_later(dbfile: str):
    every = json.loads(run("gaps", "--db", dbfile, "-o", "json").output)
    ends = sorted({g["end_at"] for g in every})
    assert len(ends) > 1  # a time between the first gap's end and the last one's
    recent = json.loads(run("gaps", "--since", ends[1], "--db", dbfile, "-o", "json").output)
    assert recent == [g for g in every if g["end_at"] >= ends[1]]
    assert 0 < len(recent) < len(every)
    # after the data's end, only what is still open there: what ends at the data's end
    (end,) = json.loads(run("query", "SELECT data_end() AS t", "--db", dbfile,
                            "-o", "json").output)
    later = json.loads(run("gaps", "--since", "2030-01-01T00:00:00Z", "--db", dbfile,
                           "-o", "json").output)
    assert later == [g for g in every if g["end_at"] == end["t"]]


def test_races_and_state(dbfile: str):
    out = run("races", "-n", "race", "--db", dbfile, "-o", "json")
    sections = json.loads(out.output)
    assert [r["verdict"] for r in sections["races"]] == ["stopped_before_endpoint_off"] * 3
    assert sections["race_summary"][0]["suggested_prestop_s"] == 3
    # --since: the pods whose deletion was requested from then on, summarised alone
    requested = sorted(r["deletion_requested_at"] for r in sections["races"])
    out = run("races", "-n", "race", "--since", requested[1], "--db", dbfile, "-o", "json")
    recent = json.loads(out.output)
    assert [r["pod"] for r in recent["races"]] == [
        r["pod"] for r in sections["races"] if r["deletion_requested_at"] >= requested[1]]
    assert len(recent["races"]) == 2 and recent["race_summary"][0]["pods"] == 2
    out = run("state", "--at", "2026-11-30T07:12:00Z", "--kind", "Pod", "-n", "hold",
              "--db", dbfile, "-o", "csv")
    assert [l.split(",")[2] for l in out.output.splitlines()[1:]] == ["busy", "held", "hooked"]


def test_import_command(tmp_path: Path):
    out = run("import", *captures("scenarios"), "--db", str(tmp_path / "i.duckdb"))
    assert out.exit_code == 0
    # a capture restarted after a broken watch repeats its relist as ADDED: of unchanged
    # objects the same version as the MODIFIED already loaded, so a duplicate too
    assert out.output.splitlines()[0] == ("loaded 430 of 543 records (113 duplicates, "
                                          "0 filtered out, 17 problems)")


def test_incident_loads_a_window_and_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)  # where the window's database is written
    out = run("incident", recording("scenarios"), "--since", "2026-11-30T07:11:40Z",
              "--until", "2026-11-30T07:12:23Z", "-o", "json")
    report = json.loads(out.stdout)
    assert report["recording"][0]["first_received_at"] >= "2026-11-30T07:11:40"
    assert {r["name"] for r in report["stuck"]} >= {"held", "busy", "hooked"}


def test_demo_finds_the_race_and_the_finalizer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    report = json.loads(run("demo", "-o", "json").stdout)
    raced = report["races"]
    assert {r["verdict"] for r in raced} == {"stopped_before_endpoint_off"}
    assert ("held", "finalizers") in {(r["name"], r["top_cause"]) for r in report["stuck"]}


@pytest.mark.parametrize("args, message", [
    (["stuck", "--db", "/nonexistent/x.duckdb"], "Error: no database at /nonexistent/x.duckdb"),
    (["stuck", "--at", "yesterday-ish", "--db", "{db}"], "is neither an RFC 3339 time nor a duration"),
    (["query", "SELEC nonsense", "--db", "{db}"], "Error: query failed: Parser Error"),
])
def test_errors_are_one_line(dbfile: str, args: list[str], message: str):
    result = CliRunner().invoke(cli, [a.replace("{db}", dbfile) for a in args])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and message in result.output


def test_a_foreign_database_is_refused_in_one_line(tmp_path: Path):
    path = str(tmp_path / "other.duckdb")
    duckdb.connect(path).execute("CREATE TABLE invoices (id INTEGER)").close()
    result = CliRunner().invoke(cli, ["replay", recording("scenarios"), "--db", path])
    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: {path} is not a ktrace database (it holds other "
                                     "tables: invoices); refusing to write into it")


def test_stuck_filters_and_a_time_after_the_data(tmp_path: Path):
    path = str(tmp_path / "p.duckdb")
    assert run("replay", recording("pending"), "--db", path).exit_code == 0
    pending = json.loads(run("stuck", "--pending", "--db", path, "-o", "json").output)
    assert {r["problem"] for r in pending} == {"pending", "not_ready", "not_created",
                                              "rollout_stalled", "claim_pending"}
    assert json.loads(run("stuck", "--terminating", "--db", path, "-o", "json").output) == []
    late = CliRunner().invoke(cli, ["stuck", "--at", "2030-01-01T00:00:00Z",
                                   "--db", path, "-o", "json"])
    assert late.exit_code == 0
    assert late.stderr.startswith("note: the data ends at 2026-12-01T09:57:45")
    assert json.loads(late.stdout) == json.loads(run("stuck", "--db", path, "-o", "json").output)
