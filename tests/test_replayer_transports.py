"""replay from a real Kafka broker and --follow on a growing local log: the same rows as
loading the recorded local log directly."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from transports.kafka.sink import KafkaSink
from transports.locallog.sink import LocalLogSink
from replayer import db
from replayer.objects import ObjectUnavailable, objects_of
from replayer.replay import replay
from transports.kafka.source import KafkaSource
from transports.locallog.source import LocalLogSource
from transports.kafka.settings import KafkaSettings
from transports.window import Window
from tests import samples
from tests.follower import rest_of, start_follower, wait_for_line
from tests.replayer_data import recorded_records, recording, rows, send_recorded

CONTENT = ("SELECT session, resource, seq, type, uid, resource_version, received_at, object "
           "FROM raw_events ORDER BY session, resource, seq")


@pytest.mark.kafka
def test_replay_from_kafka_matches_the_local_log(kafka_bootstrap: str, unique_topic_prefix: str,
                                                 tmp_path: Path):
    settings = KafkaSettings(bootstrap=kafka_bootstrap)
    send_recorded(settings, unique_topic_prefix)
    from_kafka = db.open_db(str(tmp_path / "k.duckdb"))
    source = KafkaSource(settings)
    try:
        summary = replay(source, from_kafka, source_name="kafka", prefix=unique_topic_prefix)
        assert summary.stats.loaded == 510
        again = replay(source, from_kafka, source_name="kafka", prefix=unique_topic_prefix)
        assert again.stats.loaded == 0
    finally:
        source.close()
    direct = db.open_db(str(tmp_path / "d.duckdb"))
    replay(LocalLogSource(recording("scenarios")), direct, source_name="d", prefix="ktrace")
    assert rows(from_kafka, CONTENT) == rows(direct, CONTENT)
    assert rows(from_kafka, "SELECT count(DISTINCT \"partition\") FROM load_positions") == [(3,)]
    # objects stay in the sources: fetched by offset from Kafka, by position from the log
    assert _objects_by_sequence(from_kafka) == _objects_by_sequence(direct)
    # the broker reached at another address than the one replayed from (a port-forward, a
    # moved cluster): the recorded one fails in one line, the address given finds them
    from_kafka.execute("UPDATE sources SET locator = 'kafka:127.0.0.1:9'")
    some = [r[0] for r in rows(from_kafka, "SELECT event_id FROM raw_events "
                                           "WHERE object_size > 0 LIMIT 5")]
    with pytest.raises(ObjectUnavailable, match="kafka:127.0.0.1:9"):
        objects_of(from_kafka, some)
    moved = objects_of(from_kafka, some, KafkaSettings(bootstrap=kafka_bootstrap))
    assert all(moved.values())


def _objects_by_sequence(con) -> dict[tuple, bytes | None]:
    ids = dict(rows(con, "SELECT event_id, (session, resource, seq) FROM raw_events"))
    assert rows(con, "SELECT count(object) FROM raw_events") == [(0,)]
    fetched = objects_of(con, list(ids))
    assert sum(o is not None for o in fetched.values()) > 300
    return {ids[i]: o for i, o in fetched.items()}


def test_follow_loads_records_as_they_are_appended(tmp_path: Path):
    records = recorded_records()
    log, path = tmp_path / "log", str(tmp_path / "f.duckdb")
    sink = LocalLogSink(str(log))
    for topic, record in records[:200]:
        sink.send(topic, record)
    sink.flush()
    follower, lines = start_follower(log, path)
    try:
        wait_for_line(lines, "caught up: 200 records loaded")
        for topic, record in records[200:]:
            sink.send(topic, record)
        sink.flush()
        wait_for_line(lines, "caught up: 510 records loaded")
    finally:
        follower.send_signal(signal.SIGINT)
        follower.wait(timeout=60)  # not communicate(): the line reader owns stderr
        follower.stdout.close()
        sink.close()
    said = rest_of(lines)  # the summary goes to stderr, beside the progress
    assert follower.returncode == 0, said
    assert any("loaded 510 of 510 records" in line for line in said), said
    assert rows(db.open_db(path), "SELECT count(*) FROM raw_events") == [(510,)]


@pytest.mark.kafka
def test_a_kafka_window_seeks_to_its_start_and_stops_each_partition_at_its_end(
        kafka_bootstrap: str, unique_topic_prefix: str):
    """Three bursts a second apart, appended as they are received: the middle one's window
    is read from its first offset (the seek by append time) and each partition stops at its
    first record past the end, with what was fetched on and dropped counted."""
    settings = KafkaSettings(bootstrap=kafka_bootstrap)
    sink = KafkaSink(settings, partitions=3)
    topic = f"{unique_topic_prefix}.pods"
    bursts: list[list[dict]] = []
    for burst in range(3):
        if burst:
            time.sleep(1.0)
        now = time.time_ns() // 1000
        records = [samples.pod_record(f"uid-{i % 30:05d}", burst * 100 + i // 30, burst * 300 + i)
                   for i in range(300)]
        for i, record in enumerate(records):
            record["receivedAt"] = now + i
            sink.send(topic, record)
        sink.flush()
        bursts.append(records)
    sink.close()
    since_us, until_us = bursts[1][0]["receivedAt"], bursts[1][-1]["receivedAt"]
    source = KafkaSource(settings)
    try:
        from_start = list(source.read([topic], window=Window(since_us)))
        before = source.outside_window  # the seek's: dropped before the window's start
        window = list(source.read([topic], window=Window(since_us, until_us)))
        after = source.outside_window - before
    finally:
        source.close()
    assert len(from_start) == len(bursts[1]) + len(bursts[2])
    assert sorted(d.record["seq"] for d in window) == [r["seq"] for r in bursts[1]]
    assert before == 0  # the seek lands on the window's first record in every partition
    assert 3 <= after <= len(bursts[2])  # each partition's first record past the end at least
    print(f"kafka window: {len(window)} records read; fetched past the end and dropped "
          f"undecoded: {after} of the last burst's {len(bursts[2])}")
