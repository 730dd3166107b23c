"""One database at a time without retyping it: --db's help shows $KTRACE_DB in effect and
the last database a command made, a missing database's error offers both, and the loads
that make a database remember it (docs/cli.md "The database")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ktrace import clidoc
from ktrace.cli import cli
from ktrace.commands.replay import demo_recording
from ktrace.databases import LAST_DATABASE_FILE
from tests.replayer_data import recording


def run(state: Path, *args: str, **env: str) -> Result:
    runner = CliRunner(env={"XDG_STATE_HOME": str(state), "KTRACE_DB": None, "COLUMNS": "200",
                            **env})
    return runner.invoke(cli, list(args), prog_name="ktrace")


def db_help(result: Result) -> str:
    """--db's help text, on one line."""
    return " ".join(result.stdout.partition("  --db PATH")[2].split("\n  -")[0].split())


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Result]:
    """(state directory, demo database, the run) of `ktrace demo --db … --html …`."""
    folder = tmp_path_factory.mktemp("demo")
    result = run(folder / "state", "demo", "--db", str(folder / "demo.duckdb"),
                 "--html", str(folder / "demo.html"))
    assert result.exit_code == 0, result.output
    return folder / "state", folder / "demo.duckdb", result


def test_a_missing_database_names_db_and_ktrace_db(tmp_path):
    result = run(tmp_path / "state", "stuck", "--db", str(tmp_path / "none.duckdb"))
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"Error: no database at {tmp_path}/none.duckdb (named by --db or "
                             "$KTRACE_DB): load one with `ktrace replay` or `ktrace import`\n")


def test_a_missing_database_offers_the_last_one_made(demo, tmp_path):
    state, db, _ = demo
    result = run(state, "timeline", "web-1", "--db", str(tmp_path / "none.duckdb"))
    assert result.exit_code == 1
    assert result.stderr.endswith(f"`ktrace import`, or open the last one made: --db {db}\n")


def test_the_last_database_made_is_one_line_under_xdg_state_home(demo):
    state, db, _ = demo
    assert (state / "ktrace" / LAST_DATABASE_FILE).read_text() == f"{db}\n"


def test_replay_and_import_remember_their_database(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative --db is remembered as an absolute path
    state = tmp_path / "state"
    assert run(state, "replay", recording("scenarios"), "--db", "r.duckdb").exit_code == 0
    assert (state / "ktrace" / LAST_DATABASE_FILE).read_text() == f"{tmp_path}/r.duckdb\n"
    capture = tmp_path / "pods.json"
    capture.write_text('{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", '
                       '"kind": "Pod", "metadata": {"name": "p", "namespace": "default", '
                       '"uid": "u1", "resourceVersion": "1", '
                       '"creationTimestamp": "2026-11-30T07:00:00Z"}}]}')
    assert run(state, "import", str(capture), "--db", "i.duckdb").exit_code == 0
    assert (state / "ktrace" / LAST_DATABASE_FILE).read_text() == f"{tmp_path}/i.duckdb\n"


def test_a_state_directory_that_cannot_be_written_costs_only_the_hint(tmp_path):
    result = run(Path("/dev/null"), "replay", recording("scenarios"),
                 "--db", str(tmp_path / "r.duckdb"))
    assert result.exit_code == 0, result.output


def test_db_help_shows_the_default_and_the_variable(tmp_path):
    assert db_help(run(tmp_path, "stuck", "--help")) == (
        "The replay database (DuckDB file). [default: ktrace.duckdb, or $KTRACE_DB]")


def test_db_help_shows_the_database_ktrace_db_names(tmp_path):
    result = run(tmp_path, "get", "--help", KTRACE_DB="/data/prod.duckdb")
    assert db_help(result) == ("The replay database (DuckDB file). "
                               "[now /data/prod.duckdb from $KTRACE_DB]")


def test_db_help_offers_the_last_database_made(demo):
    state, db, _ = demo
    for command in ("stuck", "report", "export", "replay", "import"):
        shown = db_help(run(state, command, "--help")).replace(" ", "")  # a path may wrap
        assert shown.endswith(f"[default:ktrace.duckdb,or$KTRACE_DB;lastmade:{db}]"), command


def test_ktrace_db_is_read_by_every_analysis(demo):
    state, db, _ = demo
    result = run(state, "info", KTRACE_DB=str(db))
    assert result.exit_code == 0 and result.stdout.startswith("== Clusters")


def test_the_reference_shows_no_machines_settings(demo):
    """docs/cli.md is drawn alike whatever $KTRACE_DB and the last database are."""
    state, db, _ = demo
    plain = clidoc.reference()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KTRACE_DB", str(db))
        patch.setenv("XDG_STATE_HOME", str(state))
        assert clidoc.reference() == plain
    assert str(db) not in plain


def test_demo_says_which_report_file_it_wrote(demo):
    state, db, result = demo
    html = db.with_name("demo.html")
    lanes = len(set(re.findall(r'id="lane-([^"]+)"', html.read_text())))
    assert result.stderr.splitlines()[-2:] == [
        f"demo database: {db} — open an evidence id with `ktrace evidence ID --db {db}`, "
        f"or `export KTRACE_DB={db}` first",
        f"wrote {html} ({lanes} pods)"]


def test_an_import_of_only_secrets_says_the_database_holds_no_records(tmp_path):
    capture = tmp_path / "secrets.json"
    capture.write_text('{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", '
                       '"kind": "Secret", "metadata": {"name": "s", "namespace": "default", '
                       '"uid": "u1", "resourceVersion": "1", '
                       '"creationTimestamp": "2026-11-30T07:00:00Z"}, "data": {"a": "Yg=="}}]}')
    result = run(tmp_path / "state", "import", str(capture), "--db", str(tmp_path / "s.duckdb"))
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "loaded 0 of 1 records (0 duplicates, 0 filtered out, 1 problem)",
        "database: no records",
        "problems (see table load_problems): secret_refused 1"]


def test_incident_and_demo_print_alike(tmp_path, monkeypatch):
    """One sequence behind both: the same recording and window give the same findings,
    the same closing lines, a remembered database."""
    monkeypatch.chdir(tmp_path)
    state = tmp_path / "state"
    demo = run(state, "demo", "--db", "d.duckdb", "-o", "json")
    incident = run(state, "incident", demo_recording(), "--since", "2026-12-07T14:00:00Z",
                   "--db", "i.duckdb", "-o", "json")
    assert demo.exit_code == incident.exit_code == 0, (demo.output, incident.output)
    assert demo.stdout == incident.stdout
    assert demo.stderr.splitlines()[-1].startswith("demo database: d.duckdb — ")
    assert incident.stderr.splitlines()[-1].startswith("incident database: i.duckdb — ")
    assert (state / "ktrace" / LAST_DATABASE_FILE).read_text() == f"{tmp_path}/i.duckdb\n"
