"""The on-disk spool and the spooling sink: order kept, nothing dropped, torn tails cut."""

from __future__ import annotations

import base64
import os
import threading
import time
from pathlib import Path

import orjson
import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType

from recorder.spooling.deadletter import DeadLetters
from recorder.metrics import Metrics
from transports.kafka.sink import KafkaSink
from transports.sink import Outgoing, RecordsRejected, Rejection
from transports.locallog.sink import LocalLogSink
from recorder.spooling.sink import SpoolingSink
from recorder.spooling.spool import Spool, SpoolFull
from replayer import db
from replayer.replay import replay
from transports.kafka.source import KafkaSource
from transports.locallog.source import LocalLogSource
from schemas import codec, records
from schemas.errors import TransportError
from transports.kafka.settings import KafkaSettings
from tests import samples


def marker(seq: int) -> dict:
    return records.marker_record(cluster="c", session="s", seq=seq, event_type="BOOKMARK",
                                 resource="pods", api_version="v1", kind="Pod", received_at=seq,
                                 marker={"toResourceVersion": str(seq)})


def framed(seq: int) -> bytes:
    return codec.frame(codec.encode(marker(seq)))


def test_spool_is_fifo_across_segments_and_restarts(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path), max_bytes=10**7, segment_bytes=300)
    for i in range(20):
        spool.append("t.pods", framed(i))
    spool.sync()
    first = spool.peek(7)
    assert [codec.decode(*reversed(codec.unframe(e.framed)))["seq"] for e in first] == list(range(7))
    spool.commit(first)
    spool.close()
    reopened = Spool(str(tmp_path), max_bytes=10**7, segment_bytes=300)
    assert len(reopened) == 13
    rest = reopened.peek(100)
    assert [codec.decode(*reversed(codec.unframe(e.framed)))["seq"] for e in rest] == list(range(7, 20))
    reopened.commit(rest)
    assert len(reopened) == 0 and reopened.bytes == 0
    assert len(list(tmp_path.glob("*.spool"))) == 1  # drained segments are deleted


def test_torn_tail_is_cut_off_on_open(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path), max_bytes=10**7)
    for i in range(3):
        spool.append("t.pods", framed(i))
    spool.close()
    segment = next(tmp_path.glob("*.spool"))
    segment.write_bytes(segment.read_bytes()[:-5])  # a crash mid-append
    reopened = Spool(str(tmp_path), max_bytes=10**7)
    assert len(reopened) == 2
    reopened.append("t.pods", framed(3))
    seqs = [codec.decode(*reversed(codec.unframe(e.framed)))["seq"] for e in reopened.peek(10)]
    assert seqs == [0, 1, 3]


def test_spool_refuses_beyond_its_limit(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path), max_bytes=len(framed(0)) * 3)
    spool.append("t", framed(0))
    spool.append("t", framed(1))
    with pytest.raises(SpoolFull):
        for i in range(2, 10):
            spool.append("t", framed(i))


class FlakySink:
    """A real local-log sink behind a switch that makes it fail like an unreachable broker."""

    max_record_bytes = 1_000_000

    def __init__(self, directory: str, state: dict) -> None:
        self.inner, self.state = LocalLogSink(directory), state

    def send(self, topic: str, record: dict) -> None:
        if self.state["down"]:
            raise TransportError("broker down")
        self.inner.send(topic, record)

    def send_encoded(self, topic: str, outgoing: Outgoing) -> None:
        self.send(topic, outgoing.record())

    def flush(self, timeout: float | None = None) -> None:
        if self.state["down"]:
            raise TransportError("broker down")
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()


