"""A catch-up's projection refresh costs what the catch-up brought: it rewrites the rows of
the objects it touched (and the pods they concern) and leaves every other row as it was,
and its rows are those a refresh of every object gives."""

from __future__ import annotations

from pathlib import Path

import duckdb

from replayer import db, projections
from replayer.loader import Loader
from replayer.record_filter import RecordFilter
from replayer.replay import read
from tests.replayer_data import recording, rows
from transports.locallog.source import LocalLogSource
from transports.window import Window

#: Records the catch-up brings: the newest of the recording, by receive time.
CATCH_UP = 40
KEYED = [m for m in projections.ordered_models() if m.key]
TABLES = [m.name for m in projections.ordered_models() if m.materialisation == "table"]
#: Columns that say what the latest refresh brought, not what the records say.
BOOKKEEPING = {"sequence_ends": "EXCLUDE (before_seq, before_at)"}


def answers(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    return {t: rows(con, f"SELECT * {BOOKKEEPING.get(t, '')} FROM {t} ORDER BY ALL")
            for t in TABLES}


def rows_by_rowid(con: duckdb.DuckDBPyConnection, model: projections.Model) -> dict[int, tuple]:
    """Each row of ``model``'s table by its rowid (a row rewritten gets a new one), its key
    first."""
    return {rowid: row for rowid, *row in rows(
        con, f"SELECT rowid, {model.key}, * FROM {model.name}")}


def test_a_catch_up_rewrites_only_the_rows_of_the_objects_it_touched(tmp_path: Path):
    source = LocalLogSource(recording("scenarios"))
    con = db.open_db(str(tmp_path / "follow.duckdb"))
    received = sorted(d.record["receivedAt"] for d in source.read(source.topics("ktrace"))
                      if d.record is not None)
    loader = Loader(con, "log", locator=source.locator)
    loader.load(read(source, "ktrace", RecordFilter(), after={},
                     window=Window(until_us=received[-CATCH_UP - 1])))
    before = {m.name: rows_by_rowid(con, m) for m in KEYED}

    loader.project = lambda: None  # the catch-up's refresh, watched below
    loader.load(read(source, "ktrace", RecordFilter(), after=loader.positions))
    con.begin()
    projections.mark_touched(con)
    scope = {uid for (uid,) in rows(con, "SELECT uid FROM projection_scope")}
    written = projections.refresh(con)
    con.commit()

    objects = rows(con, "SELECT count(DISTINCT uid) FROM raw_events")[0][0]
    assert 0 < len(scope) < objects / 4, "the catch-up's scope is a few objects"
    for model in KEYED:
        after = rows_by_rowid(con, model)
        rewritten = [row for rowid, row in after.items() if rowid not in before[model.name]]
        assert {row[0] for row in rewritten} <= scope, model.name
        assert written[model.name] == len(rewritten), model.name
        untouched = {rowid: row for rowid, row in before[model.name].items()
                     if row[0] not in scope}
        assert {rowid: after.get(rowid) for rowid in untouched} == untouched, model.name
    assert written["pod_transitions"] > 0

    caught_up = answers(con)
    con.begin()
    projections.rescope_all(con)  # every object's rows computed again
    projections.refresh(con)
    con.commit()
    assert answers(con) == caught_up
    assert caught_up["pod_transitions"]


def test_a_refresh_reads_the_rows_it_appended_as_every_row_of_its_scope(tmp_path: Path):
    """A keyed model refreshed after another reads that table's scope rows from the first
    rowid its refresh appended (sql/refreshed_from.sql): the tables equal each model's SELECT
    over every object outside a refresh, where every row is read."""
    con = db.open_db(str(tmp_path / "refresh.duckdb"))
    Loader(con, "log", locator="log").load(read(
        LocalLogSource(recording("scenarios")), "ktrace", RecordFilter(), after={}))
    con.execute("INSERT INTO projection_scope SELECT DISTINCT uid FROM raw_events "
                "WHERE uid IS NOT NULL")
    for model in KEYED:
        table = rows(con, f"SELECT * FROM {model.name} ORDER BY ALL")
        assert table == rows(con, f"SELECT * FROM {model.name}_computed ORDER BY ALL"), model.name
        assert table or model.name == "finalizer_versions", model.name
