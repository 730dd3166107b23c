"""The local log's index by time: a window reads only the blocks that may hold it, its
answers equal the same window read without the index, and an index that is missing,
damaged or out of date is rebuilt from its segment and said so."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from replayer import db
from replayer.replay import replay
from transports.locallog import layout, timeindex
from transports.locallog import source as locallog_source
from transports.locallog.source import LocalLogSource
from transports.window import Window
from tests.replayer_data import FACT_TABLES, rows, small_blocks_log


@pytest.fixture(scope="module")
def small_segments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scenarios' recording written again in small blocks and segments (many of each)."""
    return small_blocks_log(tmp_path_factory.mktemp("timeindex") / "log")


def _window(directory: Path) -> tuple[int, int]:
    """The middle third of the recording's receive times."""
    times = sorted(d.record["receivedAt"] for d in _read(directory))
    return times[len(times) // 3], times[2 * len(times) // 3]


def _read(directory: Path, since_us: int | None = None, until_us: int | None = None,
          source: LocalLogSource | None = None) -> list:
    source = source or LocalLogSource(str(directory))
    return list(source.read(source.topics("ktrace"), window=Window(since_us, until_us)))


def _filtered(deliveries: list, since_us: int, until_us: int) -> list:
    """A whole read restricted to the window as a read without the index does it: records
    before the window dropped, each topic stopped at its first record after it."""
    kept, stopped = [], set()
    for d in deliveries:
        if d.topic in stopped:
            continue
        if d.record is not None and d.record["receivedAt"] > until_us:
            stopped.add(d.topic)
        elif d.record is None or d.record["receivedAt"] >= since_us:
            kept.append(d)
    return kept


def _key(deliveries: list) -> list[tuple]:
    return [(d.topic, d.offset, d.record and d.record["seq"]) for d in deliveries]


def test_a_window_reads_only_its_blocks_and_yields_what_a_whole_read_keeps(small_segments):
    since_us, until_us = _window(small_segments)
    whole = LocalLogSource(str(small_segments))
    everything = _read(small_segments, source=whole)
    _read(small_segments, since_us, until_us)  # the first windowed read builds the indexes
    windowed = LocalLogSource(str(small_segments))
    window = _read(small_segments, since_us, until_us, source=windowed)
    assert _key(window) == _key(_filtered(everything, since_us, until_us))
    assert window and windowed.counts.indexes_built == 0
    assert windowed.counts.blocks_skipped > 0 and windowed.counts.segments_skipped > 0
    # the window's blocks, not the recording's: about the window's third, never all of it
    assert windowed.counts.bytes_read < 0.6 * whole.counts.bytes_read
    assert windowed.counts.blocks_read < 0.6 * whole.counts.blocks_read


def test_a_windowed_replay_equals_the_same_window_read_without_the_index(
        small_segments, tmp_path, monkeypatch):
    since_us, until_us = _window(small_segments)
    indexed = _replay_window(small_segments, tmp_path / "indexed.duckdb", since_us, until_us)
    # the reference: every segment read whole, each record filtered (the read before indexes)
    monkeypatch.setattr(locallog_source, "_read_segment_window",
                        lambda topic, index, path, _window, counts, newest, **_:
                        locallog_source._read_segment(topic, index, path, None, counts,
                                                      newest=newest))
    plain = _replay_window(small_segments, tmp_path / "plain.duckdb", since_us, until_us)
    assert rows(indexed, "SELECT count(*) FROM raw_events")[0][0] > 50
    for table in FACT_TABLES:
        query = f"SELECT * FROM {table} ORDER BY ALL"
        assert rows(indexed, query) == rows(plain, query), table


def _replay_window(directory: Path, path: Path, since_us: int, until_us: int):
    con = db.open_db(str(path))
    replay(LocalLogSource(str(directory)), con, source_name="w", prefix="ktrace",
           window=Window(since_us, until_us))
    return con


def _first_index(directory: Path) -> Path:
    topic = max((t for t in directory.iterdir()), key=lambda t: len(list(t.iterdir())))
    return Path(layout.time_index_path(layout.list_segments(str(topic))[0][1]))


@pytest.mark.parametrize("harm", ["missing", "damaged", "truncated", "out of date"])
def test_a_missing_or_damaged_index_is_rebuilt_and_said_so(small_segments, tmp_path, caplog,
                                                           harm):
    directory = tmp_path / "log"
    shutil.copytree(small_segments, directory)
    since_us, until_us = _window(directory)
    expected = _key(_read(directory, since_us, until_us))
    index = _first_index(directory)
    if harm == "missing":
        index.unlink()
    elif harm == "damaged":
        index.write_bytes(index.read_bytes().replace(b"[", b"{", 3))
    elif harm == "truncated":
        index.write_bytes(index.read_bytes()[: index.stat().st_size // 2])
    else:
        segment = str(index).replace(layout.TIME_INDEX_SUFFIX, layout.SEGMENT_SUFFIX)
        os.utime(segment, ns=(0, 0))
    source = LocalLogSource(str(directory))
    with caplog.at_level(logging.WARNING):
        assert _key(_read(directory, since_us, until_us, source=source)) == expected
    assert source.counts.indexes_built == 1
    said = [r.getMessage() for r in caplog.records if "time index" in r.getMessage()]
    if harm == "missing":  # one line for the read, however many segments had none
        assert said == ["time index built for 1 segment(s) that had none"]
    else:
        assert len(said) == 1 and "rebuilt from the segment" in said[0]
        assert (harm in said[0]) if harm != "truncated" else "damaged" in said[0]
    assert index.exists()  # written again beside its segment
    source = LocalLogSource(str(directory))
    _read(directory, since_us, until_us, source=source)
    assert source.counts.indexes_built == 0


def test_damage_in_a_skipped_stretch_is_still_reported(small_segments, tmp_path):
    directory = tmp_path / "log"
    shutil.copytree(small_segments, directory)
    since_us, until_us = _window(directory)
    segment = Path(str(_first_index(directory)).replace(layout.TIME_INDEX_SUFFIX,
                                                         layout.SEGMENT_SUFFIX))
    whole_before = [d for d in _read(directory) if d.record is None]
    data = bytearray(segment.read_bytes())
    data[-40] ^= 0xFF  # inside the first segment's last block, before the window
    segment.write_bytes(bytes(data))
    damaged = [d for d in _read(directory) if d.record is None]
    windowed = [d for d in _read(directory, since_us, until_us) if d.record is None]
    assert len(damaged) == len(whole_before) + 1
    assert [(d.topic, d.offset, d.error.cause) for d in windowed] == [
        (d.topic, d.offset, d.error.cause) for d in damaged]


def test_a_summary_comes_from_the_indexes_and_equals_a_full_reads(small_segments, tmp_path):
    directory = tmp_path / "log"
    shutil.copytree(small_segments, directory)
    for topic in directory.iterdir():
        for _, segment in layout.list_segments(str(topic)):
            layout.remove_indexes(segment)
    building = LocalLogSource(str(directory))
    topics = building.topics("ktrace")
    built = building.summarize(topics)
    indexed = LocalLogSource(str(directory))
    assert indexed.summarize(topics) == built
    whole = LocalLogSource(str(directory))
    records = _read(directory, source=whole)
    assert indexed.counts.indexes_built == 0 and building.counts.indexes_built > 10
    assert indexed.counts.blocks_read == 0 < whole.counts.blocks_read
    assert sum(s.records for s in built) == len(records)
    assert max(s.last_received_us for s in built if s.last_received_us) == max(
        d.record["receivedAt"] for d in records)


def test_the_sink_writes_each_closed_segments_index_as_a_read_would_build_it(small_segments,
                                                                            tmp_path):
    directory = tmp_path / "log"
    shutil.copytree(small_segments, directory)
    segments = [(path, header_and_stat(path)) for topic in directory.iterdir()
                for _, path in layout.list_segments(str(topic))]
    written = {path: timeindex.load(path, *found) for path, found in segments}
    assert len(written) > 10 and all(index is not None for index, _ in written.values())
    windowed = LocalLogSource(str(directory))
    _read(directory, *_window(directory), source=windowed)
    assert windowed.counts.indexes_built == 0  # the first windowed read found them made
    for path, _ in segments:
        layout.remove_indexes(path)
    rebuilding = LocalLogSource(str(directory))
    rebuilding.summarize(rebuilding.topics("ktrace"))  # every segment's, built by the reader
    for path, found in segments:
        assert timeindex.load(path, *found)[0] == written[path][0], path


def header_and_stat(path: str) -> tuple[layout.SegmentHeader, os.stat_result]:
    with open(path, "rb") as fh:
        return layout.read_header(fh.read()), os.fstat(fh.fileno())