class RefusingProducer:
    """A producer that holds what it is sent until a flush writes it into a real local log,
    refuses the ``refused`` records when they are sent (as a record too large), and fails
    what it holds once ``broken`` (its connection lost; a fresh producer connects)."""

    max_record_bytes = 1_000_000

    def __init__(self, directory: str, refused: set[int]) -> None:
        self.inner, self.refused = LocalLogSink(directory), refused
        self.held: list[tuple[str, dict]] = []
        self.broken = False

    def send(self, topic: str, record: dict) -> None:
        if record["seq"] in self.refused and record["type"] != "GAP":  # not its dead-letter marker
            raise RecordsRejected([Rejection(topic, record, "MSG_SIZE_TOO_LARGE")])
        self.held.append((topic, record))

    def send_encoded(self, topic: str, outgoing: Outgoing) -> None:
        self.send(topic, outgoing.record())

    def flush(self, timeout: float | None = None) -> None:
        held, self.held = self.held, []
        if self.broken:
            raise TransportError(f"{len(held)} records failed: connection lost")
        for topic, record in held:
            self.inner.send(topic, record)
        self.inner.flush()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.inner.close()


def read_seqs(directory: Path) -> list[int]:
    source = LocalLogSource(str(directory))
    try:
        return [d.record["seq"] for d in source.read(source.topics("t"))]
    finally:
        source.close()


def test_spooling_sink_keeps_order_through_an_outage(tmp_path: Path) -> None:
    state = {"down": False}
    sink = SpoolingSink(lambda: FlakySink(str(tmp_path / "log"), state),
                        Spool(str(tmp_path / "spool"), max_bytes=10**7), retry_initial_s=0.05,
                        retry_max_s=0.1)
    for i in range(5):
        sink.send("t.pods", marker(i))
    sink.flush()
    state["down"] = True
    for i in range(5, 15):
        sink.send("t.pods", marker(i))
        sink.flush()
    assert sink.spooling and sink.depth()[0] == 10
    state["down"] = False
    deadline = time.monotonic() + 10
    while sink.spooling and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sink.spooling
    for i in range(15, 20):
        sink.send("t.pods", marker(i))
    sink.close()
    assert read_seqs(tmp_path / "log") == list(range(20))


def test_unconfirmed_records_are_spooled_when_flush_fails(tmp_path: Path) -> None:
    state = {"down": False}
    flaky = []

    def connect() -> FlakySink:
        flaky.append(FlakySink(str(tmp_path / f"log{len(flaky)}"), state))
        return flaky[-1]

    sink = SpoolingSink(connect, Spool(str(tmp_path / "spool"), max_bytes=10**7),
                        retry_initial_s=60)
    sink.send("t.pods", marker(0))
    state["down"] = True
    sink.flush()  # the send was accepted but never confirmed: it must be in the spool
    assert sink.depth()[0] == 1
    sink.close()


def test_full_spool_blocks_until_stopped(tmp_path: Path) -> None:
    state = {"down": False}
    spool = Spool(str(tmp_path / "spool"), max_bytes=len(framed(0)) * 2 + 40)
    sink = SpoolingSink(lambda: FlakySink(str(tmp_path / "log"), state), spool,
                        retry_initial_s=0.05, retry_max_s=0.1)
    state["down"] = True  # the broker goes away and stays away
    outcome: list[str] = []

    def writer() -> None:
        try:
            for i in range(5):
                sink.send("t.pods", marker(i))
            outcome.append("all sent")
        except SpoolFull:
            outcome.append("stopped")

    thread = threading.Thread(target=writer)
    thread.start()
    thread.join(timeout=0.5)
    assert thread.is_alive() and not outcome  # backpressure: blocked, nothing dropped
    sink.stop_waiting()
    thread.join(timeout=10)
    assert outcome == ["stopped"]
    assert sink.depth()[0] == 2


# --- dead letters: records the real broker will never accept ----------------------------------


def _big_pod_record(seq: int) -> dict:
    """A pod record whose object is incompressible and ~12 kB: over the lowered limit."""
    obj = samples.pod("uid-big", seq)
    obj["metadata"]["annotations"] = {"blob": os.urandom(6000).hex()}
    return records.object_record(
        cluster="test", session="s-1", seq=seq, event_type="MODIFIED", resource="pods", obj=obj,
        object_json=orjson.dumps(obj), received_at=samples.BASE_TIME_US + seq * 1000,
        component="kubelet", attribution="managedFields:kubelet:Update:status")


