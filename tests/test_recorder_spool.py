"""The on-disk spool and the spooling sink: order kept, nothing dropped, torn tails cut."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from recorder.sinks.locallog import LocalLogSink
from recorder.sinks.spooling import SpoolingSink
from recorder.spool import Spool, SpoolFull
from replayer.sources.locallog import LocalLogSource
from schemas import codec, records
from schemas.errors import TransportError


def marker(seq: int) -> dict:
    return records.marker_record(cluster="c", session="s", seq=seq, event_type="BOOKMARK",
                                 resource="pods", api_version="v1", kind="Pod", received_at=seq,
                                 toResourceVersion=str(seq))


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

    def flush(self, timeout: float | None = None) -> None:
        if self.state["down"]:
            raise TransportError("broker down")
        self.inner.flush()

    def close(self) -> None:
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
