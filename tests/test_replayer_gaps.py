"""Gaps on recordings of the real control plane: GAP records, lost and ended sessions,
sequence holes, slow steps."""

from __future__ import annotations

import shutil
from pathlib import Path

from replayer import db
from replayer.replay import replay
from transports.locallog.source import LocalLogSource
from tests.replayer_data import recording, rows

TOPICS = ["daemonsets", "deployments", "endpointslices", "events", "jobs", "leases",
          "namespaces", "nodes", "persistentvolumeclaims", "persistentvolumes", "pods",
          "replicasets", "statefulsets", "volumeattachments"]


def test_recorder_crash_and_relist(recorded):
    found = rows(recorded, "SELECT category, type, topic FROM gaps ORDER BY category, type, topic")
    assert found == (
        [("unknown", "stopped_to_deleted", None)]
        + [("unseen", "gap_marker", f"ktrace.{t}") for t in TOPICS]
        + [("unseen", "session_lost", None)])


def test_gap_markers_span_the_outage(recorded):
    for detail, end in rows(recorded, "SELECT detail, end_at FROM gaps WHERE type = 'gap_marker'"):
        assert detail.startswith("410 Gone: ")
        assert end.isoformat().startswith("2026-11-30T07:12:52")


def test_a_delay_during_the_recorders_downtime_is_unknown_not_slow(recorded):
    """missed's finalizer was released while the recorder was down: its 38 s between
    containers stopped and deleted overlaps the unseen stretch, so it is no verdict on the
    cluster."""
    assert rows(recorded, "SELECT count(*) FROM gaps WHERE category = 'slow'") == [(0,)]
    found = rows(recorded, "SELECT namespace, name, threshold_s, seconds > 30, detail, "
                           "  evidence_event_id IS NOT NULL FROM gaps WHERE category = 'unknown'")
    assert [r[:4] + (r[5],) for r in found] == [("gap", "missed", 10.0, True, True)]
    assert found[0][4].startswith("unknown (recording gap): the recording did not see 410 Gone")


def test_run_to_watch_is_judged_by_the_kubelets_part_when_the_status_write_time_is_known(recorded):
    """The running status's managedFields time splits run → watch: the kubelet's part
    (run_to_api) is judged; the rest is how late the recording saw it, never the cluster's."""
    split = rows(recorded, "SELECT count(*) FROM pod_lifecycle "
                           "WHERE status_written_at IS NOT NULL AND run_to_watch_s > 0 "
                           "AND NOT list_contains(derived_steps, 'running')")[0][0]
    assert split > 5
    every_run = rows(recorded, "SELECT count(*) FROM gaps_with(['run_to_api_s'], [-1.0]) "
                               "WHERE type = 'run_to_api'")[0][0]
    assert every_run >= split
    # each verdict's evidence is the record that showed the pod running
    assert rows(recorded, "SELECT count(*) FROM gaps_with(['run_to_api_s'], [-1.0]) g "
                          "JOIN pod_transitions p ON p.uid = g.uid AND p.step = 'running' "
                          "AND p.evidence_event_id = g.evidence_event_id "
                          "WHERE g.type = 'run_to_api'") == [(every_run,)]
    assert rows(recorded, "SELECT count(*) FROM gaps_with(['run_to_watch_s'], [0.0]) "
                          "WHERE type = 'run_to_watch'") == [(0,)]


def test_session_gap_between_a_clean_stop_and_the_next_start(tmp_path: Path):
    con = db.open_db(str(tmp_path / "two.duckdb"))
    for scenario in ("evicted", "scenarios"):
        replay(LocalLogSource(recording(scenario)), con, source_name=scenario, prefix="ktrace")
    # Both recordings use the same topic names, and load positions are kept per (topic,
    # partition) today, so the second load skips what lies below the first one's offsets:
    # some topics then stop early, each with its own stretch. What holds whatever is kept:
    # a clean stop is a session_gap, a crash a session_lost, each a stretch forward in time.
    found = rows(con, "SELECT type, bool_and(start_at < end_at) FROM gaps "
                      "WHERE category = 'unseen' AND type LIKE 'session%' "
                      "GROUP BY type ORDER BY min(start_at)")
    assert found == [("session_gap", True), ("session_lost", True)]


def _corrupt_middle_block(topic_dir: Path) -> None:
    segment = sorted(topic_dir.glob("*.avro"))[0]
    data = bytearray(segment.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 8] = bytes(b ^ 0xFF for b in data[middle:middle + 8])
    segment.write_bytes(bytes(data))


def test_sequence_hole_where_records_were_lost(tmp_path: Path):
    copy = tmp_path / "recording"
    shutil.copytree(recording("scenarios"), copy)
    _corrupt_middle_block(copy / "ktrace.pods")
    con = db.open_db(str(tmp_path / "holes.duckdb"))
    summary = replay(LocalLogSource(str(copy)), con, source_name="copy", prefix="ktrace")
    assert summary.stats.problems["unreadable"] == 1
    holes = rows(con, "SELECT topic, detail FROM gaps WHERE type = 'sequence_hole'")
    assert [t for t, _ in holes] == ["ktrace.pods"]
    assert "records missing" in holes[0][1]
    assert rows(con, "SELECT count(*) FROM load_problems WHERE problem = 'unreadable' "
                     "AND topic = 'ktrace.pods'")[0][0] >= 1
    con.close()