@pytest.mark.kafka
def test_a_record_the_broker_rejects_is_dead_lettered_and_recording_goes_on(
        tmp_path: Path, kafka_bootstrap: str, unique_topic_prefix: str) -> None:
    settings = KafkaSettings(bootstrap=kafka_bootstrap)
    topic = f"{unique_topic_prefix}.pods"
    metrics = Metrics()
    sink = SpoolingSink(lambda: KafkaSink(settings, partitions=1), Spool(str(tmp_path / "spool"),
                        max_bytes=10**7), retry_initial_s=0.1, retry_max_s=0.5,
                        dead_letters=DeadLetters(str(tmp_path / "spool"), on_dead_letter=lambda t:
                                                 metrics.dead_lettered.labels(topic=t).inc()))
    wanted = samples.interleaved(10, keys=2)
    sink.send(topic, wanted[0])
    sink.flush()  # the topic exists; now lower its limit below the big record
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                        configs={"max.message.bytes": "8000"})])
    admin.close()
    time.sleep(1)  # the broker applies topic config changes asynchronously
    wanted[5] = _big_pod_record(5)
    for record in wanted[1:]:
        sink.send(topic, record)
    sink.flush()
    assert not sink.spooling
    sink.close()

    (line,) = (tmp_path / "spool" / "dead-letter.jsonl").read_text().splitlines()
    kept = orjson.loads(line)
    assert (kept["topic"], kept["seq"], kept["name"]) == (topic, 5, "web-uid-big")
    assert "MessageSizeTooLarge" in kept["reason"] or "TooLarge" in kept["reason"]
    fingerprint, body = codec.unframe(base64.b64decode(kept["record"]))
    assert codec.decode(body, fingerprint) == wanted[5]
    assert metrics.dead_lettered.labels(topic=topic)._value.get() == 1

    source = KafkaSource(settings)
    try:
        read = {d.record["seq"]: d.record for d in source.read([topic])}
    finally:
        source.close()
    assert sorted(read) == list(range(10))  # nothing lost, nothing out of sequence
    assert read[5]["type"] == "GAP" and read[5]["marker"]["cause"] == "dead_lettered"
    assert all(read[i] == wanted[i] for i in range(10) if i != 5)

    con = db.open_db(str(tmp_path / "r.duckdb"))
    replay(KafkaSource(settings), con, source_name="kafka", prefix=unique_topic_prefix)
    found = con.execute("SELECT type, detail FROM gaps WHERE category = 'unseen'").fetchall()
    con.close()
    assert [t for t, _ in found] == ["dead_lettered"] and "web-uid-big" in found[0][1]


def test_records_sent_before_a_refused_one_are_not_lost_with_its_producer(tmp_path: Path) -> None:
    """Settling a refused record replaces the producer: what that producer still held is
    confirmed first (here it fails, so it is spooled and sent again), never closed away
    unseen; and it stays ahead of what follows."""
    producers: list[RefusingProducer] = []

    def connect() -> RefusingProducer:
        producers.append(RefusingProducer(str(tmp_path / "log"), {5}))
        return producers[-1]

    sink = SpoolingSink(connect, Spool(str(tmp_path / "spool"), max_bytes=10**7),
                        retry_initial_s=0.05, retry_max_s=0.1)
    for i in range(5):
        sink.send("t.pods", marker(i))
    producers[0].broken = True
    for i in range(5, 10):
        sink.send("t.pods", marker(i))
    sink.flush()
    deadline = time.monotonic() + 10
    while sink.spooling and time.monotonic() < deadline:
        time.sleep(0.05)
    sink.close()
    assert read_seqs(tmp_path / "log") == list(range(10))  # 5: its dead-letter marker
