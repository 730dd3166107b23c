"""The real node's recording (tests/data/node/scenarios, made by tests/data/node/capture.py):
ktrace's answers against what its EXPECTED.md reads from the raw records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.replayer_data import load_recording, rows

SCENARIOS = Path(__file__).parent / "data" / "node" / "scenarios"


@pytest.fixture(scope="module")
def node_recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    path = tmp_path_factory.mktemp("node") / "node.duckdb"
    con = load_recording(str(path), str(SCENARIOS / "recording"))
    yield con
    con.close()


def test_the_recording_replays_whole(node_recorded: duckdb.DuckDBPyConnection) -> None:
    assert rows(node_recorded, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(node_recorded, "SELECT count(*) FROM raw_events") == [(850,)]
    kubelet, containerd, runc = (SCENARIOS / "versions.txt").read_text().splitlines()
    assert (kubelet, containerd.split()[2], runc) == ("Kubernetes v1.37.2", "1.6.20~ds1", "runc version 1.1.5+ds1")


def test_real_rollout_races(node_recorded: duckdb.DuckDBPyConnection) -> None:
    """Without a preStop the kubelet stopped one old server ~1 s before its endpoint left the
    slice, the other in the same second; with a 3 s preStop the endpoints went first."""
    assert rows(node_recorded, """
        SELECT namespace, verdict, off_state, round(exposed_s, 1) FROM races ORDER BY namespace, exposed_s DESC""") == [
        ("prestop", "ok", "serving", -2.4),
        ("prestop", "ok", "serving", -3.2),
        ("race", "stopped_before_endpoint_off", "absent", 1.0),
        ("race", "within_margin", "serving", -0.2),
    ]


def test_sigterm_ignored_means_sigkill_at_the_deadline(node_recorded: duckdb.DuckDBPyConnection) -> None:
    steps = dict(rows(node_recorded, """
        SELECT step, detail FROM pod_transitions WHERE namespace = 'sigterm' AND pod = 'stubborn'
          AND step IN ('deletion_requested', 'containers_stopped')"""))
    assert steps["containers_stopped"] == "exit 137"
    assert steps["deletion_requested"].startswith("grace 3s")
    (took,) = rows(node_recorded, """
        SELECT epoch(max(time) FILTER (WHERE step = 'containers_stopped')
                     - max(time) FILTER (WHERE step = 'deletion_requested'))
        FROM pod_transitions WHERE namespace = 'sigterm' AND pod = 'stubborn'""")[0]
    assert 3 <= took <= 5
