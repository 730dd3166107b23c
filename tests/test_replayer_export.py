"""ktrace export: a database as hive-partitioned Parquet, and analyses reading it in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from replayer import db
from replayer.analyses.races import races
from replayer.analyses.stuck import stuck
from replayer.export import ExportError, export_parquet, open_parquet
from replayer.replay import replay
from transports.locallog.source import LocalLogSource
from tests.replayer_data import recording, rows


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    work = tmp_path_factory.mktemp("export")
    path = str(work / "r.duckdb")
    con = db.open_db(path)
    replay(LocalLogSource(recording("scenarios")), con, source_name="s", prefix="ktrace")
    con.close()
    out = str(work / "parquet")
    done = CliRunner().invoke(cli, ["export", "--db", path, "--parquet", out])
    assert done.exit_code == 0, done.output
    return path, out


def test_every_table_reads_back_from_parquet_unchanged(exported: tuple[str, str]):
    path, out = exported
    con, pq = db.open_readonly(path), open_parquet(out)
    tables = [t for (t,) in rows(con, "SELECT table_name FROM information_schema.tables "
                                      "WHERE table_schema = 'main' AND table_type = 'BASE TABLE'")]
    assert {"raw_events", "pods", "pod_transitions", "sources"} <= set(tables)
    for table in tables:
        assert rows(pq, f'SELECT * FROM "{table}" ORDER BY ALL') == rows(
            con, f'SELECT * FROM "{table}" ORDER BY ALL'), table
    assert stuck(pq).rows == stuck(con).rows and stuck(con).rows[1]
    assert races(pq) == races(con)


def test_records_are_partitioned_by_kind_and_date(exported: tuple[str, str]):
    _, out = exported
    pods = sorted(p.relative_to(out).parts[:3] for p in Path(out, "raw_events").rglob("*.parquet")
                  if "kind=Pod" in str(p))
    assert pods and all(part[1] == "kind=Pod" and part[2].startswith("date=2026-") for part in pods)
    assert json.loads(Path(out, "manifest.json").read_text())["tables"]["pods"]["partitioned"]


def test_query_and_analyses_take_a_parquet_directory(exported: tuple[str, str]):
    path, out = exported
    sql = "SELECT kind, count(*) AS n FROM raw_events GROUP BY ALL ORDER BY ALL"
    from_db = CliRunner().invoke(cli, ["query", "--db", path, "-o", "json", sql])
    from_parquet = CliRunner().invoke(cli, ["query", "--parquet", out, "-o", "json", sql])
    assert from_parquet.exit_code == 0 and from_parquet.output == from_db.output
    stuck_db = CliRunner().invoke(cli, ["stuck", "--db", path, "-o", "json"])
    stuck_pq = CliRunner().invoke(cli, ["stuck", "--parquet", out, "-o", "json"])
    assert stuck_pq.exit_code == 0 and stuck_pq.output == stuck_db.output
    outside = CliRunner().invoke(cli, ["query", "--parquet", out,
                                       "SELECT * FROM read_csv('/etc/passwd')"])
    assert outside.exit_code == 1 and "disabled" in outside.output  # still read-only


def test_an_export_is_never_overwritten_and_a_missing_one_is_one_error(exported, tmp_path: Path):
    path, out = exported
    con = db.open_readonly(path)
    with pytest.raises(ExportError, match="already holds an export"):
        export_parquet(con, out)
    with pytest.raises(ExportError, match="no ktrace export"):
        open_parquet(str(tmp_path / "nothing"))
