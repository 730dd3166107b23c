"""Damage is data: the issue's damage matrix on copies of the recorded scenarios.

Each case damages the pods topic of a copy of the recording (cut into three segments at
block boundaries, byte for byte) and checks what was loaded, which byte ranges were reported
unreadable, the damaged unseen stretch ``gaps`` shows, and that a pod whose fate fell in the
damage is stuck for ``recording_gap``, never for a wrong cause.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from replayer import db
from replayer.replay import replay
from transports.locallog.source import LocalLogSource
from transports.locallog import layout
from tests.replayer_data import recording, rows

TOPIC = "ktrace.pods"
STUCK = "SELECT uid, top_cause FROM stuck_deletions WHERE kind = 'Pod'"


@dataclass
class Segmented:
    """A copy of the recording whose pods topic is three segments, and the blocks of each."""

    root: Path
    segments: list[Path]
    blocks: list[list[layout.Block]]

    def records(self, segment: int) -> int:
        return sum(b.count for b in self.blocks[segment])


def _split_pods(root: Path) -> Segmented:
    topic_dir = root / TOPIC
    (original,) = topic_dir.glob("*.avro")
    data = original.read_bytes()
    header = layout.read_header(data)
    blocks = list(layout.scan_blocks(data, header))
    # Segment 1 starts with block 7: it holds the DELETED of the three web-6848dfbcdb pods
    # whose deletion was requested in block 6, so damage there hides their fate.
    thirds = [blocks[:7], blocks[7:13], blocks[13:]]
    original.unlink()
    paths = []
    for index, part in enumerate(thirds):
        path = topic_dir / layout.segment_name(index)
        path.write_bytes(data[: header.data_start] + data[part[0].position: part[-1].end])
        paths.append(path)
    rebased = [list(layout.scan_blocks(p.read_bytes(), header)) for p in paths]
    return Segmented(root, paths, rebased)


@pytest.fixture
def copy(tmp_path: Path) -> Segmented:
    root = tmp_path / "recording"
    shutil.copytree(recording("scenarios"), root)
    return _split_pods(root)


def _load(copy: Segmented, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    con = db.open_db(str(tmp_path / "damaged.duckdb"))
    replay(LocalLogSource(str(copy.root)), con, source_name="copy", prefix="ktrace")
    return con


def _pods_loaded(con: duckdb.DuckDBPyConnection) -> int:
    return rows(con, "SELECT count(*) FROM raw_events WHERE topic = ?", TOPIC)[0][0]


def _ranges(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return rows(con, "SELECT from_offset, to_offset, bytes, cause FROM unreadable_ranges "
                     "WHERE topic = ? ORDER BY from_offset", TOPIC)


def _damaged_stretch(con: duckdb.DuckDBPyConnection, from_offset: int, to_offset: int) -> None:
    """`gaps` shows one damaged stretch of the topic, from the last record read before the
    damage to the first one after it (or the end of the data)."""
    ((start, end, detail),) = rows(con, "SELECT start_at, end_at, detail FROM gaps "
                                        "WHERE type = 'damaged' AND topic = ?", TOPIC)
    before = rows(con, "SELECT max(received_at) FROM raw_events WHERE topic = ? "
                       "AND \"offset\" < ?", TOPIC, from_offset)[0][0]
    after = rows(con, "SELECT coalesce(min(received_at) FILTER (WHERE \"offset\" >= ?), "
                      "(SELECT max(received_at) FROM raw_events)) FROM raw_events "
                      "WHERE topic = ?", to_offset, TOPIC)[0][0]
    assert (start, end) == (before, after) and start <= end
    assert f"at offset {from_offset} of partition 0" in detail


def _stuck_for_the_gap(con: duckdb.DuckDBPyConnection, clean: duckdb.DuckDBPyConnection) -> None:
    """Pods stuck only because their DELETED fell in the damage say so (recording_gap)."""
    really_stuck = dict(rows(clean, STUCK))
    found = dict(rows(con, STUCK))
    wrongly = {uid: cause for uid, cause in found.items() if uid not in really_stuck}
    assert wrongly and set(wrongly.values()) == {"recording_gap"}


def _flip(path: Path, start: int, length: int) -> None:
    data = bytearray(path.read_bytes())
    data[start:start + length] = bytes(b ^ 0xFF for b in data[start:start + length])
    path.write_bytes(bytes(data))


def test_truncated_newest_segment_of_an_open_writer_is_tolerated(copy, tmp_path, recorded):
    newest, last = copy.segments[-1], copy.blocks[-1][-1]
    whole = newest.read_bytes()
    newest.write_bytes(whole[: (last.position + last.end) // 2])  # a block being written
    with open(newest, "rb") as writer:
        layout.lock_for_writing(writer)
        con = _load(copy, tmp_path)
        assert _pods_loaded(con) == _pods_loaded(recorded) - last.count
        assert _ranges(con) == [] and rows(con, "SELECT count(*) FROM gaps WHERE type = "
                                                "'damaged'") == [(0,)]
        newest.write_bytes(whole)  # the writer finishes its block: the next run loads it
        replay(LocalLogSource(str(copy.root)), con, source_name="copy", prefix="ktrace")
    assert _pods_loaded(con) == _pods_loaded(recorded) and _ranges(con) == []
    con.close()


def test_truncated_closed_segment(copy, tmp_path, recorded):
    middle, first = copy.segments[1], copy.blocks[1][0]
    cut = (first.position + first.end) // 2  # all of segment 1 is lost but half a block
    os.truncate(middle, cut)
    con = _load(copy, tmp_path)
    assert _pods_loaded(con) == _pods_loaded(recorded) - copy.records(1)
    ((start, end, nbytes, cause),) = _ranges(con)
    assert (start, end) == (layout.make_position(1, first.position, 0),
                            layout.make_position(1, cut, 0))
    assert nbytes == cut - first.position and cause.startswith("torn tail")
    _damaged_stretch(con, start, end)
    _stuck_for_the_gap(con, recorded)
    con.close()


def test_corrupt_segment_header(copy, tmp_path, recorded):
    _flip(copy.segments[1], 0, 4)  # the magic: not a container file any more
    con = _load(copy, tmp_path)
    assert _pods_loaded(con) == _pods_loaded(recorded) - copy.records(1)
    assert _ranges(con) == [(layout.make_position(1, 0, 0), layout.make_position(2, 0, 0),
                             copy.segments[1].stat().st_size,
                             "segment 0000000001.avro: not an Avro object container file")]
    _damaged_stretch(con, *_ranges(con)[0][:2])
    _stuck_for_the_gap(con, recorded)
    con.close()


def test_flipped_bits_mid_block(copy, tmp_path, recorded):
    block = copy.blocks[1][0]
    _flip(copy.segments[1], (block.position + block.end) // 2, 8)
    con = _load(copy, tmp_path)
    assert _pods_loaded(con) == _pods_loaded(recorded) - block.count
    ((start, end, nbytes, cause),) = _ranges(con)
    assert (start, end, nbytes) == (layout.make_position(1, block.position, 0),
                                    layout.make_position(1, block.end, 0),
                                    block.end - block.position)
    assert cause.startswith("corrupt block")
    _damaged_stretch(con, start, end)
    _stuck_for_the_gap(con, recorded)
    con.close()


def test_deleted_middle_segment(copy, tmp_path, recorded):
    copy.segments[1].unlink()
    con = _load(copy, tmp_path)
    assert _pods_loaded(con) == _pods_loaded(recorded) - copy.records(1)
    assert _ranges(con) == [(layout.make_position(1, 0, 0), layout.make_position(2, 0, 0),
                             None, "segment 0000000001.avro missing")]
    _damaged_stretch(con, *_ranges(con)[0][:2])
    _stuck_for_the_gap(con, recorded)
    con.close()


def test_zero_length_segment(copy, tmp_path, recorded):
    os.truncate(copy.segments[1], 0)
    con = _load(copy, tmp_path)
    assert _pods_loaded(con) == _pods_loaded(recorded) - copy.records(1)
    assert _ranges(con) == [(layout.make_position(1, 0, 0), layout.make_position(2, 0, 0),
                             0, "segment 0000000001.avro is empty")]
    _damaged_stretch(con, *_ranges(con)[0][:2])
    _stuck_for_the_gap(con, recorded)
    con.close()


def test_damage_is_reported_once_and_records_after_it_load_on_resume(copy, tmp_path, recorded):
    later = copy.segments[2].read_bytes()
    copy.segments[2].unlink()  # load up to a torn segment 1; the rest arrives afterwards
    os.truncate(copy.segments[1], copy.segments[1].stat().st_size - 10)
    con = _load(copy, tmp_path)
    first = _ranges(con)
    copy.segments[2].write_bytes(later)
    replay(LocalLogSource(str(copy.root)), con, source_name="copy", prefix="ktrace")
    assert _ranges(con) == first and len(first) == 1
    assert _pods_loaded(con) == _pods_loaded(recorded) - copy.blocks[1][-1].count
    con.close()


@pytest.mark.parametrize(("strict", "code"), [((), 0), (("--strict",), 1)])
def test_the_summary_says_what_was_unreadable_and_strict_fails(copy, tmp_path, strict, code):
    block = copy.blocks[0][1]
    _flip(copy.segments[0], (block.position + block.end) // 2, 8)
    result = CliRunner().invoke(cli, ["replay", str(copy.root), "--db",
                                      str(tmp_path / "summary.duckdb"), *strict])
    assert result.exit_code == code, result.output
    lines = result.output.splitlines()
    assert lines[0].endswith(f"1 problem ({block.end - block.position:,} bytes unreadable))")
    assert lines[1].startswith("damage: 1 byte range could not be read")
    assert lines[-1:] == (["Error: 1 unreadable byte range in the source (--strict)"]
                          if strict else lines[-1:])


def test_damage_is_placed_among_its_own_recordings_records(copy, tmp_path):
    """Recordings loaded into one database share topic names and positions: a damaged range
    of one is placed between that recording's records, never another's."""
    block = copy.blocks[1][0]
    _flip(copy.segments[1], (block.position + block.end) // 2, 8)
    damaged = "SELECT session, start_at, end_at, detail FROM gaps WHERE type = 'damaged'"
    alone = _load(copy, tmp_path)
    expected = rows(alone, damaged)
    alone.close()
    both = db.open_db(str(tmp_path / "both.duckdb"))
    replay(LocalLogSource(recording("pending")), both, source_name="other", prefix="ktrace")
    replay(LocalLogSource(str(copy.root)), both, source_name="copy", prefix="ktrace")
    assert len(expected) == 1 and rows(both, damaged) == expected
    both.close()


def test_damage_to_the_end_is_a_gap_still_open_for_gaps_since(copy, tmp_path):
    """A damaged range after the topic's last readable record ends at the data's end: it is
    still open, so `gaps --since` keeps it whatever the time, even one after the data."""
    block = copy.blocks[-1][-1]
    _flip(copy.segments[-1], (block.position + block.end) // 2, 8)
    _load(copy, tmp_path).close()
    database = str(tmp_path / "damaged.duckdb")

    def gaps(*since: str) -> list[dict]:
        result = CliRunner().invoke(cli, ["gaps", *since, "--db", database, "-o", "json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)
    every = gaps()
    (open_,) = [g for g in every if g["type"] == "damaged"]
    end = CliRunner().invoke(cli, ["query", "SELECT data_end() AS t", "--db", database,
                                   "-o", "json"]).output
    assert open_["end_at"] == json.loads(end)[0]["t"]
    assert gaps("--since", "2030-01-01T00:00:00Z") == [
        g for g in every if g["end_at"] == open_["end_at"]]
