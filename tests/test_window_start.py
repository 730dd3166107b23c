"""A window's answers equal a load of the whole recording up to the window's end: its state
at the start (objects created long before it included), what is stuck at its end, its races
and timelines — and the state at the start opens no sequence hole or unseen stretch."""

from __future__ import annotations

import functools
import shutil
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import duckdb
import pytest

from replayer import db
from replayer.analyses.info import info
from replayer.analyses.races import races
from replayer.analyses.state import state
from replayer.analyses.stuck import stuck
from replayer.analyses.timeline import timeline
from replayer import replay as replay_module
from replayer.loader import Loader
from replayer.replay import follow, replay
from schemas.topics import resource_of
from transports import versions
from transports.kafka import source as kafka_source
from transports.kafka.settings import KafkaSettings
from transports.kafka.sink import KafkaSink
from transports.kafka.source import KafkaSource
from transports.locallog.source import LocalLogSource
from transports.source import DeliveryRun, Source
from transports.window import Window
from tests.replayer_data import recorded_records, recording, rows, send_recorded

#: The window, as shares of each recording's records: a stretch in its second half, so
#: most objects it holds were created (and many last changed) before it.
WINDOW = (0.5, 0.8)


def _load(open_source: Callable[[], Source], prefix: str, path: Path, since_us: int | None,
          until_us: int | None) -> duckdb.DuckDBPyConnection:
    con = db.open_db(str(path))
    source = open_source()
    try:
        replay(source, con, source_name="w", prefix=prefix, window=Window(since_us, until_us))
    finally:
        source.close()
    return con


def _local(directory: Path) -> Callable[[], Source]:
    return functools.partial(LocalLogSource, str(directory))


@pytest.fixture(params=["scenarios", "pending", pytest.param("kafka", marks=pytest.mark.kafka)])
def loads(request: pytest.FixtureRequest, tmp_path: Path):
    """(window load, reference load up to the window's end, since, until): the reference
    holds everything received up to the window's end — what a whole load knows then. From
    the local log of each recording, and from Kafka (the scenarios' records sent at once:
    each appended long after it was received, as a spooled recording is)."""
    if request.param == "kafka":
        settings = KafkaSettings(bootstrap=request.getfixturevalue("kafka_bootstrap"))
        prefix = request.getfixturevalue("unique_topic_prefix")
        send_recorded(settings, prefix)
        times = sorted(record["receivedAt"] for _, record in recorded_records())
        open_source: Callable[[], Source] = functools.partial(KafkaSource, settings)
    else:
        directory = tmp_path / "log"
        shutil.copytree(recording(request.param), directory)  # its time index is written beside
        prefix, open_source = "ktrace", _local(directory)
        source = open_source()
        times = sorted(d.record["receivedAt"] for d in source.read(source.topics(prefix))
                       if d.record is not None)
    since_us, until_us = (times[int(len(times) * share)] for share in WINDOW)
    window = _load(open_source, prefix, tmp_path / "window.duckdb", since_us, until_us)
    whole = _load(open_source, prefix, tmp_path / "whole.duckdb", None, until_us)
    yield window, whole, _utc(since_us), _utc(until_us)
    window.close()
    whole.close()


def _utc(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1e6, timezone.utc).replace(tzinfo=None)


def test_the_state_at_the_start_includes_objects_last_changed_before_the_window(loads):
    window, whole, since, _ = loads
    before = rows(window, "SELECT count(DISTINCT uid) FROM raw_events WHERE received_at < ?",
                  since)[0][0]
    created_before = rows(window, "SELECT count(DISTINCT uid) FROM raw_events "
                                  "WHERE created_at < ?", since)[0][0]
    assert before > 10 and created_before > before  # the premise: a history before it
    assert state(window, since) == state(whole, since)
    assert state(window, since + timedelta(seconds=1)) == state(whole, since + timedelta(seconds=1))


def test_what_is_stuck_at_the_end_is_the_same(loads):
    window, whole, _, until = loads
    judged = [stuck(con, at=until).rows for con in (window, whole)]
    assert judged[0][0] == judged[1][0]
    # evidence cites records by id: an older version of an object (an Event counted again)
    # is evidence only where it was loaded; the rest of each row is the same
    answers = [sorted(row[:8] + row[10:] for row in rows_) for _, rows_ in judged]
    assert answers[0] == answers[1]


