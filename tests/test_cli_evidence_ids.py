"""Evidence you can follow: `demo` keeps its database in the cache directory and says where,
`incident` writes a new file per window, and every evidence id printed opens with
`ktrace evidence ID` — the same id in every database loaded from the recording, whatever the
load order, the window or a rebuild."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from ktrace.commands.replay import demo_recording
from tests.replayer_data import recording

WINDOW = ("--since", "2026-11-30T07:11:40Z", "--until", "2026-11-30T07:12:23Z")


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def ids_in(value) -> set[str]:
    """Every evidence id anywhere in a JSON answer."""
    found: set[str] = set()

    def walk(v, under: bool) -> None:
        if isinstance(v, dict):
            for k, item in v.items():
                walk(item, under or k in ("evidence", "evidence_event_id"))
        elif isinstance(v, list):
            for item in v:
                walk(item, under)
        elif under and v is not None:
            found.add(v)
    walk(value, False)
    return found


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory):
    """Two `ktrace demo -o json` runs with the cache in a temporary directory."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        first, second = invoke("demo", "-o", "json"), invoke("demo", "-o", "json")
    return cache / "ktrace" / "demo.duckdb", first, second


def test_demo_keeps_its_database_in_the_cache_and_says_where(demo_runs):
    path, first, _ = demo_runs
    assert path.exists()
    assert f"`ktrace evidence ID --db {path}`" in first.stderr
    assert str(path) not in first.stdout  # data on stdout, the hint on stderr


def test_every_id_the_demo_prints_opens_and_is_the_same_after_a_rebuild(demo_runs):
    path, first, second = demo_runs
    report = json.loads(first.stdout)
    assert first.stdout == second.stdout  # rebuilt from scratch: the same ids
    ids = ids_in(report)
    assert len(ids) > 20 and all(isinstance(i, str) for i in ids)
    records = [json.loads(invoke("evidence", i, "--db", str(path), "-o", "json").stdout)
               for i in sorted(ids)]
    assert [r["id"] for r in records] == sorted(ids)
    # objects' records carry the object, the recorder's markers (gaps, sessions) do not
    assert all((r["object"] is None) == (r["uid"] is None) for r in records)
    text = invoke("evidence", sorted(ids)[0], "--db", str(path)).stdout
    assert text.splitlines()[0].split() == ["id:", sorted(ids)[0]] and "offset:" in text


def _stuck_evidence(db: str) -> dict[str, list[str]]:
    rows = json.loads(invoke("stuck", "--db", db, "-o", "json").stdout)
    return {r["uid"]: sorted(ids_in(r)) for r in rows}


def test_ids_do_not_depend_on_load_order_or_window(tmp_path: Path, monkeypatch):
    """The demo loaded after an import (other event_ids), and an incident window of the
    scenarios recording, name their records with the ids a plain load gives them."""
    alone, after = str(tmp_path / "alone.duckdb"), str(tmp_path / "after.duckdb")
    invoke("replay", demo_recording(), "--db", alone)
    invoke("import", "tests/data/public/crash-loop-1.json", "--cluster", "capture", "--db", after)
    invoke("replay", demo_recording(), "--db", after)
    event_ids = "SELECT min(event_id) AS first FROM raw_events WHERE session NOT LIKE 'import:%'"
    assert (json.loads(invoke("query", event_ids, "--db", alone, "-o", "json").stdout)
            != json.loads(invoke("query", event_ids, "--db", after, "-o", "json").stdout))
    by_load = _stuck_evidence(after)
    assert {u: e for u, e in by_load.items() if u in _stuck_evidence(alone)} == _stuck_evidence(alone)

    full = str(tmp_path / "full.duckdb")
    invoke("replay", recording("scenarios"), "--db", full)
    monkeypatch.chdir(tmp_path)
    windowed = invoke("incident", recording("scenarios"), *WINDOW, "-o", "json")
    window_db = windowed.stderr.split("incident database: ")[1].split(" ")[0]
    in_window = sorted({i for ids in _stuck_evidence(window_db).values() for i in ids})
    assert in_window
    moved = 0  # records whose event_id (load order) differs between the two databases
    for evidence_id in in_window:  # the window's ids name the same records in the full load
        records = [json.loads(invoke("evidence", evidence_id, "--db", db, "-o", "json").stdout)
                   for db in (window_db, full)]
        moved += records[0]["event_id"] != records[1]["event_id"]
        assert [{k: r[k] for k in ("uid", "type", "resource_version", "received_at", "offset")}
                for r in records] == [{k: records[1][k] for k in ("uid", "type",
                                       "resource_version", "received_at", "offset")}] * 2
    assert moved


def test_incident_without_db_writes_a_new_file_per_run_and_never_overwrites(tmp_path: Path,
                                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        invoke("incident", recording("scenarios"), *WINDOW)
    assert sorted(os.listdir(tmp_path)) == [
        "incident-20261130T071140Z-20261130T071223Z-2.duckdb",
        "incident-20261130T071140Z-20261130T071223Z.duckdb"]
    failed = CliRunner().invoke(cli, ["incident", recording("scenarios"), "--since",
                                      "2020-01-01T00:00:00Z", "--until", "2020-01-01T00:01:00Z"])
    assert failed.exit_code == 1 and len(os.listdir(tmp_path)) == 2  # nothing left behind


def test_a_bad_or_unknown_evidence_id_is_one_error_line(demo_runs):
    path = str(demo_runs[0])
    for bad, message in (("nonsense", "is not an evidence id"),
                         ("po:00000000:1", "no record with evidence id po:00000000:1")):
        result = CliRunner().invoke(cli, ["evidence", bad, "--db", path])
        assert result.exit_code == 1 and message in result.stderr
        assert len(result.stderr.splitlines()) == 1
