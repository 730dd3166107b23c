"""One contract, two transports: what the recorder's sinks write, the replayer's sources read
back — in order per key, nothing lost, nothing duplicated, bad bytes reported by position."""

from __future__ import annotations

import os
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

import pytest
from kafka import KafkaProducer

from transports.sink import Sink
from transports.kafka.sink import KafkaSink
from transports.locallog.sink import LocalLogSink
from transports.source import Delivery, Source
from transports.kafka.source import KafkaSource
from transports.locallog.source import LocalLogSource
from schemas import codec, repository, topics
from transports.kafka import framing
from transports.locallog import layout
from schemas.errors import TransportError, Unreadable
from transports.kafka.settings import KafkaSettings
from transports.window import Window
from tests import samples


@dataclass
class Transport:
    name: str
    prefix: str
    make_sink: Callable[[], Sink]
    make_source: Callable[[], Source]
    inject_raw: Callable[[str, bytes, bytes, bytes], None]  # (topic, key, body, fingerprint)

    def topic(self, resource: str = "pods") -> str:
        return topics.topic_for(self.prefix, resource)


def _local(tmp_path) -> Transport:
    directory = str(tmp_path / "log")

    def inject_raw(topic: str, key: bytes, body: bytes, fingerprint: bytes) -> None:
        """A segment of one record from another writer, as if it had been appended."""
        topic_dir = os.path.join(directory, topic)
        index = layout.list_segments(topic_dir)[-1][0] + 1
        sync = os.urandom(layout.SYNC_SIZE)
        with open(os.path.join(topic_dir, layout.segment_name(index)), "xb") as fh:
            fh.write(layout.encode_header(b'"bytes"', fingerprint, sync))
            fh.write(layout.encode_block([body], sync))

    return Transport("local", "t", lambda: LocalLogSink(directory, block_records=256),
                     lambda: LocalLogSource(directory), inject_raw)


def _kafka(bootstrap: str, prefix: str) -> Transport:
    settings = KafkaSettings(bootstrap=bootstrap)

    def inject_raw(topic: str, key: bytes, body: bytes, fingerprint: bytes) -> None:
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        producer.send(topic, key=key, value=body, headers=[(framing.HEADER_SCHEMA, fingerprint)])
        producer.flush()
        producer.close()

    return Transport("kafka", prefix, lambda: KafkaSink(settings, partitions=3),
                     lambda: KafkaSource(settings), inject_raw)


@pytest.fixture(params=["local", pytest.param("kafka", marks=pytest.mark.kafka)])
def transport(request, tmp_path) -> Transport:
    if request.param == "local":
        return _local(tmp_path)
    return _kafka(request.getfixturevalue("kafka_bootstrap"),
                  request.getfixturevalue("unique_topic_prefix"))


def _write(transport: Transport, records: list[dict]) -> None:
    sink = transport.make_sink()
    for record in records:
        sink.send(transport.topic(), record)
    sink.close()


def _read(transport: Transport, **kwargs) -> list[Delivery]:
    source = transport.make_source()
    try:
        return list(source.read([transport.topic()], **kwargs))
    finally:
        source.close()


def _by_key(deliveries: list[Delivery]) -> dict[str, list[int]]:
    seqs = defaultdict(list)
    for d in deliveries:
        seqs[d.record["uid"]].append(d.record["seq"])
    return seqs


def test_100k_records_round_trip_in_order_per_key_without_loss_or_duplicates(transport):
    written = samples.interleaved(100_000, keys=997)
    _write(transport, written)
    read = _read(transport)
    assert [d for d in read if d.error] == []
    assert len(read) == len(written)
    assert sorted(d.record["seq"] for d in read) == list(range(len(written)))
    for uid, seqs in _by_key(read).items():
        assert seqs == sorted(seqs), f"{uid} out of order"
    assert read[0].record == next(r for r in written if r["seq"] == read[0].record["seq"])


def test_reading_after_stored_offsets_resumes_exactly(transport):
    _write(transport, samples.interleaved(3_000, keys=7))
    first = _read(transport)
    cut = {(d.topic, d.partition): d.offset for d in first[:1_000]}
    resumed_from = {}
    for d in first[:1_000]:
        resumed_from[(d.topic, d.partition)] = d.offset
    rest = _read(transport, after=resumed_from)
    seen = {d.record["seq"] for d in first[:1_000]}
    assert len(rest) + len([d for d in first if (d.topic, d.partition) in cut
                            and d.offset <= cut[(d.topic, d.partition)]]) == 3_000
    assert seen.isdisjoint(d.record["seq"] for d in rest)


def test_since_and_until_select_a_receive_time_window(transport):
    _write(transport, samples.interleaved(2_000, keys=5))
    since = samples.BASE_TIME_US + 500 * 1000
    until = samples.BASE_TIME_US + 1_499 * 1000
    seqs = sorted(d.record["seq"] for d in _read(transport, window=Window(since, until)))
    assert seqs == list(range(500, 1_500))


