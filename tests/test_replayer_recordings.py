"""Issue 8's recordings of the real control plane (tests/data/replayer/capture_pending.py)
replay with the current replayer: every record decodes. What they show is in each
recording's EXPECTED.md; the analyses' tests assert it."""

from __future__ import annotations

import pytest

from tests.replayer_data import DATA, load_recording, recording, rows

RECORDINGS = ("pending", "midlife", "crashed", "edge")


@pytest.mark.parametrize("name", RECORDINGS)
def test_recording_replays_without_decode_problems(name: str, tmp_path) -> None:
    con = load_recording(str(tmp_path / f"{name}.duckdb"), recording(name))
    problems = dict(rows(con, "SELECT problem, count(*) FROM load_problems GROUP BY ALL"))
    duplicates = problems.pop("duplicate", 0)
    assert problems == {}
    assert rows(con, "SELECT count(*) > 100 FROM raw_events") == [(True,)]
    # Only the crashed recording re-sends what its killed session had not checkpointed.
    assert (duplicates > 0) == (name == "crashed")
    assert (DATA / name / "EXPECTED.md").is_file()
