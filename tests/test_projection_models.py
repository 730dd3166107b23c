"""The projections as models (replayer/projections.py, replayer/sql/<name>.sql): each
declares what it reads, they are made in that order, and small models give the rows their
SQL promises."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from replayer import db, projections, typed

#: what a model reads: a relation after FROM/JOIN, or a macro called
_READS = re.compile(r"\b(?:FROM|JOIN)\s+(\w+)|(?<![\w.])(\w+)\s*\(", re.I)


def read_by(model: projections.Model) -> set[str]:
    """The models and typed tables a model's SQL reads (comments and strings aside)."""
    # one pass left to right: a string may hold "--" (advice quoting --verbs), a comment "'"
    code = re.sub(r"'(?:[^']|'')*'|--[^\n]*",
                  lambda m: "''" if m.group().startswith("'") else "", model.body)
    names = set(projections.models()) | {m.table for m in typed.models()}
    return {a or b for a, b in _READS.findall(code)} & names - {model.name}


def test_every_model_declares_exactly_what_it_reads():
    for name, model in projections.models().items():
        assert set(model.depends) == read_by(model), name


def test_models_are_made_after_what_they_read():
    order = projections.order()
    assert len(order) == len(set(order))
    for name, model in projections.models().items():
        for depends in model.depends:
            assert order.index(depends) < order.index(name), (name, depends)
    states = [n for n, m in projections.models().items() if m.materialisation == "state"]
    assert set(order[:len(states)]) == set(states)  # the file is claimed first


def test_a_cycle_and_an_unknown_dependency_are_named():
    with pytest.raises(projections.ModelError, match=r"cycle: a → b → c → a"):
        projections.dependency_order({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()})
    with pytest.raises(projections.ModelError, match="model a depends on nope: no such model"):
        projections.dependency_order({"a": {"nope"}})


def test_a_header_that_cannot_be_read_is_refused():
    with pytest.raises(projections.ModelError, match="sql/x.sql: its first line must be"):
        projections.parse("x", "-- a view\nSELECT 1")
    with pytest.raises(projections.ModelError, match="cannot read its header"):
        projections.parse("x", "-- model: view; after: y\nSELECT 1")
    model = projections.parse("x", "-- model: macro(ts, n := 2); depends: y, z\n-- why\nFROM y")
    assert (model.materialisation, model.params, model.depends) == ("macro", "(ts, n := 2)",
                                                                    ("y", "z"))
    assert model.statements() == ["CREATE OR REPLACE MACRO x(ts, n := 2) AS TABLE -- why\nFROM y"]


def test_every_score_is_in_the_seed():
    """No model ranks with a number of its own: each score is cause_scores'."""
    for name, model in projections.models().items():
        code = re.sub(r"--[^\n]*", "", model.body)
        assert not re.search(r"\b\d+\s+AS\s+score\b|THEN\s+\d+\s+ELSE\s+\d+\s+END\s+AS\s+score",
                             code, re.I), name


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    con = db.open_db(str(tmp_path_factory.mktemp("models") / "models.duckdb"))
    yield con
    con.close()


def test_cause_score_reads_the_seed_and_its_variant(con: duckdb.DuckDBPyConnection):
    assert con.execute("SELECT cause_score('node_not_ready', false), "
                       "cause_score('node_not_ready', true), cause_score('unknown', false), "
                       "cause_score('node_deleted', true)").fetchone() == (78, 90, 0, None)


def _records(con: duckdb.DuckDBPyConnection, seqs: dict[int, int]) -> None:
    """Records of one session and topic: event_id → seq, received event_id seconds in."""
    con.executemany("INSERT INTO raw_events BY NAME SELECT ? AS event_id, ? AS seq, 's1' AS "
                    "session, 'pods' AS topic, 'c' AS cluster, 'MODIFIED' AS type, "
                    "TIMESTAMP '2026-01-01' + to_seconds(?) AS received_at",
                    [(event_id, seq, event_id) for event_id, seq in seqs.items()])


def _refresh_rescanning(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """Refresh; the pairs sequence_holes recomputed: (appended, after_seq) each."""
    for step, _ in projections.refreshing(con):
        if step == "sequence_ends":  # what sequence_holes, refreshed next, reads
            rescanned = con.execute("SELECT appended, after_seq FROM sequence_rescan").fetchall()
    return rescanned


def test_sequence_holes_examine_only_what_came_since(tmp_path: Path):
    """A duplicate skipped since the last refresh is examined once, not on every refresh
    after; records that follow a pair's last go on from it (appended), out of order they
    search the history, and either way the holes are a full refresh's."""
    con = db.open_db(str(tmp_path / "holes.duckdb"))
    _records(con, {1: 1, 2: 2, 3: 5})
    assert _refresh_rescanning(con) == [(False, 1)]
    con.execute("INSERT INTO duplicate_sequence VALUES ('s1', 'pods', 3)")
    assert _refresh_rescanning(con) == [(False, 2)]
    assert _refresh_rescanning(con) == []  # the duplicate examined once
    _records(con, {4: 9})
    assert _refresh_rescanning(con) == [(True, 5)]
    _records(con, {5: 7})
    assert _refresh_rescanning(con) == [(False, 5)]
    holes = "SELECT prev_seq, seq, event_id FROM sequence_holes ORDER BY seq"
    found = con.execute(holes).fetchall()
    assert found == [(3, 5, 3), (5, 7, 5), (7, 9, 4)]
    projections.rescope_all(con)
    projections.refresh(con)
    assert con.execute(holes).fetchall() == found


def test_sequence_holes_keep_the_old_and_find_the_new(con: duckdb.DuckDBPyConnection):
    """Given records with seq 1, 2, 5 then 9 loaded later: the hole 2→5 stays, 5→9 is
    found by the second refresh alone (it rescans from the last record before the new)."""
    _records(con, {1: 1, 2: 2, 3: 5})
    projections.refresh(con)
    holes = "SELECT prev_seq, seq, event_id FROM sequence_holes ORDER BY seq"
    assert con.execute(holes).fetchall() == [(2, 5, 3)]
    _records(con, {4: 9})
    projections.refresh(con)
    assert con.execute(holes).fetchall() == [(2, 5, 3), (5, 9, 4)]
    assert con.execute("SELECT first_at::VARCHAR, last_at::VARCHAR, last_event_id "
                       "FROM session_topics").fetchall() == [
        ("2026-01-01 00:00:01", "2026-01-01 00:00:04", 4)]
