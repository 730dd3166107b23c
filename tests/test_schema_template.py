"""A new database is a copy of the schema template (replayer/schema_template.py): the same
database as one made in place, a template of another schema never used, a damaged one
refused and made again, a cache that cannot be written no obstacle."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from replayer import db, schema_template
from replayer.replay import replay
from transports.locallog.source import LocalLogSource
from tests.replayer_data import recording, rows


def catalogue(path: str) -> dict[str, list[tuple]]:
    """What a database holds before any load: its tables' columns and rows, its views and
    macros, its meta."""
    con = duckdb.connect(path, read_only=True)
    tables = [t for (t,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary ORDER BY 1").fetchall()]
    found = {
        "columns": rows(con, "SELECT table_name, column_name, data_type "
                             "FROM information_schema.columns ORDER BY ALL"),
        "views": rows(con, "SELECT view_name, sql FROM duckdb_views() "
                           "WHERE NOT internal AND NOT temporary ORDER BY ALL"),
        "macros": rows(con, "SELECT function_name, parameters, macro_definition "
                            "FROM duckdb_functions() WHERE function_type LIKE '%macro' "
                            "AND NOT internal ORDER BY ALL"),
        "rows": [(t, rows(con, f'SELECT * FROM "{t}" ORDER BY ALL')) for t in tables],
    }
    con.close()
    return found


def made_in_place(path: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A database made without a template: the cache is a file, so nothing can be kept."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    with monkeypatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(blocked))
        db.open_db(path).close()


def templates() -> list[Path]:
    return sorted(schema_template.folder().glob("*.duckdb"))


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_new_database_from_the_template_equals_one_made_in_place(
        tmp_path: Path, own_cache: Path, monkeypatch: pytest.MonkeyPatch):
    made_in_place(str(tmp_path / "in-place.duckdb"), monkeypatch, tmp_path)
    assert templates() == []
    for name in ("first.duckdb", "second.duckdb"):  # the template made, then copied
        db.open_db(str(tmp_path / name)).close()
    assert len(templates()) == 1
    expected = catalogue(str(tmp_path / "in-place.duckdb"))
    assert catalogue(str(tmp_path / "first.duckdb")) == expected
    assert catalogue(str(tmp_path / "second.duckdb")) == expected
    # and it loads as any database does; --rebuild starts again from a copy
    con = db.open_db(str(tmp_path / "second.duckdb"))
    replay(LocalLogSource(recording("scenarios")), con, source_name="s", prefix="ktrace")
    assert rows(con, "SELECT count(*) > 0 FROM pod_transitions") == [(True,)]
    con.close()
    db.open_db(str(tmp_path / "second.duckdb"), rebuild=True).close()
    assert catalogue(str(tmp_path / "second.duckdb")) == expected


def test_another_schema_version_uses_a_template_of_its_own(
        tmp_path: Path, own_cache: Path, monkeypatch: pytest.MonkeyPatch):
    db.open_db(str(tmp_path / "now.duckdb")).close()
    monkeypatch.setattr(db, "SCHEMA_VERSION", db.SCHEMA_VERSION + 1)
    db.open_db(str(tmp_path / "next.duckdb")).close()
    assert len(templates()) == 2
    con = duckdb.connect(str(tmp_path / "next.duckdb"), read_only=True)
    assert db.meta(con, "schema_version") == str(db.SCHEMA_VERSION)


@pytest.mark.parametrize("damage", ["another schema version", "not duckdb"])
def test_a_template_that_is_not_what_its_name_says_is_refused_and_made_again(
        tmp_path: Path, own_cache: Path, monkeypatch: pytest.MonkeyPatch, damage: str):
    made_in_place(str(tmp_path / "in-place.duckdb"), monkeypatch, tmp_path)
    db.open_db(str(tmp_path / "first.duckdb")).close()
    [template] = templates()
    if damage == "not duckdb":
        template.write_text("hello\n")
    else:
        con = duckdb.connect(str(template))
        con.execute("UPDATE ktrace_meta SET value = '1' WHERE key = 'schema_version'")
        con.close()
    db.open_db(str(tmp_path / "after.duckdb")).close()
    assert templates() == []  # discarded: the next new database makes it again
    assert catalogue(str(tmp_path / "after.duckdb")) == catalogue(str(tmp_path / "in-place.duckdb"))
    db.open_db(str(tmp_path / "again.duckdb")).close()
    assert catalogue(str(templates()[0])) == catalogue(str(tmp_path / "in-place.duckdb"))


def test_the_newest_templates_are_kept_and_no_more(
        tmp_path: Path, own_cache: Path, monkeypatch: pytest.MonkeyPatch):
    for bump in range(schema_template.KEEP + 2):  # as many upgrades, each its own template
        monkeypatch.setattr(db, "SCHEMA_VERSION", db.SCHEMA_VERSION + 1)
        db.open_db(str(tmp_path / f"{bump}.duckdb")).close()
    kept = templates()
    assert len(kept) == schema_template.KEEP
    newest = db._template_name()
    assert schema_template.folder() / f"{newest}.duckdb" in kept
