"""The demo's database (`demo_db`, replayed once per session) and report (`demo_report`, by
`ktrace demo --db … --html …`) — a pytest plugin: see tests/conftest.py — and the CLI
runner the report tests share."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ktrace.cli import cli


def ktrace(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def query(path: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The packaged demo recording replayed into a database (no report drawn)."""
    from ktrace.commands.replay import demo_recording
    path = str(tmp_path_factory.mktemp("demo") / "demo.duckdb")
    ktrace("replay", demo_recording(), "--db", path)
    return path


@pytest.fixture(scope="session")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(database, report) of the packaged demo recording."""
    folder = tmp_path_factory.mktemp("report")
    ktrace("demo", "--db", str(folder / "demo.duckdb"), "--html", str(folder / "report.html"))
    return folder / "demo.duckdb", folder / "report.html"
