"""The real node's recording of a block volume its kubelet cannot map (tests/data/node/block,
made by its capture.py): a local PersistentVolume of volumeMode Block whose device does not
exist — ktrace's answers against what its EXPECTED.md reads from the raw records
(docs/causes.md names these tests for the rows they show)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb

from replayer.analyses.explain import explain
from tests.replayer_data import recording_fixtures, rows, stuck_by_object

BLOCK = Path(__file__).parent / "data" / "node" / "block"
END = datetime(2026, 12, 7, 20, 50, 33, 238060)  # the recording's last record
MAP_FAILED = ('MapVolume.EvalHostSymlinks failed for volume "block-disk" : lstat /dev/ktrace-missing-disk: '
              "no such file or directory")

db_file, recorded = recording_fixtures(BLOCK / "recording")


def test_the_recording_replays_whole(recorded: duckdb.DuckDBPyConnection) -> None:
    assert rows(recorded, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(recorded, "SELECT count(*), max(received_at) FROM raw_events") == [(161, END)]


def test_a_block_volume_the_kubelet_cannot_map_holds_the_pod(recorded: duckdb.DuckDBPyConnection) -> None:
    """ContainerCreating since its first status, the kubelet's FailedMapVolume (×8, with the
    device it could not find) the cause; nothing else is stuck — the claim and volume are Bound."""
    stuck = stuck_by_object(recorded)
    assert list(stuck) == [("Pod", "rawdisk")]
    found = stuck[("Pod", "rawdisk")]
    assert (found["problem"], str(found["since"]), round(found["stuck_for_s"]), found["top_cause"],
            [c["detail"] for c in found["causes"]]) == (
        "pending", "2026-12-07 20:49:18", 75, "volume_mount",
        [f"FailedMapVolume ×8, 2026-12-07T20:49:18Z – 20:50:21Z: {MAP_FAILED}"])
    (claim,) = explain(recorded, "pvc/disk", namespace="block")
    assert [(s["step"], s["detail"]) for s in claim.timeline if s["step"] == "phase"] == [
        ("phase", "Pending"), ("phase", "Bound")]
