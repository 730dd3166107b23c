"""The loader: resume without loading twice, survive a kill, count bad input, refuse
databases that are not ktrace's."""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from transports.locallog.sink import LocalLogSink
from replayer import db, typed
from replayer.loader import Loader
from replayer.record_filter import RecordFilter
from replayer.replay import replay
from transports.source import Delivery, DeliveryRun
from transports.locallog.source import LocalLogSource
from schemas.errors import DecodeError
from tests.replayer_data import FACT_TABLES, recording, rows


def snapshot(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """Every fact table's rows, plus the problems without their load ids."""
    tables = {t: rows(con, f"SELECT * FROM {t} ORDER BY ALL") for t in FACT_TABLES}
    tables["load_problems"] = rows(con, "SELECT * EXCLUDE (load_id) FROM load_problems ORDER BY ALL")
    return tables


def deliveries(scenario: str = "scenarios") -> list[Delivery]:
    source = LocalLogSource(recording(scenario))
    return list(source.read(source.topics("ktrace")))


@pytest.mark.parametrize("scenario", ["scenarios", "crashed"])
def test_a_load_in_many_small_batches_equals_one_clean_load(tmp_path: Path, scenario: str):
    """The projections are recomputed per touched object, pod and slice, and the
    per-session ones merged per position: every batch boundary must give the rows one load
    over everything gives."""
    small = db.open_db(str(tmp_path / "small.duckdb"))
    source = LocalLogSource(recording(scenario))
    # pods before the Events, EndpointSlices and Nodes about them: the order that tests
    # what a batch of those marks for recomputing
    topics = sorted(source.topics("ktrace"), reverse=True)
    for _ in range(2):  # two loads, each in batches of 7 records, the second resuming
        loader = Loader(small, "small", locator=source.locator, batch_size=7)
        loader.load(itertools.islice(source.read(topics, after=loader.positions), 150))
    replay(source, small, source_name="rest", prefix="ktrace")
    clean = db.open_db(str(tmp_path / "clean.duckdb"))
    replay(source, clean, source_name="clean", prefix="ktrace")
    assert rows(small, "SELECT count(*) FROM pod_transitions")[0][0] > 50
    assert projected(small) == projected(clean)


def test_models_skipped_for_batches_without_their_kinds_miss_no_rows(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch):
    """A batch runs only the models that may have rows of its records' kinds (read from
    each model's SQL): batches of 7 records, mostly of one kind each, give the rows every
    model run on every batch gives, and no model has rows of a kind it was skipped for."""
    source = LocalLogSource(recording("scenarios"))

    def load(name: str) -> duckdb.DuckDBPyConnection:
        con = db.open_db(str(tmp_path / f"{name}.duckdb"))
        Loader(con, name, locator=source.locator, batch_size=7).load(
            source.read(source.topics("ktrace")))
        return con

    skipping = load("skipping")
    insert_batch = typed.insert_batch
    monkeypatch.setattr(typed, "insert_batch", lambda con, kinds=None: insert_batch(con))
    every = load("every")
    tables = FACT_TABLES + ["finalizer_owners"]
    assert {t: rows(skipping, f"SELECT * FROM {t} ORDER BY ALL") for t in tables} == \
        {t: rows(every, f"SELECT * FROM {t} ORDER BY ALL") for t in tables}
    kind_models = {m.table: m.kinds for m in typed.models() if m.kinds is not None}
    found = {table: {k for (k,) in rows(every, f"SELECT DISTINCT r.kind FROM {table} "
                                               "JOIN raw_events r USING (event_id)")}
             for table in kind_models}
    assert all(found[t] <= kinds for t, kinds in kind_models.items()), found
    assert all(found[t] for t in ("pods", "containers", "nodes", "workloads", "k8s_events"))


def projected(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """The projections, their evidence named by source position (event ids follow the
    load order)."""
    return {
        "pod_transitions": rows(con, "SELECT t.* EXCLUDE (evidence_event_id), r.topic, "
                                     "r.\"offset\" FROM pod_transitions t LEFT JOIN raw_events r "
                                     "ON r.event_id = t.evidence_event_id ORDER BY ALL"),
        "pod_lifecycle": rows(con, "SELECT * FROM pod_lifecycle ORDER BY ALL"),
        "object_versions": rows(con, "SELECT * EXCLUDE (event_id) FROM object_versions "
                                     "ORDER BY ALL"),
        **{table: rows(con, f"SELECT t.* EXCLUDE ({column}), r.topic, r.\"offset\" FROM {table} t "
                            f"LEFT JOIN raw_events r ON r.event_id = t.{column} ORDER BY ALL")
           for table, column in (("endpoint_membership", "since_event_id"),
                                 ("session_topics", "last_event_id"),
                                 ("sequence_holes", "event_id"))}}


def test_sequence_holes_and_sessions_follow_records_that_fill_a_hole_late(tmp_path: Path):
    """The per-session projections merge each load's new records: ten pod records held
    back make a hole for the loads before them, and arriving last they close it — as in
    one load of the same deliveries."""
    items = deliveries("scenarios")
    pods = [d for d in items if d.topic == "ktrace.pods"]
    held = {d.offset for d in pods[10:20]}
    late = [d for d in items if d.topic != "ktrace.pods" or d.offset not in held] + \
        [d for d in pods if d.offset in held]
    offsets = itertools.count()  # one partition in arrival order: positions rise as they come
    arrived = [dataclasses.replace(d, partition=0, offset=next(offsets)) for d in late]
    small = db.open_db(str(tmp_path / "small.duckdb"))
    loader = Loader(small, "small")
    held_from = len(arrived) - len(held)
    for start in range(0, held_from, 50):  # a refresh per load of 50
        loader.load(arrived[start:min(start + 50, held_from)])
    assert rows(small, "SELECT count(*) FROM sequence_holes WHERE topic = 'ktrace.pods'") == [(1,)]
    loader.load(arrived[held_from:])
    clean = db.open_db(str(tmp_path / "clean.duckdb"))
    Loader(clean, "clean").load(arrived)
    assert rows(small, "SELECT count(*) FROM sequence_holes") == [(0,)]
    assert projected(small) == projected(clean)
    assert rows(small, "SELECT * FROM unseen_stretches ORDER BY ALL") == \
        rows(clean, "SELECT * FROM unseen_stretches ORDER BY ALL")


def test_rerunning_replay_adds_no_rows(tmp_path: Path):
    con = db.open_db(str(tmp_path / "r.duckdb"))
    first = replay(LocalLogSource(recording("scenarios")), con, source_name="s", prefix="ktrace")
    before = snapshot(con)
    second = replay(LocalLogSource(recording("scenarios")), con, source_name="s", prefix="ktrace")
    assert first.stats.loaded == 510 and second.stats.loaded == 0
    assert second.stats.deliveries == 0
    assert snapshot(con) == before


KILLER = textwrap.dedent("""
    import os, signal, sys
    from replayer import db, typed
    from replayer.loader import Loader
    from transports.locallog.source import LocalLogSource

    def dying(deliveries, after):
        for n, d in enumerate(deliveries):
            if n == after:
                os.kill(os.getpid(), signal.SIGKILL)
            yield d

    con = db.open_db(sys.argv[1])
    source = LocalLogSource(sys.argv[2])
    loader = Loader(con, "killed", locator=source.locator, batch_size=40)
    loader.load(dying(source.read(source.topics("ktrace"), after=loader.positions), 300))
""")


def test_a_load_killed_midway_and_rerun_equals_one_clean_run(tmp_path: Path):
    killed = str(tmp_path / "killed.duckdb")
    done = subprocess.run([sys.executable, "-c", KILLER, killed, recording("scenarios")])
    assert done.returncode == -9
    con = db.open_db(killed)
    assert 0 < rows(con, "SELECT count(*) FROM raw_events")[0][0] < 510  # committed batches
    replay(LocalLogSource(recording("scenarios")), con, source_name="rerun", prefix="ktrace")
    clean = db.open_db(str(tmp_path / "clean.duckdb"))
    replay(LocalLogSource(recording("scenarios")), clean, source_name="clean", prefix="ktrace")
    assert snapshot(con) == snapshot(clean)


def _load(tmp_path: Path, items: list[Delivery]) -> tuple[duckdb.DuckDBPyConnection, object]:
    con = db.open_db(str(tmp_path / "bad.duckdb"))
    return con, Loader(con, "test").load(items)


def _renumbered(items: list[Delivery]) -> list[Delivery]:
    """The same deliveries as one partition of one topic, offsets 0, 1, 2…"""
    return [dataclasses.replace(d, topic="t", partition=0, offset=i) for i, d in enumerate(items)]


def test_duplicates_are_skipped_and_counted(tmp_path: Path):
    items = [d for d in deliveries() if d.topic == "ktrace.pods"]
    redelivered = items + items[10:15]  # a producer retry / recorder restart resending
    con, stats = _load(tmp_path, _renumbered(redelivered))
    assert (stats.loaded, stats.duplicates) == (len(items), 5)
    assert rows(con, "SELECT count(*) FROM load_problems WHERE problem = 'duplicate'") == [(5,)]
    assert rows(con, "SELECT count(*) FROM raw_events") == [(len(items),)]


def test_out_of_order_versions_are_counted_and_still_ordered_by_resource_version(tmp_path: Path):
    items = [d for d in deliveries() if d.topic == "ktrace.pods"]
    held = [i for i, d in enumerate(items) if d.record and d.record["name"] == "held"]
    swapped = list(items)
    swapped[held[1]], swapped[held[2]] = swapped[held[2]], swapped[held[1]]
    con, stats = _load(tmp_path, _renumbered(swapped))
    assert stats.problems["out_of_order"] == 1
    steps = rows(con, "SELECT step FROM pod_transitions WHERE pod = 'held' ORDER BY step_no")
    assert [s for (s,) in steps] == ["created", "scheduled", "running", "ready",
                                     "deletion_requested", "containers_stopped", "terminal"]


def test_corrupt_records_and_malformed_json_are_counted_never_loaded_wrong(tmp_path: Path):
    items = [d for d in deliveries() if d.topic == "ktrace.pods"][:20]
    bad_json = dict(items[3].record, object=b'{"kind": "Pod", "metadata": ')
    mangled = (items[:3] + [dataclasses.replace(items[3], record=bad_json)]
               + [Delivery("ktrace.pods", 0, items[3].offset + 1, None, DecodeError("corrupt"))]
               + [dataclasses.replace(d, offset=d.offset + 2) for d in items[4:]])
    con, stats = _load(tmp_path, mangled)
    assert stats.problems["decode_error"] == 1 and stats.problems["malformed_json"] == 1
    assert stats.loaded == 20
    # the envelope and typed facts of the bad-JSON record are kept; its object is not
    assert rows(con, "SELECT object IS NULL, uid IS NOT NULL FROM raw_events "
                     "WHERE \"offset\" = ?", items[3].offset) == [(True, True)]
    assert rows(con, "SELECT count(*) FROM pods p JOIN raw_events r USING (event_id) "
                     "WHERE r.\"offset\" = ?", items[3].offset) == [(1,)]


def test_an_object_that_is_not_utf8_is_malformed_and_never_stored(tmp_path: Path):
    """The object column reaches DuckDB as text unchecked: the JSON parse is what refuses
    bytes that are not UTF-8, and only parsed objects are stored."""
    items = _renumbered([d for d in deliveries() if d.topic == "ktrace.pods"
                         and d.record["object"]][:5])
    body = items[2].record["object"]
    not_utf8 = body.replace(b'"name":"', b'"name":"\xff\xfe', 1)
    assert not_utf8 != body
    items[2] = dataclasses.replace(items[2], record=dict(items[2].record, object=not_utf8))
    con = db.open_db(str(tmp_path / "utf8.duckdb"))
    stats = Loader(con, "test", store_objects=True).load(items)
    assert stats.loaded == 5 and stats.problems["malformed_json"] == 1
    stored = rows(con, "SELECT \"offset\", object FROM raw_events ORDER BY \"offset\"")
    assert [offset for offset, obj in stored if obj is None] == [2]
    assert all(json.loads(obj) for _, obj in stored if obj is not None)


def _envelope_log(directory: Path) -> Path:
    """The scenarios recording written again as this recorder writes it (envelope-only
    records, which a local log hands over in runs)."""
    sink = LocalLogSink(str(directory))
    for d in deliveries():
        record = d.record if d.record["marker"] else {**d.record, "meta": None, "facts": None}
        sink.send(d.topic, record)
    sink.close()
    return directory


def test_a_copy_of_a_loaded_recording_is_all_duplicates(tmp_path: Path):
    """The same records from another source (a copy of the log: positions of its own) are
    versions the database holds: none loaded again, each counted a duplicate — found by one
    look at the stored versions per run of records, in the database and in flight."""
    log = _envelope_log(tmp_path / "log")
    copy = tmp_path / "copy"
    shutil.copytree(log, copy)
    con = db.open_db(str(tmp_path / "twice.duckdb"))
    first = replay(LocalLogSource(str(log)), con, source_name="first", prefix="ktrace").stats
    before = rows(con, "SELECT count(*) FROM raw_events")
    source = LocalLogSource(str(copy))
    stats = Loader(con, "copy", locator="copy", batch_size=50).load(
        source.read(source.topics("ktrace"), runs=True))
    assert (stats.loaded, stats.duplicates) == (0, first.loaded) and first.loaded > 0
    assert rows(con, "SELECT count(*) FROM raw_events") == before


def test_deliveries_at_or_before_a_committed_position_are_skipped(tmp_path: Path):
    items = _renumbered([d for d in deliveries() if d.topic == "ktrace.pods"][:10])
    con, _ = _load(tmp_path, items)
    stats = Loader(con, "again", locator="test").load(items[5:])  # the same source
    assert stats.loaded == 0 and stats.problems["out_of_order_offset"] == 5


def test_namespace_filter_keeps_its_nodes_and_is_sticky(tmp_path: Path):
    con = db.open_db(str(tmp_path / "ns.duckdb"))
    replay(LocalLogSource(recording("scenarios")), con, source_name="s", prefix="ktrace",
           keep=RecordFilter(namespace="race"))
    # beside race's records: its node's Lease and the Events about that node
    outside = rows(con, "SELECT DISTINCT namespace, kind FROM raw_events WHERE namespace "
                        "<> 'race' ORDER BY ALL")
    assert outside == [("default", "Event"), ("kube-node-lease", "Lease")]
    with pytest.raises(db.DatabaseError, match="loaded with namespace=race"):
        replay(LocalLogSource(recording("scenarios")), con, source_name="s", prefix="ktrace")


def test_rebuild_starts_over(tmp_path: Path):
    path = str(tmp_path / "r.duckdb")
    con = db.open_db(path)
    replay(LocalLogSource(recording("scenarios")), con, source_name="s", prefix="ktrace")
    first = snapshot(con)
    con.close()
    con = db.open_db(path, rebuild=True)
    assert rows(con, "SELECT count(*) FROM raw_events") == [(0,)]
    assert rows(con, "SELECT count(*) FROM load_positions") == [(0,)]
    replay(LocalLogSource(recording("scenarios")), con, source_name="s", prefix="ktrace")
    assert snapshot(con) == first  # the projections too: made again from the recording


def test_projections_made_again_by_new_sql_equal_the_loaded_ones(tmp_path: Path):
    """Another ktrace's SQL on open: every projection is made again from the records (the
    per-session ones from the first record, not from where the last refresh stopped)."""
    path = str(tmp_path / "r.duckdb")
    con = db.open_db(path)
    replay(LocalLogSource(recording("crashed")), con, source_name="s", prefix="ktrace")
    first = snapshot(con)
    assert rows(con, "SELECT count(*) FROM session_topics")[0][0] > 0
    con.execute("UPDATE ktrace_meta SET value = 'other' WHERE key = 'sql_digest'")
    con.close()
    assert snapshot(db.open_db(path)) == first


def test_refuses_a_duckdb_file_of_another_program(tmp_path: Path):
    path = str(tmp_path / "other.duckdb")
    other = duckdb.connect(path)
    other.execute("CREATE TABLE invoices (id INTEGER)")
    other.close()
    for rebuild in (False, True):
        with pytest.raises(db.DatabaseError, match="is not a ktrace database .*invoices"):
            db.open_db(path, rebuild=rebuild)
    assert rows(duckdb.connect(path), "SELECT count(*) FROM invoices") == [(0,)]


@pytest.mark.parametrize("kind", ["sqlite", "text"])
def test_refuses_files_that_are_not_duckdb(tmp_path: Path, kind: str):
    path = tmp_path / "file.db"
    if kind == "sqlite":
        sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()
    else:
        path.write_text("hello\n")
    before = path.read_bytes()
    with pytest.raises(db.DatabaseError, match="cannot open .* as a DuckDB database"):
        db.open_db(str(path))
    assert path.read_bytes() == before


def test_non_numeric_resource_versions_compare_for_equality_only(tmp_path: Path):
    from tests import samples
    versions = ["zeta", "alpha", "zeta", "beta"]  # "alpha" < "zeta" as text: not an order
    records = []
    for seq, rv in enumerate(versions):
        record = samples.pod_record("uid-x", seq, seq)
        records.append({**record, "type": "MODIFIED", "resourceVersion": rv,
                        "resourceVersionNumber": None})
    con = db.open_db(str(tmp_path / "n.duckdb"))
    loader = Loader(con, "test")
    stats = loader.load(Delivery("t.pods", 0, i, r) for i, r in enumerate(records))
    assert (stats.loaded, stats.duplicates, stats.problem_count()) == (3, 1, 0)
    assert rows(con, "SELECT resource_version FROM object_versions WHERE uid = 'uid-x' "
                     "ORDER BY version_no") == [("zeta",), ("alpha",), ("beta",)]
    con.close()


def test_runs_are_taken_as_their_records_are_one_by_one(tmp_path: Path):
    """A source's DeliveryRuns (envelopes decoded in bulk) against the same records as
    Deliveries (fastavro's Records, each a run of one): the same rows, problems and counts,
    with a filter, duplicates (a run sent again under another topic) and a run at offsets
    already taken."""
    log = tmp_path / "log"
    sink = LocalLogSink(str(log))  # as the recorder writes by default: no typed parts
    for d in deliveries():
        sink.send(d.topic, d.record if d.record["marker"] else
                  {**d.record, "meta": None, "facts": None})
    sink.close()
    source = LocalLogSource(str(log))
    items = list(source.read(source.topics("ktrace"), runs=True))
    runs = [item for item in items if isinstance(item, DeliveryRun)]
    assert runs and any(isinstance(item, Delivery) for item in items)  # markers
    again = [dataclasses.replace(run, topic="t.again") for run in runs[:3]]
    items += again + [runs[0]]
    flat = [d for item in items
            for d in (item.deliveries() if isinstance(item, DeliveryRun) else [item])]
    taken = {}
    for name, given in (("runs", items), ("records", flat)):
        con = db.open_db(str(tmp_path / f"{name}.duckdb"))
        stats = Loader(con, "s", keep=RecordFilter(namespace="race")).load(given)
        taken[name] = (snapshot(con), dataclasses.replace(stats, problems=dict(stats.problems),
                                                          kinds=dict(stats.kinds)))
    assert taken["runs"] == taken["records"]
    stats = taken["runs"][1]
    assert stats.duplicates > 0 and stats.filtered > 0
    assert stats.problems["out_of_order_offset"] >= len(runs[0].envelopes)
