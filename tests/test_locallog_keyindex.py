"""The local log's index by key (transports/locallog/keyindex.py): a ``-n`` load reads only
the blocks holding records it may keep and decodes only those records, its database equals
a load that decodes every record, and a key index that is missing, damaged or out of date
is rebuilt from its segment and said so."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from replayer import db
from replayer.record_filter import RecordFilter, Scope
from replayer.replay import replay
from transports.locallog import keyindex, layout
from transports.locallog.source import LocalLogSource
from transports.window import Window
from tests.replayer_data import FACT_TABLES, rows, small_blocks_log

NAMESPACE = "race"


@pytest.fixture(scope="module")
def small_blocks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scenarios' recording written again in small blocks and segments (many of each),
    by the sink, which writes each closed segment's key index."""
    return small_blocks_log(tmp_path_factory.mktemp("keyindex") / "log")


def _load(directory: Path, path: Path, source: LocalLogSource | None = None
          ) -> tuple[duckdb.DuckDBPyConnection, LocalLogSource]:
    source = source or LocalLogSource(str(directory))
    con = db.open_db(str(path))
    replay(source, con, source_name="k", prefix="ktrace", keep=RecordFilter(NAMESPACE))
    return con, source


def _segments(directory: Path) -> list[str]:
    return [path for topic in sorted(directory.iterdir()) if topic.is_dir()
            for _, path in layout.list_segments(str(topic))]


def test_a_namespace_load_skips_the_blocks_without_it_and_equals_a_load_of_every_record(
        small_blocks, tmp_path, monkeypatch):
    keyed, read = _load(small_blocks, tmp_path / "keyed.duckdb")
    assert read.counts.key_indexes_built == 0  # the sink wrote them
    assert read.counts.blocks_skipped > 0 and read.counts.records_passed > 0
    # the reference: every record decoded and judged on its envelope (no key index)
    monkeypatch.setattr(Scope, "wants", lambda self, prefix: None)
    plain, whole = _load(small_blocks, tmp_path / "plain.duckdb")
    assert whole.counts.blocks_skipped == whole.counts.records_passed == 0
    # a block is read or skipped: the skipped ones are those holding nothing it may keep
    assert read.counts.blocks_read + read.counts.blocks_skipped == whole.counts.blocks_read
    assert rows(keyed, "SELECT count(*) FROM raw_events")[0][0] > 20
    for table in ("raw_events", *FACT_TABLES):
        query = f"SELECT * FROM {table} ORDER BY ALL"
        assert rows(keyed, query) == rows(plain, query), table
    positions = 'SELECT topic, "offset" FROM load_positions ORDER BY ALL'
    counted = "SELECT deliveries, loaded, duplicates, problems FROM loads"
    assert rows(keyed, positions) == rows(plain, positions)
    assert rows(keyed, counted) == rows(plain, counted)


def test_a_resumed_namespace_load_starts_after_the_records_it_passed_by(small_blocks, tmp_path):
    path = tmp_path / "resumed.duckdb"
    con, _ = _load(small_blocks, path)
    con.close()
    con, again = _load(small_blocks, path)
    try:
        assert again.counts.blocks_read == again.counts.records_passed == 0
        assert rows(con, "SELECT deliveries FROM loads ORDER BY load_id")[-1] == (0,)
    finally:
        con.close()