def test_new_writer_appends_after_existing_records(transport):
    records = samples.interleaved(1_000, keys=3)
    _write(transport, records[:400])
    _write(transport, records[400:])
    assert sorted(d.record["seq"] for d in _read(transport)) == list(range(1_000))


BOGUS_FINGERPRINT = b"\x01" * 8


@pytest.mark.parametrize(("damage", "message"), [
    ("unknown_schema", "unknown schema fingerprint 0101010101010101"),
    ("corrupt_body", "corrupt Avro body"),
])
def test_a_bad_record_is_reported_by_position_and_the_rest_decode(transport, damage, message):
    records = samples.interleaved(10, keys=1)
    _write(transport, records[:5])
    body = codec.encode(records[5])
    if damage == "unknown_schema":
        transport.inject_raw(transport.topic(), b"uid-00000", body, BOGUS_FINGERPRINT)
    else:
        transport.inject_raw(transport.topic(), b"uid-00000", body[:40] + b"\xff" * 9,
                             repository.current().fingerprint)
    _write(transport, records[5:])
    read = _read(transport)  # one key: one partition, read in offset order
    assert [d.error is not None for d in read] == [False] * 5 + [True] + [False] * 5
    bad = read[5]
    assert message in str(bad.error) and isinstance(bad.error, Unreadable)
    assert bad.where() == f"{transport.topic()}/{bad.partition}@{bad.offset}"
    assert read[4].offset < bad.offset < read[6].offset
    assert [d.record["seq"] for d in read if d.record] == list(range(10))


def test_summaries_count_records_and_receive_times(transport):
    _write(transport, samples.interleaved(1_234, keys=11))
    source = transport.make_source()
    try:
        assert source.topics(transport.prefix) == [transport.topic()]
        (summary,) = source.summarize([transport.topic()])
    finally:
        source.close()
    assert summary.records == 1_234
    assert summary.first_received_us == samples.BASE_TIME_US
    assert summary.last_received_us == samples.BASE_TIME_US + 1_233 * 1000


def test_records_at_gives_each_positions_record_near_or_far_apart(transport, monkeypatch):
    """Fetches by position (objects not stored in the database): several offsets of a
    partition in one call, read in stretches (a small gap here makes several), each its
    record; a position past the end is None."""
    monkeypatch.setattr("transports.kafka.source.POSITION_GAP", 20)
    _write(transport, samples.interleaved(600, keys=1))  # one key: one partition
    read = _read(transport)
    picked = [read[i] for i in (0, 1, 2, 30, 31, 300, 599)]
    (partition,) = {d.partition for d in read}
    past_end = read[-1].offset + 1
    source = transport.make_source()
    try:
        found = source.records_at(transport.topic(), partition,
                                  [d.offset for d in picked] + [past_end])
        one = source.record_at(transport.topic(), partition, picked[3].offset)
    finally:
        source.close()
    assert found == {**{d.offset: d.record for d in picked}, past_end: None}
    assert one == picked[3].record