def test_races_in_the_window_are_the_same(loads):
    window, whole, since, _ = loads
    mine = {row[1]: row for row in races(window)[1]}
    theirs = {row[1]: row for row in races(whole)[1]}
    inside = {pod: row for pod, row in theirs.items() if row[6] >= since}
    assert {pod: mine[pod] for pod in inside} == inside
    # a race under way at the start: its deletion request's time known from the object's
    # deletionTimestamp (to the second), the rest as the whole load has it
    for pod in set(mine) - set(inside):
        assert mine[pod][:4] == theirs[pod][:4] and mine[pod][7:10] == theirs[pod][7:10]
        assert abs(mine[pod][6] - theirs[pod][6]) < timedelta(seconds=1)


def test_a_timeline_inside_the_window_is_the_same(loads):
    window, whole, since, _ = loads
    pods = rows(whole, "SELECT DISTINCT namespace, name FROM raw_events WHERE kind = 'Pod' "
                       "AND name IS NOT NULL AND received_at >= ? ORDER BY ALL", since)
    assert pods
    for namespace, name in pods:
        steps = [[(r[1], r[4], r[5], r[8], r[10])
                  for r in timeline(con, f"pod/{name}", namespace)[1] if r[5] >= since]
                 for con in (window, whole)]
        assert steps[0] == steps[1], name


def test_the_state_at_the_start_opens_no_hole_or_stretch(loads):
    window, whole, since, _ = loads
    assert rows(window, "SELECT count(*) FROM sequence_holes")[0][0] == 0
    unseen = ("SELECT type, session, topic, namespace, start_at, end_at FROM gaps "
              "WHERE category = 'unseen' AND end_at >= ? ORDER BY ALL")
    assert rows(window, unseen, since) == rows(whole, unseen, since)


def test_info_counts_the_window_s_own_records_and_the_state_apart(loads):
    window, _, since, until = loads
    clusters = {row[0]: row for row in info(window)[0].rows}
    own, state_records = rows(window, "SELECT count(*) FILTER (WHERE received_at >= ?), "
                                      "count(*) FILTER (WHERE received_at < ?) FROM raw_events",
                              since, since)[0]
    assert state_records > 10
    ((_, first, last, _, records, at_start, *_),) = clusters.values()
    assert (records, at_start) == (own, state_records)
    assert since <= first and last <= until


CONTENT = ("SELECT session, resource, seq, type, uid, resource_version, received_at "
           "FROM raw_events ORDER BY ALL")


class _KilledInsideTheState(LocalLogSource):
    """A local log whose state at a window's start stops (as a killed load does) after
    ``records`` of its versions."""

    def __init__(self, directory: str, records: int) -> None:
        super().__init__(directory)
        self.left = records

    def last_versions(self, topics, before_us):
        for run in super().last_versions(topics, before_us):
            for i, offset in enumerate(run.offsets):
                if not self.left:
                    raise KeyboardInterrupt
                self.left -= 1
                yield DeliveryRun(run.topic, run.partition, [offset], [run.envelopes[i]],
                                  [run.data_of(i)])


