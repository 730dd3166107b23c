"""Checkpoints as a snapshot plus a journal: a save costs what changed, not the known map."""

from __future__ import annotations

from pathlib import Path

from recorder import checkpoint as cp
from recorder.checkpoint import Checkpoint, CheckpointStore

KEY = "pods.core._all"


def store_at(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(str(tmp_path), "c|https://x|kafka:b/p")


def test_saves_after_the_first_append_only_what_changed(tmp_path: Path) -> None:
    store, point = store_at(tmp_path), Checkpoint()
    for i in range(1000):
        point.put(f"u{i}", str(i), "ns", f"p{i}")
    point.resource_version = "1000"
    store.save(KEY, point)  # the first save of a process: a snapshot
    snapshot = (tmp_path / f"{KEY}.checkpoint.json").read_bytes()
    point.put("u1", "1001", "ns", "p1")
    assert point.pop("u2") == ["2", "ns", "p2"]
    point.resource_version = "1002"
    store.save(KEY, point)
    journal = (tmp_path / f"{KEY}.journal.jsonl").read_bytes()
    assert (tmp_path / f"{KEY}.checkpoint.json").read_bytes() == snapshot  # not rewritten
    assert journal.count(b"\n") == 1 and len(journal) < 200
    loaded = store_at(tmp_path).load(KEY)
    assert loaded == point and loaded.known["u1"][0] == "1001" and "u2" not in loaded.known


def test_a_torn_last_line_is_the_save_that_did_not_happen(tmp_path: Path) -> None:
    store, point = store_at(tmp_path), Checkpoint("1", 1, {})
    store.save(KEY, point)
    point.put("a", "2", "ns", "a")
    point.resource_version = "2"
    store.save(KEY, point)
    with open(tmp_path / f"{KEY}.journal.jsonl", "ab") as fh:
        fh.write(b'{"generation": 1, "resourceVersion": "3", "chan')
    loaded = store_at(tmp_path).load(KEY)
    assert loaded == Checkpoint("2", 1, {"a": ["2", "ns", "a"]})


def test_the_journal_is_folded_into_a_snapshot_and_old_lines_are_never_replayed(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cp, "COMPACT_MIN_BYTES", 300)
    store, point = store_at(tmp_path), Checkpoint("0", 0, {})
    store.save(KEY, point)
    for i in range(1, 40):
        point.put(f"u{i}", str(i), "ns", "n")
        point.pop(f"u{i - 1}")
        point.resource_version = str(i)
        store.save(KEY, point)
    journal = tmp_path / f"{KEY}.journal.jsonl"
    assert journal.stat().st_size <= 300 + 200  # compacted along the way
    stale = b'{"generation": 0, "resourceVersion": "7", "lastSeenAt": 0, "changes": {"u7": ["7", "ns", "n"]}}\n'
    with open(journal, "ab") as fh:
        fh.write(stale)  # a line of an older snapshot (a crash between snapshot and truncate)
    loaded = store_at(tmp_path).load(KEY)
    assert loaded == Checkpoint("39", 0, {"u39": ["39", "ns", "n"]})
