"""Checkpoints saved behind the recording: never before the records they account for are
durable, in order, and records sent meanwhile wait for the flush before them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from recorder import informer as inf
from recorder.checkpoint import CheckpointStore
from recorder.checkpointer import Checkpointer
from recorder.metrics import Metrics
from transports.sink import Outgoing
from transports.locallog.sink import LocalLogSink
from recorder.spooling.sink import SpoolingSink
from recorder.spooling.spool import Spool
from recorder.writer import Writer
from schemas.errors import TransportError
from schemas.redaction import Redactor
from tests.recorder_data import TARGETS, events, read_back

KEY = TARGETS["pods"].key


class SlowBroker:
    """A real local log whose flush waits for ``acknowledge`` (a broker slow to answer) and
    fails once ``down`` is set."""

    max_record_bytes = 1_000_000

    def __init__(self, directory: str) -> None:
        self.inner = LocalLogSink(directory)
        self.acknowledge = threading.Event()
        self.waiting = threading.Event()
        self.down = False
        self.sent_before_flush: list[int] = []

    def send(self, topic: str, record: dict) -> None:
        self.inner.send(topic, record)
        self.sent_before_flush.append(record["seq"])

    def send_encoded(self, topic: str, outgoing: Outgoing) -> None:
        self.send(topic, outgoing.record())

    def flush(self, timeout: float | None = None) -> None:
        self.waiting.set()
        assert self.acknowledge.wait(10)
        self.waiting.clear()
        if self.down:
            raise TransportError("broker down")
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()


def recording(tmp_path: Path, metrics: Metrics | None = None, *, reconnects_answer: bool = True
              ) -> tuple[Writer, list[SlowBroker], Checkpointer]:
    """A writer into a spooling sink over ``SlowBroker``s (each connection its own log; a
    reconnection's broker holds its answer unless ``reconnects_answer``), confirmations on
    ``metrics`` as the session wires them."""
    brokers: list[SlowBroker] = []

    def connect() -> SlowBroker:
        brokers.append(SlowBroker(str(tmp_path / f"log{len(brokers)}")))
        if reconnects_answer or len(brokers) == 1:
            brokers[-1].acknowledge.set()
        return brokers[-1]

    sink = SpoolingSink(connect, Spool(str(tmp_path / "spool"), max_bytes=10**8),
                        retry_initial_s=0.05)
    writer = Writer(sink, cluster="c", session="s", topic_prefix="t", redactor=Redactor())
    writer.add_watch(TARGETS["pods"], None)
    store = CheckpointStore(str(tmp_path / "state"), "test")
    checkpointer = Checkpointer(sink, store, writer.states, on_confirmed=(
        metrics or Metrics()).last_flush.set_to_current_time)
    writer.start_session("test")
    writer.handle(KEY, inf.ListStarted("1", None, 1))  # an empty initial list: SYNCED
    writer.handle(KEY, inf.Synced("1", 0, 1))
    checkpointer.flush()  # the first save of a process: a snapshot, waited for
    return writer, brokers, checkpointer


def saved_at(tmp_path: Path) -> str | None:
    """The resourceVersion of the checkpoint saved on disk (as a restart reads it)."""
    checkpoint = CheckpointStore(str(tmp_path / "state"), "test").load(KEY)
    return checkpoint.resource_version if checkpoint else None


def last_rv(items: list[inf.WatchEvent]) -> str:
    return items[-1].obj.metadata.resourceVersion


def wait_until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.parametrize("save", ["journal line", "snapshot"])
def test_a_checkpoint_is_saved_only_once_its_records_are_durable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, save: str) -> None:
    writer, (broker,), checkpointer = recording(tmp_path)
    stream = events("pods")
    earlier, first, later = stream[:4], stream[4:10], stream[10:16]
    for item in earlier:
        writer.handle(KEY, item)
    checkpointer.flush()  # a journal line
    if save == "snapshot":  # the journal now outgrows the snapshot: the next save compacts
        monkeypatch.setattr("recorder.checkpoint.COMPACT_MIN_BYTES", 0)
    broker.acknowledge.clear()
    for item in first:
        writer.handle(KEY, item)
    checkpointer.mark()  # returns while the broker has not answered
    assert broker.waiting.wait(5)
    sent = len(broker.sent_before_flush)
    for item in later:  # sent during the flush: held back, not handed to the producer
        writer.handle(KEY, item)
    assert len(broker.sent_before_flush) == sent
    time.sleep(0.2)
    assert saved_at(tmp_path) == last_rv(earlier), "a checkpoint covered unacknowledged records"

    broker.acknowledge.set()
    # the later ones wait for the next point; a snapshot lands before the journal is emptied
    journal = tmp_path / "state" / f"{KEY}.journal.jsonl"
    wait_until(lambda: saved_at(tmp_path) == last_rv(first)
               and (journal.stat().st_size == 0) == (save == "snapshot"))
    checkpointer.flush()
    assert saved_at(tmp_path) == last_rv(later)
    writer.sink.close()
    seqs = [r["seq"] for r in read_back(tmp_path / "log0")["t.pods"]]
    assert seqs == list(range(2 + 16))  # SESSION_START, SYNCED, then the events in order


def test_a_point_while_the_last_flush_behind_waits_is_skipped_not_waited_for(tmp_path: Path) -> None:
    writer, (broker,), checkpointer = recording(tmp_path)
    stream = events("pods")
    broker.acknowledge.clear()
    for item in stream[:3]:
        writer.handle(KEY, item)
    checkpointer.mark()
    assert broker.waiting.wait(5)
    for item in stream[3:6]:  # held while the broker has not answered
        writer.handle(KEY, item)
    point = threading.Thread(target=checkpointer.mark)
    point.start()
    point.join(2)
    assert not point.is_alive(), "a point waited for the broker: recording stalled"
    broker.acknowledge.set()
    wait_until(lambda: saved_at(tmp_path) == last_rv(stream[:3]))
    time.sleep(0.2)
    assert saved_at(tmp_path) == last_rv(stream[:3]), "the skipped point saved a checkpoint"
    checkpointer.mark()  # the next point covers what the skipped one would have
    wait_until(lambda: saved_at(tmp_path) == last_rv(stream[:6]))
    writer.sink.close()
    seqs = [r["seq"] for r in read_back(tmp_path / "log0")["t.pods"]]
    assert seqs == list(range(2 + 6))


def test_records_held_during_a_flush_behind_are_bounded_in_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer, (broker,), checkpointer = recording(tmp_path)
    stream = events("pods")
    broker.acknowledge.clear()
    writer.handle(KEY, stream[0])
    checkpointer.mark()
    assert broker.waiting.wait(5)
    monkeypatch.setattr("recorder.spooling.sink.HELD_MAX_BYTES", 1)  # one record fills it
    writer.handle(KEY, stream[1])  # held
    beyond = threading.Thread(target=writer.handle, args=(KEY, stream[2]))
    beyond.start()
    beyond.join(0.5)
    assert beyond.is_alive(), "a record was held beyond the bound"
    broker.acknowledge.set()
    beyond.join(5)
    assert not beyond.is_alive()
    checkpointer.flush()
    writer.sink.close()
    seqs = [r["seq"] for r in read_back(tmp_path / "log0")["t.pods"]]
    assert seqs == list(range(2 + 3))


def test_a_failed_flush_behind_spools_its_records_and_the_held_ones_in_order(tmp_path: Path) -> None:
    writer, brokers, checkpointer = recording(tmp_path)
    stream = events("pods")
    brokers[0].acknowledge.clear()
    for item in stream[:3]:
        writer.handle(KEY, item)
    checkpointer.mark()
    assert brokers[0].waiting.wait(5)
    for item in stream[3:6]:
        writer.handle(KEY, item)
    brokers[0].down = True
    brokers[0].acknowledge.set()
    # saved once its records are in the (synced) spool, not before the flush failed
    wait_until(lambda: saved_at(tmp_path) == last_rv(stream[:3]))
    checkpointer.flush()
    assert saved_at(tmp_path) == last_rv(stream[:6])
    wait_until(lambda: writer.sink.depth()[0] == 0)  # drained through a fresh producer
    writer.sink.close()
    assert len(brokers) >= 2
    drained = [r["seq"] for r in read_back(tmp_path / "log1")["t.pods"]]
    assert drained == list(range(2, 8))  # the flushed ones, then those held during the flush


def test_an_error_of_a_checkpoint_saved_behind_is_raised_at_the_next_point(tmp_path: Path) -> None:
    writer, _, checkpointer = recording(tmp_path)
    for item in events("pods")[:3]:
        writer.handle(KEY, item)
    (tmp_path / "state" / f"{KEY}.journal.jsonl").unlink(missing_ok=True)
    (tmp_path / "state" / f"{KEY}.journal.jsonl").mkdir()  # the journal cannot be appended
    checkpointer.mark()
    with pytest.raises(Exception, match="cannot write checkpoint journal"):
        checkpointer.flush()


def test_the_last_flush_gauge_waits_for_the_acknowledgement_and_ignores_spooled_records(
        tmp_path: Path) -> None:
    metrics = Metrics()
    writer, brokers, checkpointer = recording(tmp_path, metrics, reconnects_answer=False)

    def last_flush() -> float:
        return metrics.registry.get_sample_value("ktrace_last_flush_timestamp_seconds")

    started = last_flush()
    assert started > 0  # the session's first flush was acknowledged
    stream = events("pods")
    brokers[0].acknowledge.clear()
    for item in stream[:3]:
        writer.handle(KEY, item)
    time.sleep(0.01)  # the clock moves on: an advance would show
    checkpointer.mark()
    assert brokers[0].waiting.wait(5)
    time.sleep(0.2)
    assert last_flush() == started, "advanced before the broker acknowledged"
    brokers[0].acknowledge.set()
    wait_until(lambda: last_flush() > started)
    acknowledged = last_flush()

    brokers[0].acknowledge.clear()
    for item in stream[3:6]:
        writer.handle(KEY, item)
    checkpointer.mark()
    assert brokers[0].waiting.wait(5)
    brokers[0].down = True
    brokers[0].acknowledge.set()
    wait_until(lambda: saved_at(tmp_path) == last_rv(stream[:6]))  # spooled, then saved
    wait_until(lambda: len(brokers) == 2 and brokers[1].waiting.is_set())  # draining, held
    assert last_flush() == acknowledged, "spooled records counted as confirmed"

    brokers[1].acknowledge.set()
    # the spool drained (its last batch committed, then the sink leaves spooling)
    wait_until(lambda: writer.sink.depth()[0] == 0 and not writer.sink.spooling)
    checkpointer.flush()  # every record is acknowledged again
    assert last_flush() > acknowledged
    writer.sink.close()