def test_a_first_window_load_stopped_inside_the_state_takes_the_rest_when_run_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    directory = tmp_path / "log"
    shutil.copytree(recording("scenarios"), directory)
    source = LocalLogSource(str(directory))
    times = sorted(d.record["receivedAt"] for d in source.read(source.topics("ktrace"))
                   if d.record is not None)
    since_us, until_us = (times[int(len(times) * share)] for share in WINDOW)
    clean = _load(_local(directory), "ktrace", tmp_path / "clean.duckdb", since_us, until_us)
    versions = rows(clean, "SELECT count(*) FROM raw_events WHERE received_at < ?",
                    _utc(since_us))[0][0]
    con = db.open_db(str(tmp_path / "stopped.duckdb"))
    with monkeypatch.context() as small_batches:  # committed while the state is read
        small_batches.setattr(replay_module, "Loader", functools.partial(Loader, batch_size=10))
        with pytest.raises(KeyboardInterrupt):
            replay(_KilledInsideTheState(str(directory), versions // 2), con, source_name="w",
                   prefix="ktrace", window=Window(since_us, until_us))
    loaded = rows(con, "SELECT count(*) FROM raw_events")[0][0]
    assert 0 < loaded < versions  # the premise: stopped inside the state, some of it committed
    replay(LocalLogSource(str(directory)), con, source_name="w", prefix="ktrace",
           window=Window(since_us, until_us))
    assert rows(con, CONTENT) == rows(clean, CONTENT)
    assert state(con, _utc(since_us)) == state(clean, _utc(since_us))


def test_a_follower_of_a_window_takes_the_state_at_its_start(tmp_path: Path):
    directory = tmp_path / "log"
    shutil.copytree(recording("scenarios"), directory)
    source = LocalLogSource(str(directory))
    times = sorted(d.record["receivedAt"] for d in source.read(source.topics("ktrace"))
                   if d.record is not None)
    since_us = times[int(len(times) * WINDOW[0])]
    loaded = _load(_local(directory), "ktrace", tmp_path / "window.duckdb", since_us, None)
    stop = threading.Event()
    follow(LocalLogSource(str(directory)), str(tmp_path / "follower.duckdb"), source_name="w",
           prefix="ktrace", window=Window(since_us), stop=stop, on_caught_up=lambda _: stop.set())
    followed = db.open_readonly(str(tmp_path / "follower.duckdb"))
    assert rows(followed, CONTENT) == rows(loaded, CONTENT)
    assert rows(followed, "SELECT count(*) FROM raw_events WHERE received_at < ?",
                _utc(since_us))[0][0] > 10
    assert state(followed, _utc(since_us)) == state(loaded, _utc(since_us))
    followed.close()


@pytest.mark.kafka
def test_from_kafka_a_window_loads_the_same_state_at_its_start(
        kafka_bootstrap: str, unique_topic_prefix: str, tmp_path: Path):
    """The same look-back through each partition up to the window's start: the same rows
    as the window from the local log."""
    settings = KafkaSettings(bootstrap=kafka_bootstrap)
    send_recorded(settings, unique_topic_prefix)
    directory = tmp_path / "log"
    shutil.copytree(recording("scenarios"), directory)
    times = sorted(record["receivedAt"] for _, record in recorded_records())
    since_us, until_us = (times[int(len(times) * share)] for share in WINDOW)
    local = _load(_local(directory), "ktrace", tmp_path / "local.duckdb", since_us, until_us)
    from_kafka = db.open_db(str(tmp_path / "kafka.duckdb"))
    source = KafkaSource(settings)
    try:
        replay(source, from_kafka, source_name="k", prefix=unique_topic_prefix,
               window=Window(since_us, until_us))
    finally:
        source.close()
    assert rows(from_kafka, CONTENT) == rows(local, CONTENT)
    assert rows(from_kafka, "SELECT count(*) FROM raw_events WHERE received_at < ?",
                _utc(since_us))[0][0] > 10
    assert state(from_kafka, _utc(since_us)) == state(local, _utc(since_us))


def _versions(runs) -> list[tuple]:
    """Each version of ``runs`` as where it is, what it is and its object's bytes."""
    found = []
    for run in runs:
        for i, e in enumerate(run.envelopes):
            body = run.data_of(i)[e.object[0]:e.object[1]] if e.object else None
            found.append((run.topic, run.partition, run.offsets[i], e.type, e.uid,
                          e.resource_version, bytes(body) if body is not None else None))
    return sorted(found, key=repr)


@pytest.mark.kafka
def test_from_kafka_the_last_versions_taken_by_key_are_a_scan_s(
        kafka_bootstrap: str, unique_topic_prefix: str, monkeypatch: pytest.MonkeyPatch):
    """Of a topic keyed by object, the messages appended before the time are taken by key
    (the last of each decoded, a few held at a time) and those appended after it but
    received before it read: the same last versions as a scan of every message, whether
    the time falls among the receive times (all appended later), between the two sends, or
    after every append."""
    settings = KafkaSettings(bootstrap=kafka_bootstrap)
    records = recorded_records()
    middle = sorted(record["receivedAt"] for _, record in records)[len(records) // 2]
    sink = KafkaSink(settings, partitions=3)
    for early in (True, False):  # each partition's records stay in receive order
        for topic, record in records:
            if (record["receivedAt"] < middle) == early:
                sink.send(f"{unique_topic_prefix}.{resource_of('ktrace', topic)}", record)
        sink.flush()
        if early:
            time.sleep(0.05)
            between = time.time_ns() // 1000
            time.sleep(0.05)
    sink.close()
    monkeypatch.setattr(kafka_source, "HELD_MESSAGES", 5)
    source = KafkaSource(settings)
    try:
        topics = source.topics(unique_topic_prefix)
        assert any(t.endswith(".events") for t in topics) and len(topics) > 2
        for before_us in (middle, between, time.time_ns() // 1000 + 1_000_000):
            scan = versions.scan(source.read(topics, window=Window.ending_before(before_us),
                                             runs=True))
            expected = _versions(scan)
            assert len(expected) > 10
            assert _versions(source.last_versions(topics, before_us)) == expected
    finally:
        source.close()