@pytest.mark.kafka
def test_kafka_fetches_by_offset_neither_wait_for_the_broker_nor_see_removed_records(
        kafka_bootstrap, unique_topic_prefix):
    """One by one, as ``ktrace evidence`` fetches, a fetch by offset takes milliseconds (it
    waited ~500 ms, librdkafka's fetch wait, each); an offset retention removed is None."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    transport = _kafka(kafka_bootstrap, unique_topic_prefix)
    _write(transport, samples.interleaved(200, keys=1))
    read = _read(transport)
    topic, partition = transport.topic(), read[0].partition
    source = transport.make_source()
    try:
        started = time.monotonic()
        fetched = [source.record_at(topic, partition, d.offset) for d in read[:10]]
        took = time.monotonic() - started
        assert fetched == [d.record for d in read[:10]]
        assert took < 2.5, f"10 fetches by offset took {took:.1f} s"
        admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
        for future in admin.delete_records([TopicPartition(topic, partition, read[100].offset)]
                                           ).values():
            future.result(timeout=30)
        removed, kept = source.records_at(topic, partition, [read[50].offset, read[150].offset]
                                          ).values()
    finally:
        source.close()
    assert removed is None and kept == read[150].record


@pytest.mark.kafka
def test_kafka_reading_again_from_the_end_does_not_wait_for_the_last_reads_fetches(
        kafka_bootstrap, unique_topic_prefix):
    """A follower's catch-up, a replay resumed in the same process: the read before left no
    fetch waiting at the partitions' ends for the next read's offsets requests to queue
    behind (they took ~0.9 s each: 22 s for the 24 partitions of a recording)."""
    transport = _kafka(kafka_bootstrap, unique_topic_prefix)
    names = [transport.topic("pods"), transport.topic("nodes")]
    sink = transport.make_sink()
    for record in samples.interleaved(60, keys=6):
        for topic in names:
            sink.send(topic, record)
    sink.close()
    source = transport.make_source()
    try:
        read = list(source.read(names))
        at_end = {(d.topic, d.partition): d.offset for d in read}
        started = time.monotonic()
        again = list(source.read(names, after=at_end))
        took = time.monotonic() - started
    finally:
        source.close()
    assert len(read) == 120 and len(at_end) == 6 and again == []
    assert took < 2.0, f"reading 6 partitions again at their end took {took:.1f} s"


# --- local log: damage on disk --------------------------------------------------------------


def _segment(tmp_path) -> str:
    """The one segment of the topic (the writer keeps a time index beside it)."""
    topic_dir = tmp_path / "log" / "t.pods"
    (segment,) = sorted(n for n in os.listdir(topic_dir) if n.endswith(layout.SEGMENT_SUFFIX))
    return str(topic_dir / segment)


def test_local_log_torn_tail_of_a_crash_is_reported_and_the_writer_continues(tmp_path, caplog):
    transport = _local(tmp_path)
    records = samples.interleaved(1_000, keys=3)
    _write(transport, records[:600])  # blocks of 256: 256, 256, 88
    path = _segment(tmp_path)
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:  # a crash in the middle of writing the last block
        fh.truncate(size - 100)
    read = _read(transport)
    assert [d.record["seq"] for d in read if d.record] == list(range(512))
    (torn,) = [d.error for d in read if d.error]
    assert isinstance(torn, Unreadable) and torn.cause.startswith("torn tail")
    assert torn.nbytes == size - 100 - layout.split_position(read[-1].offset)[1]
    _write(transport, records[600:])  # the torn segment stays as it is; a new one follows
    assert os.path.getsize(path) == size - 100
    again = _read(transport)
    assert [d.record["seq"] for d in again if d.record] == list(range(512)) + list(range(600, 1_000))
    assert [d.offset for d in again if d.error] == [read[-1].offset]


def test_local_log_tail_of_a_live_writer_is_not_damage(tmp_path):
    directory = str(tmp_path / "log")
    sink = LocalLogSink(directory, block_records=100)
    for record in samples.interleaved(200, keys=2):
        sink.send("t.pods", record)
    path = _segment(tmp_path)
    with open(path, "ab") as fh:  # half a block, as a reader may catch a write in progress
        fh.write(layout.encode_block([os.urandom(500)], os.urandom(16))[:60])
    read = list(LocalLogSource(directory).read(["t.pods"]))
    assert [d.record["seq"] for d in read] == list(range(200))
    sink._writers["t.pods"].file.close()  # the writer dies: the kernel drops its lock
    errors = [d.error for d in LocalLogSource(directory).read(["t.pods"]) if d.error]
    assert [e.cause for e in errors] == ["torn tail: the last block is incomplete"]


def test_local_log_corrupt_block_is_reported_and_later_blocks_still_decode(tmp_path):
    transport = _local(tmp_path)
    _write(transport, samples.interleaved(768, keys=3))  # three blocks of 256
    path = _segment(tmp_path)
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    header = layout.read_header(bytes(data))
    second = list(layout.scan_blocks(bytes(data), header))[1]
    middle = (second.position + second.end) // 2
    data[middle:middle + 64] = os.urandom(64)  # flipped bits inside the compressed records
    with open(path, "wb") as fh:
        fh.write(data)
    read = _read(transport)
    errors = [d for d in read if d.error]
    assert len(errors) == 1 and "corrupt block" in str(errors[0].error)
    assert errors[0].where() == f"t.pods/0@{layout.make_position(0, second.position, 0)}"
    seqs = [d.record["seq"] for d in read if d.record]
    assert seqs == list(range(256)) + list(range(512, 768))


def test_local_log_rotates_segments_and_reads_across_them(tmp_path):
    directory = str(tmp_path / "log")
    sink = LocalLogSink(directory, max_segment_bytes=8 * 1024, block_records=50)
    for record in samples.interleaved(2_000, keys=4):
        sink.send("t.pods", record)
    sink.close()
    assert len(os.listdir(os.path.join(directory, "t.pods"))) > 3
    read = list(LocalLogSource(directory).read(["t.pods"]))
    assert [d.record["seq"] for d in read] == list(range(2_000))
    offsets = [d.offset for d in read]
    assert offsets == sorted(set(offsets))


def test_local_log_is_readable_while_being_written(tmp_path):
    directory = str(tmp_path / "log")
    sink = LocalLogSink(directory, block_records=100)
    for record in samples.interleaved(250, keys=2):
        sink.send("t.pods", record)
    # Two whole blocks are on disk; the rest waits for a flush.
    assert len(list(LocalLogSource(directory).read(["t.pods"]))) == 200
    sink.flush()
    assert len(list(LocalLogSource(directory).read(["t.pods"]))) == 250
    sink.close()


# --- Kafka: an unreachable broker -----------------------------------------------------------


@pytest.mark.parametrize("make", [KafkaSink, KafkaSource], ids=["sink", "source"])
def test_unreachable_broker_is_a_clear_error_within_the_timeout(make):
    settings = KafkaSettings(bootstrap="127.0.0.1:9", connect_timeout_s=2)
    started = time.monotonic()
    with pytest.raises(TransportError, match=r"127.0.0.1:9 unreachable within 2s"):
        make(settings)
    assert time.monotonic() - started < 10
