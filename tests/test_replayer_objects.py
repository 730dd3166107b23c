"""Objects out of the load's hot path: fetched from the source by position unless stored
(--store-objects all), a clear error once the source is gone; and several recordings,
each with its own positions, in one database."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import orjson
import pytest

from replayer import db
from replayer.analyses.evidence import evidence
from replayer.analyses.state import state
from replayer.analyses.stuck import stuck
from replayer.objects import ObjectUnavailable
from replayer.replay import import_captures, replay
from transports.locallog.source import LocalLogSource
from tests.replayer_data import captures, recording, rows

POD_RECORDS = ("SELECT event_id, topic, \"offset\" FROM raw_events WHERE kind = 'Pod' "
               "AND object_size > 0 ORDER BY event_id")


def _copy(scenario: str, tmp_path: Path) -> str:
    return shutil.copytree(recording(scenario), tmp_path / f"{scenario}-log")


def _load(tmp_path: Path, directory: str, *, store: bool) -> "db.duckdb.DuckDBPyConnection":
    con = db.open_db(str(tmp_path / f"store-{store}.duckdb"))
    replay(LocalLogSource(directory), con, source_name="t", prefix="ktrace", store_objects=store)
    return con


def _in_source(directory: str, topic: str, offset: int) -> dict:
    return orjson.loads(LocalLogSource(directory).record_at(topic, 0, offset)["object"])


@pytest.mark.parametrize("store", [False, True], ids=["fetched", "stored"])
def test_evidence_and_state_give_the_full_object_in_both_modes(tmp_path: Path, store: bool):
    log = _copy("pending", tmp_path)
    con = _load(tmp_path, log, store=store)
    stored = rows(con, "SELECT count(object) FROM raw_events")[0][0]
    assert (stored > 0) == store
    records = rows(con, POD_RECORDS)
    for event_id, topic, offset in records[:: max(1, len(records) // 20)]:
        obj = evidence(con, str(event_id), full=True)["object"]
        assert obj == _in_source(log, topic, offset) and obj["kind"] == "Pod"
    end = rows(con, "SELECT max(received_at) FROM raw_events")[0][0]
    columns, found = state(con, end, kind="Pod", full=True)
    objects = [dict(zip(columns, r))["object"] for r in found]
    assert objects and all(o["kind"] == "Pod" for o in objects)
    assert {o["metadata"]["name"] for o in objects} == {dict(zip(columns, r))["name"] for r in found}


def test_a_moved_source_fails_only_what_needs_objects(tmp_path: Path):
    log = _copy("pending", tmp_path)
    con = _load(tmp_path, log, store=False)
    event_id = rows(con, POD_RECORDS)[0][0]
    shutil.move(log, tmp_path / "moved")
    with pytest.raises(ObjectUnavailable) as err:
        evidence(con, str(event_id), full=True)
    assert "\n" not in str(err.value) and "--store-objects all" in str(err.value)
    assert evidence(con, str(event_id))["facts"]["pods"]  # the typed facts need no source
    assert stuck(con).rows[1]  # analyses read typed tables only
    assert state(con, datetime(2100, 1, 1), kind="Pod")[1]


def test_stored_objects_outlive_the_source(tmp_path: Path):
    log = _copy("pending", tmp_path)
    con = _load(tmp_path, log, store=True)
    event_id, topic, offset = rows(con, POD_RECORDS)[0]
    expected = _in_source(log, topic, offset)
    shutil.rmtree(log)
    assert evidence(con, str(event_id), full=True)["object"] == expected


def test_a_source_keeps_the_object_mode_it_was_loaded_with(tmp_path: Path):
    con = _load(tmp_path, recording("pending"), store=False)
    with pytest.raises(db.DatabaseError, match="--store-objects none"):
        replay(LocalLogSource(recording("pending")), con, source_name="t", prefix="ktrace",
               store_objects=True)


def test_several_recordings_load_into_one_database_each_with_its_positions(tmp_path: Path):
    con = db.open_db(str(tmp_path / "two.duckdb"))
    counts = {}
    for scenario in ("pending", "crashed"):
        summary = replay(LocalLogSource(recording(scenario)), con, source_name=scenario,
                         prefix="ktrace")
        counts[scenario] = summary.stats.loaded
        alone = db.open_db(str(tmp_path / f"{scenario}.duckdb"))
        assert replay(LocalLogSource(recording(scenario)), alone, source_name=scenario,
                      prefix="ktrace").stats.loaded == summary.stats.loaded
    import_captures([p for p in captures("evicted") if "pods" in p], con, cluster="second")
    assert rows(con, "SELECT count(DISTINCT source_id) FROM load_positions") == [(3,)]
    assert rows(con, "SELECT count(*) FROM raw_events WHERE source_id IN (1, 2)") == [
        (counts["pending"] + counts["crashed"],)]
    assert {c for (c,) in rows(con, "SELECT DISTINCT cluster FROM raw_events")} == {
        "capture", "second"}
    for scenario in ("pending", "crashed"):  # each resumes after its own positions
        again = replay(LocalLogSource(recording(scenario)), con, source_name=scenario,
                       prefix="ktrace")
        assert again.stats.deliveries == 0
