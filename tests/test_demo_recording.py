"""The demo recording (replayer/demo/recording, the real node's run of
tests/data/node/demo/capture.py): ktrace's answers against what its EXPECTED.md reads from
the raw records — the races pod by pod against the kubelet's own container states and the
EndpointSlice records, each stuck object's cause, the nodes and the relist."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from ktrace.commands.replay import demo_recording
from tests.replayer_data import load_recording, rows

CAPTURE = Path(__file__).parent / "data" / "node" / "demo"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    con = load_recording(str(path), demo_recording(), store_objects=True)
    yield con
    con.close()


def versions(con: duckdb.DuckDBPyConnection, kind: str, namespace: str) -> list[tuple[datetime, str, dict]]:
    """Every recorded version of a kind in a namespace: (received_at, name, object), in order."""
    return [(at, name, json.loads(obj)) for at, name, obj in rows(con, """
        SELECT received_at, name, object FROM raw_events
        WHERE kind = ? AND namespace = ? AND object IS NOT NULL ORDER BY rv""", kind, namespace)]


def test_the_recording_replays_whole(demo: duckdb.DuckDBPyConnection) -> None:
    assert rows(demo, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(demo, "SELECT count(*), count(DISTINCT session) FROM raw_events") == [(708, 2)]
    kubelet, containerd, runc = (CAPTURE / "versions.txt").read_text().splitlines()
    assert (kubelet, containerd.split()[2], runc) == ("Kubernetes v1.37.2", "1.6.20~ds1", "runc version 1.1.5+ds1")
    # every workload pod but the lost nodes' ran on the real node
    assert rows(demo, """
        SELECT DISTINCT p.node_name FROM pods p JOIN raw_events r USING (event_id)
        WHERE r.namespace IN ('race', 'graceful', 'hold', 'fg', 'gap') AND p.node_name IS NOT NULL""") == [
        ("real-node-0",)]


def kubelet_view(con: duckdb.DuckDBPyConnection, namespace: str) -> dict[str, dict]:
    """For each old pod of the rollout, from the raw Pod and EndpointSlice versions: when its
    deletion was requested, when the kubelet reported its container terminated (and the
    finishedAt it wrote), and when its endpoint first went off (not ready, or gone) after
    being ready."""
    pods: dict[str, dict] = {}
    for at, name, pod in versions(con, "Pod", namespace):
        if pod["metadata"].get("deletionTimestamp") is None:
            continue
        seen = pods.setdefault(name, {"requested": at})
        state = pod["status"]["containerStatuses"][0]["state"]
        if "terminated" in state and "stopped" not in seen:
            seen["stopped"], seen["finished_at"] = at, state["terminated"]["finishedAt"]
            seen["exit"] = state["terminated"]["exitCode"]
    ready: set[str] = set()
    for at, _, slice_ in versions(con, "EndpointSlice", namespace):
        conditions = {e["targetRef"]["name"]: e["conditions"] for e in slice_.get("endpoints") or []}
        ready |= {name for name, c in conditions.items() if c.get("ready")}
        for name in ready & pods.keys():
            if "off" not in pods[name] and not conditions.get(name, {}).get("ready"):
                pods[name]["off"] = at
                pods[name]["off_state"] = "serving" if conditions.get(name, {}).get("serving") else "absent"
    return pods


@pytest.mark.parametrize("namespace", ["race", "graceful"])
def test_races_agree_with_the_kubelet_and_the_endpointslices_pod_by_pod(
        demo: duckdb.DuckDBPyConnection, namespace: str) -> None:
    truth = kubelet_view(demo, namespace)
    races = rows(demo, """
        SELECT pod, deletion_requested_at, containers_stopped_at, endpoint_off_at, off_state, exposed_s, verdict
        FROM races WHERE namespace = ? ORDER BY pod""", namespace)
    assert [r[0] for r in races] == sorted(truth)
    for pod, requested, stopped, off, off_state, exposed, verdict in races:
        seen = truth[pod]
        assert (requested, stopped, off, off_state) == (seen["requested"], seen["stopped"], seen["off"],
                                                        seen["off_state"]), pod
        assert seen["exit"] == 0  # the server stopped on SIGTERM, as told
        # finishedAt has whole seconds: the kubelet wrote it before reporting it
        assert datetime.fromisoformat(seen["finished_at"].rstrip("Z")) <= stopped, pod
        assert exposed == pytest.approx((off - stopped).total_seconds())
        assert verdict == ("stopped_before_endpoint_off" if stopped < off else "ok")


def test_the_rollouts_verdicts_as_expected_md_reads_them(demo: duckdb.DuckDBPyConnection) -> None:
    assert rows(demo, "SELECT namespace, pod, off_state, round(exposed_s, 1), verdict FROM races ORDER BY 1, 2") == [
        ("graceful", "web-557cfc6f59-bx2gz", "serving", -3.8, "ok"),
        ("graceful", "web-557cfc6f59-pv5ww", "serving", -2.4, "ok"),
        ("race", "web-67f56bfc69-nb8v8", "absent", 1.6, "stopped_before_endpoint_off"),
        ("race", "web-67f56bfc69-pq5n4", "absent", 0.8, "stopped_before_endpoint_off"),
    ]
    # a 3 s preStop would have covered both: ceil(p99 of request → endpoint off, < 2 s, + 1 s)
    assert rows(demo, "SELECT stopped_before_endpoint_off, suggested_prestop_s FROM race_summary_with(1)") == [(2, 3)]


def test_every_kubelet_killing_event_comes_between_request_and_stop(demo: duckdb.DuckDBPyConnection) -> None:
    truth = {**kubelet_view(demo, "race"), **kubelet_view(demo, "graceful")}
    killings = {e["regarding"]["name"]: at for ns in ("race", "graceful")
                for at, _, e in versions(demo, "Event", ns) if e["reason"] == "Killing"}
    assert killings.keys() == truth.keys()
    for pod, at in killings.items():
        assert truth[pod]["requested"] <= at <= truth[pod]["stopped"], pod


# What EXPECTED.md reads for each object still stuck at the end: its causes, ktrace's order.
EXPECTED_STUCK = [
    ("Deployment", "fg", "fg", ["foreground_dependents"]),
    ("Namespace", None, "doomed", ["namespace_content"]),
    ("Pod", "fg", "fg-598c44bb88-xqf5n", ["finalizers"]),
    ("Pod", "hold", "busy", ["containers_not_exiting"]),
    ("Pod", "hold", "held", ["finalizers"]),
    # the kill failed; the declared hook comes second: without a FailedPreStopHook Event it
    # holds nothing past the deadline (+2 s)
    ("Pod", "hold", "hooked", ["containers_not_exiting", "prestop_hook"]),
    ("Pod", "lost", "victim", ["node_not_ready", "containers_not_exiting"]),
    ("ReplicaSet", "fg", "fg-598c44bb88", ["foreground_dependents"]),
]


def test_stuck_at_the_end_with_each_cause(demo: duckdb.DuckDBPyConnection) -> None:
    assert rows(demo, """
        SELECT kind, namespace, name, [c.cause FOR c IN causes] FROM stuck_deletions ORDER BY 1, 2, 3""") == [
        (kind, ns, name, causes) for kind, ns, name, causes in EXPECTED_STUCK]


def test_the_unkillable_pods_containers_run_to_the_end(demo: duckdb.DuckDBPyConnection) -> None:
    """busy and hooked: deleted with grace 5 s, the kubelet's Killing, then running in every
    record; no FailedKillPod nor FailedPreStopHook recorded (the kubelet's runtime call was
    still waiting for its 2 min timeout)."""
    last = {name: pod for _, name, pod in versions(demo, "Pod", "hold")}
    for name in ("busy", "hooked"):
        assert last[name]["metadata"]["deletionGracePeriodSeconds"] == 5
        assert "running" in last[name]["status"]["containerStatuses"][0]["state"], name
    reasons = {(e["regarding"]["name"], e["reason"]) for _, _, e in versions(demo, "Event", "hold")}
    assert {("busy", "Killing"), ("hooked", "Killing")} <= reasons
    assert not {r for r in reasons if r[1] in ("FailedKillPod", "FailedPreStopHook", "ExceededGracePeriod")}
    advice = rows(demo, "SELECT finding_advice('containers_not_exiting', '')")[0][0]
    assert advice.startswith("the kubelet kills containers at the deadline (SIGKILL), so these were not killed")


def test_the_orphan_of_the_deleted_node_is_force_deleted_by_the_pod_gc(demo: duckdb.DuckDBPyConnection) -> None:
    node_deleted = rows(demo, "SELECT received_at FROM raw_events WHERE kind = 'Node' AND name = 'kwok-node-1' "
                              "AND type = 'DELETED'")[0][0]
    *_, (failed_at, _, failed), (gone_at, _, gone) = versions(demo, "Pod", "gone")
    assert failed["status"]["phase"] == "Failed" and gone["metadata"]["deletionGracePeriodSeconds"] == 0
    assert 60 < (gone_at - node_deleted).total_seconds() < 75  # PodGC's 40 s quarantine, then its 20 s period
    assert rows(demo, "SELECT type FROM raw_events WHERE kind = 'Pod' AND namespace = 'gone' ORDER BY rv DESC LIMIT 1"
                ) == [("DELETED",)]


def test_the_recorder_crash_is_a_lost_session_and_a_relist(demo: duckdb.DuckDBPyConnection) -> None:
    assert rows(demo, "SELECT type, count(*) FROM markers WHERE type IN ('RELIST', 'GAP') GROUP BY 1 ORDER BY 1") == [
        ("GAP", 17), ("RELIST", 17)]
    assert rows(demo, "SELECT type, name, count(*) FROM gaps GROUP BY ALL ORDER BY 1") == [
        ("gap_marker", None, 17),  # one per kind's topic
        ("request_to_deleted", "orphan", 1),  # its deletion overlaps what the recorder missed
        ("session_lost", None, 1),
        ("stopped_to_deleted", "missed", 1)]
    assert rows(demo, "SELECT kind, namespace, name FROM raw_events WHERE type = 'INFERRED_DELETED'") == [
        ("Pod", "gap", "missed")]
    # ghost lived and died while the recorder was down: only its Events, listed at the relist
    assert rows(demo, "SELECT count(*) FROM raw_events WHERE kind = 'Pod' AND name = 'ghost'") == [(0,)]
    assert sorted(e["reason"] for _, _, e in versions(demo, "Event", "gap") if e["regarding"]["name"] == "ghost") == [
        "Created", "Killing", "Pulled", "Scheduled", "Started"]


def test_a_pod_known_only_by_its_events_keeps_its_name(demo: duckdb.DuckDBPyConnection) -> None:
    """ghost's kubelet Events name it (gap/ghost): its steps are told under that name."""
    assert rows(demo, """
        SELECT DISTINCT namespace, pod FROM pod_transitions
        WHERE uid = (SELECT DISTINCT regarding_uid FROM k8s_events WHERE regarding_name = 'ghost')""") == [
        ("gap", "ghost")]
    assert rows(demo, "SELECT count(*) FROM pod_transitions WHERE namespace IS NULL OR pod IS NULL") == [(0,)]
