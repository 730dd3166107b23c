"""The local log's index by object: the state at a window's start found from it equals the
one a scan of every earlier record finds, while reading a few blocks; the sink writes it
as a read would build it; one that is missing or damaged is rebuilt and said so."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from transports import versions
from transports.locallog import layout, objectindex
from transports.locallog.sink import LocalLogSink
from transports.locallog.source import LocalLogSource
from transports.window import Window
from tests.replayer_data import recorded_records

#: (segment bytes, records per block): many small segments with a stretch or two each, and
#: one segment per topic cut into many stretches (as a recording of a day is).
LAYOUTS = {"small segments": (16 * 1024, 8), "one segment": (64 * 1024 * 1024, 2)}


@pytest.fixture(scope="module", params=list(LAYOUTS))
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> Path:
    """The scenarios' recording written again by the sink in ``LAYOUTS``' shape."""
    directory = tmp_path_factory.mktemp("objectindex") / "log"
    segment_bytes, block_records = LAYOUTS[request.param]
    sink = LocalLogSink(str(directory), max_segment_bytes=segment_bytes,
                        block_records=block_records)
    for topic, record in recorded_records():
        sink.send(topic, record)
    sink.close()
    return directory


def _starts(directory: Path) -> list[int]:
    """Window starts across the recording, before its first record and after its last."""
    source = LocalLogSource(str(directory))
    times = sorted(d.record["receivedAt"] for d in source.read(source.topics("ktrace"))
                   if d.record is not None)
    return [times[0], *(times[int(len(times) * share)] for share in (0.1, 0.5, 0.9)),
            times[-1] + 1]


def _state(runs) -> list[tuple]:
    """Each last version: where it is, what it is, and its object's bytes."""
    return [(run.topic, offset, e.uid, e.type, e.resource_version, e.received_at,
             bytes(run.data_of(i)[e.object[0]:e.object[1]]) if e.object else None)
            for run in runs for i, (offset, e) in enumerate(zip(run.offsets, run.envelopes))]


def _from_index(directory: Path, before_us: int) -> tuple[list[tuple], LocalLogSource]:
    source = LocalLogSource(str(directory))
    return _state(source.last_versions(source.topics("ktrace"), before_us)), source


def _scanned(directory: Path, before_us: int) -> tuple[list[tuple], LocalLogSource]:
    source = LocalLogSource(str(directory))
    scan = versions.scan(source.read(source.topics("ktrace"),
                                     window=Window.ending_before(before_us), runs=True))
    return _state(scan), source


def test_the_state_from_the_index_equals_a_scan_of_every_earlier_record(recorded):
    starts = _starts(recorded)
    for before_us in starts:
        (indexed, by_index), (scanned, by_scan) = (_from_index(recorded, before_us),
                                                   _scanned(recorded, before_us))
        assert indexed == scanned, before_us
        assert by_index.counts.indexes_built == 0  # the sink wrote them
    late = starts[-2]
    (indexed, by_index), (_, by_scan) = _from_index(recorded, late), _scanned(recorded, late)
    assert len({uid for _, _, uid, *_ in indexed}) > 20  # the premise: a state to find
    assert by_index.counts.stretches_merged > 0
    assert by_index.counts.blocks_read < by_scan.counts.blocks_read / 2


def test_the_sink_writes_the_index_a_read_builds(recorded, tmp_path):
    directory = tmp_path / "log"
    shutil.copytree(recorded, directory)
    segments = _segments(directory)
    written = {path: objectindex.load(path, *_header_and_stat(path))[0] for path in segments}
    assert all(written.values())
    for path in segments:
        os.remove(layout.object_index_path(path))
    before_us = _starts(directory)[-1]
    _from_index(directory, before_us)  # every segment's index, built by the reader
    for path in segments:
        assert objectindex.load(path, *_header_and_stat(path))[0] == written[path], path


def test_a_missing_or_damaged_index_is_rebuilt_and_said(recorded, tmp_path, caplog):
    directory = tmp_path / "log"
    shutil.copytree(recorded, directory)
    segments = _segments(directory)
    missing, damaged = segments[0], segments[-1]
    os.remove(layout.object_index_path(missing))
    with open(layout.object_index_path(damaged), "r+b") as fh:
        fh.truncate(os.path.getsize(layout.object_index_path(damaged)) // 2)
    before_us = _starts(directory)[3]
    with caplog.at_level(logging.WARNING):
        indexed, source = _from_index(directory, before_us)
    said = [r.getMessage() for r in caplog.records]
    assert f"object index of {os.path.basename(damaged)} damaged" in " ".join(said)
    assert "object index built for 1 segment(s) that had none" in said
    assert source.counts.indexes_built == 2
    assert indexed == _scanned(directory, before_us)[0]
    caplog.clear()
    _, again = _from_index(directory, before_us)
    assert again.counts.indexes_built == 0 and not caplog.records  # kept: said once


def _segments(directory: Path) -> list[str]:
    return [path for topic in sorted(directory.iterdir())
            for _, path in layout.list_segments(str(topic))]


def _header_and_stat(path: str) -> tuple[layout.SegmentHeader, os.stat_result]:
    with open(path, "rb") as fh:
        return layout.read_header(fh.read()), os.fstat(fh.fileno())
