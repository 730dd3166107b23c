"""Each typed table is declared once, in SQL; docs/projections.md lists exactly its columns."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from replayer import db, typed

DOC = Path(__file__).resolve().parents[1] / "docs" / "projections.md"


def documented_columns() -> dict[str, list[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### Fact tables"):text.index("## Ordering")]
    return {m[1]: [c.strip() for c in m[2].split(",")]
            for m in re.finditer(r"^\| `(\w+)` \| ([^|]+) \|$", section, re.M)}


def test_documented_columns_are_the_models(tmp_path: Path):
    con = db.open_db(str(tmp_path / "empty.duckdb"))
    actual = {m.table: [r[0] for r in con.execute(f"DESCRIBE {m.table}").fetchall()]
              for m in typed.models()}
    assert documented_columns() == actual


#: the one model that reads the object text itself: fieldsV1 (most of a pod's bytes) is
#: parsed only for the few objects with finalizers, not for every object
READS_OBJECT_TEXT = {"finalizer_owners"}


#: a JSON function applied to the object text of the batch (a JSON-typed field of the parsed
#: structure, such as a selector whose shape differs by kind, is the structure's)
_PARSES_OBJECT = re.compile(r"\b(?:json_extract|json_keys|from_json)\s*\(\s*b\.object\b")


def test_models_read_no_object_json_outside_the_parse():
    """_parsed.sql parses each object once; the models select from its structure."""
    for model in typed.models():
        reads = bool(_PARSES_OBJECT.search(model.select))
        assert reads == (model.table in READS_OBJECT_TEXT), model.table


def test_analysis_sql_never_reads_object_json():
    folder = Path(typed.__file__).parent / "sql"
    for path in folder.glob("*.sql"):
        sql = re.sub(r"--[^\n]*|'[^']*'|EXCLUDE \(object\)", "", path.read_text(encoding="utf-8"))
        assert not re.search(r"\bobject\b", sql), path.name


def test_an_older_database_is_refused_with_the_rebuild_command(tmp_path: Path):
    path = str(tmp_path / "old.duckdb")
    db.open_db(path).close()
    con = duckdb.connect(path)
    con.execute("UPDATE ktrace_meta SET value = '1' WHERE key = 'schema_version'")
    con.close()
    for opener in (db.open_db, db.open_readonly):
        try:
            opener(path)
        except db.DatabaseError as exc:
            assert "older ktrace" in str(exc) and "--rebuild" in str(exc)
        else:
            raise AssertionError(f"{opener.__name__} opened a schema-1 database")
    db.open_db(path, rebuild=True).close()


def test_tables_made_by_another_ktrace_are_refused_with_the_rebuild_command(tmp_path: Path):
    path = str(tmp_path / "old-tables.duckdb")
    db.open_db(path).close()
    con = duckdb.connect(path)
    con.execute("ALTER TABLE pods DROP COLUMN creator")
    con.execute("UPDATE ktrace_meta SET value = 'other' WHERE key = 'sql_digest'")
    con.close()
    try:
        db.open_db(path)
    except db.DatabaseError as exc:
        assert "(pods) were made by another ktrace" in str(exc) and "--rebuild" in str(exc)
    else:
        raise AssertionError("opened a database whose pods table lacks a column")
    db.open_db(path, rebuild=True).close()
