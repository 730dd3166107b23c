"""Stuck deletions on recordings of the real control plane: every cause it can produce."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from replayer.analyses.stuck import stuck
from tests.replayer_data import captures, load_captures, rows

END_ROWS = [
    ("Deployment", "fg", "fg", "foreground_dependents", ["foreground_dependents"]),
    ("Namespace", None, "doomed", "namespace_content", ["namespace_content"]),
    ("Pod", "fg", "fg-5d9655cdbf-6s4c9", "finalizers", ["finalizers"]),
    ("Pod", "hold", "busy", "containers_not_exiting", ["containers_not_exiting"]),
    ("Pod", "hold", "held", "finalizers", ["finalizers"]),
    ("Pod", "hold", "hooked", "containers_not_exiting", ["containers_not_exiting", "prestop_hook"]),
    ("Pod", "lost", "victim", "node_not_ready", ["node_not_ready", "containers_not_exiting"]),
    ("ReplicaSet", "fg", "fg-5d9655cdbf", "foreground_dependents", ["foreground_dependents"]),
]
SQL = ("SELECT kind, namespace, name, top_cause, [c.cause FOR c IN causes] "
       "FROM stuck_at(?::TIMESTAMP, margin_s := 30) ORDER BY kind, namespace, name")
# While the recorder was down (killed at 07:12:24, relisted at 07:12:52).
IN_GAP = datetime(2026, 11, 30, 7, 12, 50)


def test_stuck_at_the_end_of_the_recording(recorded):
    found = rows(recorded, "SELECT kind, namespace, name, top_cause, [c.cause FOR c IN causes] "
                           "FROM stuck_deletions ORDER BY kind, namespace, name")
    assert found == END_ROWS


def test_stuck_details_name_the_evidence(recorded):
    details = dict(rows(recorded, "SELECT name, causes[1].detail FROM stuck_deletions"))
    assert details["fg"] == ("foreground deletion waits on Deployment/fg → ReplicaSet/fg-5d9655cdbf"
                             " → Pod/fg-5d9655cdbf-6s4c9 (finalizers example.com/hold)")
    assert details["fg-5d9655cdbf-6s4c9"] == (
        "waiting for finalizers example.com/hold (added by kubectl-patch)")
    assert details["held"] == (
        "waiting for finalizers example.com/hold (added by kubectl-client-side-apply)")
    assert details["victim"] == ("node kwok-node-2 Ready=Unknown since 2026-11-30T07:12:01Z "
                                 "(NodeStatusUnknown: Kubelet stopped posting node status.); Lease last "
                                 "renewed 2026-11-30T07:11:49Z")
    assert details["doomed"].startswith("NamespaceContentRemaining: Some resources are remaining")
    assert "NamespaceFinalizersRemaining" in details["doomed"]


def test_evidence_records_exist_and_belong_to_the_object(recorded):
    for uid, evidence in rows(recorded, "SELECT uid, flatten([c.evidence FOR c IN causes]) "
                                        "FROM stuck_deletions WHERE kind = 'Pod'"):
        kinds = rows(recorded, "SELECT DISTINCT kind FROM raw_events "
                               "WHERE list_contains(?, event_id)", evidence)
        assert kinds and {k for (k,) in kinds} <= {"Pod", "Node", "Lease", "Event"}, uid


def test_inside_a_recording_gap_more_is_stuck_and_the_gap_is_a_cause(recorded):
    found = {(k, ns, n): (top, causes) for k, ns, n, top, causes in rows(recorded, SQL, IN_GAP)}
    assert found[("Pod", "gone", "orphan")] == (
        "node_deleted", ["node_deleted", "containers_not_exiting", "recording_gap"])
    assert found[("Pod", "gap", "missed")] == ("finalizers", ["finalizers", "recording_gap"])
    assert all("recording_gap" in causes for _, causes in found.values())
    assert len(found) == 10


def test_a_pod_inside_its_grace_period_is_not_stuck(recorded):
    # victim: deletion requested 07:12:05 with grace 5 s, so its deadline is 07:12:10.
    names = [r[2] for r in rows(recorded, "SELECT * FROM stuck_at(?::TIMESTAMP, margin_s := 0)"
                                          " WHERE name = 'victim'", datetime(2026, 11, 30, 7, 12, 9))]
    assert names == []
    names = [r[2] for r in rows(recorded, "SELECT * FROM stuck_at(?::TIMESTAMP, margin_s := 0)"
                                          " WHERE name = 'victim'", datetime(2026, 11, 30, 7, 12, 11))]
    assert names == ["victim"]


def test_imported_captures_find_the_same_causes(imported):
    found = rows(imported, "SELECT kind, namespace, name, top_cause FROM stuck_deletions "
                           "ORDER BY kind, namespace, name")
    # kubectl also watched ConfigMaps: the one holding the namespace shows up itself.
    assert found == sorted([r[:4] for r in END_ROWS] + [("ConfigMap", "doomed", "keep", "finalizers")],
                           key=lambda r: (r[0], r[1] or "", r[2]))


def test_finalizer_versions_are_the_versions_that_carry_finalizers(recorded):
    # what stuck_finalizers reads instead of every version of the recording
    columns = "uid, event_id, version_no, received_at, finalizers"
    kept = rows(recorded, f"SELECT {columns} FROM finalizer_versions ORDER BY event_id")
    assert kept == rows(recorded, f"SELECT {columns} FROM object_versions "
                                  "WHERE len(finalizers) > 0 ORDER BY event_id")
    assert {name for (name,) in rows(recorded, "SELECT DISTINCT o.name FROM finalizer_versions f "
                                               "JOIN object_versions o USING (event_id)")} >= {
        "held", "fg", "fg-5d9655cdbf-6s4c9"}


def test_stuck_plans_lightly_and_leaves_the_connection_as_it_was(recorded):
    recorded.execute("SET disabled_optimizers = 'top_n'")
    try:
        judged = stuck(recorded)
        assert rows(recorded, "SELECT current_setting('disabled_optimizers')") == [("top_n",)]
    finally:
        recorded.execute("RESET disabled_optimizers")
    assert {(r[0], r[1], r[2]) for r in judged.rows[1] if r[4] == "terminating"} >= {
        (kind, namespace, name) for kind, namespace, name, _, _ in END_ROWS}


def test_events_that_name_their_object_without_a_uid_are_still_its_evidence(imported, tmp_path):
    """Imports often carry Events whose involvedObject has no uid: the stuck object's Events
    are matched by kind, namespace and name then, and the causes and their evidence stay."""
    stripped = tmp_path / "kubectl"
    stripped.mkdir()
    for path in map(Path, captures("scenarios")):
        lines = path.read_text(encoding="utf-8").splitlines()
        if path.name == "events.json":
            lines = [json.dumps(_without_involved_uid(json.loads(line))) for line in lines]
        (stripped / path.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    sql = ("SELECT kind, namespace, name, [(c.cause, c.detail, len(c.evidence)) FOR c IN causes] "
           "FROM stuck_deletions ORDER BY kind, namespace, name")
    with_uids = rows(imported, sql)
    assert any(n > 1 for *_, causes in with_uids for _, _, n in causes)  # Events are evidence here
    without = load_captures(str(tmp_path / "stripped.duckdb"), sorted(map(str, stripped.iterdir())))
    try:
        assert rows(without, "SELECT count(*) FROM k8s_events WHERE coalesce(regarding_uid, '') <> ''") == [(0,)]
        assert rows(without, sql) == with_uids
    finally:
        without.close()


def _without_involved_uid(record: dict) -> dict:
    record["object"].get("involvedObject", {}).pop("uid", None)
    return record