def test_a_namespace_window_skips_the_blocks_without_it_and_equals_the_window_read_whole(
        small_blocks, tmp_path, monkeypatch):
    """``incident -n``: the time index finds the window's blocks, the key index leaves out
    those of other namespaces; the window's answers are those of its blocks read whole."""
    times = sorted(d.record["receivedAt"] for d in LocalLogSource(str(small_blocks)).read(
        LocalLogSource(str(small_blocks)).topics("ktrace")) if d.record is not None)
    since_us, until_us = times[len(times) // 3], times[2 * len(times) // 3]

    def window(path: Path) -> tuple[duckdb.DuckDBPyConnection, LocalLogSource]:
        source = LocalLogSource(str(small_blocks))
        con = db.open_db(str(path))
        replay(source, con, source_name="w", prefix="ktrace", keep=RecordFilter(NAMESPACE),
               window=Window(since_us, until_us))
        return con, source

    keyed, read = window(tmp_path / "keyed.duckdb")
    monkeypatch.setattr(Scope, "wants", lambda self, prefix: None)
    plain, whole = window(tmp_path / "plain.duckdb")
    assert read.counts.blocks_read < whole.counts.blocks_read
    assert rows(keyed, "SELECT count(*) FROM raw_events WHERE received_at >= make_timestamp(?)",
                since_us)[0][0] > 5
    # positions aside: a skipped block moves none, as the blocks before the window do not
    for table in ("raw_events", *(t for t in FACT_TABLES if t != "load_positions")):
        query = f"SELECT * EXCLUDE (event_id) FROM {table} ORDER BY ALL" if table == (
            "raw_events") else f"SELECT * FROM {table} ORDER BY ALL"
        assert rows(keyed, query) == rows(plain, query), table


@pytest.mark.parametrize("harm", ["missing", "damaged", "truncated", "out of date"])
def test_a_missing_or_damaged_key_index_is_rebuilt_and_said_so(small_blocks, tmp_path, caplog,
                                                               harm):
    directory = tmp_path / "log"
    shutil.copytree(small_blocks, directory)
    expected, _ = _load(directory, tmp_path / "expected.duckdb")
    segment = max(_segments(directory), key=os.path.getsize)
    index = Path(layout.key_index_path(segment))
    written = index.read_bytes()
    if harm == "missing":
        index.unlink()
    elif harm == "damaged":
        index.write_bytes(written.replace(b"[", b"{", 5))
    elif harm == "truncated":
        index.write_bytes(written[: len(written) // 2])
    else:
        os.utime(segment, ns=(0, 0))
    with caplog.at_level(logging.WARNING):
        con, read = _load(directory, tmp_path / "rebuilt.duckdb")
    query = "SELECT session, resource, seq, uid FROM raw_events ORDER BY ALL"
    assert rows(con, query) == rows(expected, query)
    assert read.counts.key_indexes_built == 1
    said = [r.getMessage() for r in caplog.records if "key index" in r.getMessage()]
    if harm == "missing":
        assert said == ["key index built for 1 segment(s) that had none"]
    else:
        assert len(said) == 1 and "rebuilt from the segment" in said[0]
        assert (harm in said[0]) if harm != "truncated" else "damaged" in said[0]
    header, stat = _header_and_stat(segment)
    assert keyindex.load(segment, header, stat)[0] is not None  # written again
    _, again = _load(directory, tmp_path / "again.duckdb")
    assert again.counts.key_indexes_built == 0


def test_the_sink_writes_each_closed_segments_key_index_as_a_read_would_build_it(
        small_blocks, tmp_path):
    directory = tmp_path / "log"
    shutil.copytree(small_blocks, directory)
    written = {path: keyindex.load(path, *_header_and_stat(path))[0]
               for path in _segments(directory)}
    assert len(written) > 10 and all(index is not None for index in written.values())
    for path in written:
        Path(layout.key_index_path(path)).unlink(missing_ok=True)
    _load(directory, tmp_path / "building.duckdb")
    for path, index in written.items():
        assert keyindex.load(path, *_header_and_stat(path))[0] == index, path


def test_an_old_recording_without_key_indexes_loads_the_same(small_blocks, tmp_path):
    """A log written before the key index: each segment indexed by its first ``-n`` read."""
    directory = tmp_path / "log"
    shutil.copytree(small_blocks, directory)
    for path in _segments(directory):
        Path(layout.key_index_path(path)).unlink(missing_ok=True)
    expected, _ = _load(small_blocks, tmp_path / "expected.duckdb")
    con, read = _load(directory, tmp_path / "old.duckdb")
    query = "SELECT session, resource, seq, uid FROM raw_events ORDER BY ALL"
    assert rows(con, query) == rows(expected, query)
    assert read.counts.key_indexes_built == len(_segments(directory))


def _header_and_stat(path: str) -> tuple[layout.SegmentHeader, os.stat_result]:
    with open(path, "rb") as fh:
        return layout.read_header(fh.read()), os.fstat(fh.fileno())
