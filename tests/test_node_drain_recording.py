"""The real node's drain recording (tests/data/node/drain, made by its capture.py): a drain
through the Eviction API held by a PodDisruptionBudget, then allowed — ktrace's answers
against what its EXPECTED.md reads from the raw records."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from replayer.analyses.explain import explain
from replayer.analyses.stuck import stuck
from tests.replayer_data import load_recording, rows

DRAIN = Path(__file__).parent / "data" / "node" / "drain"
BLOCKED = datetime(2026, 12, 7, 12, 7, 56)  # the first drain gave up (times.txt)
PASSED = datetime(2026, 12, 7, 12, 8, 7)  # both pods evicted, the node not yet uncordoned
HELD = ("node real-node-0 cordoned (spec.unschedulable; taint node.kubernetes.io/unschedulable:NoSchedule) "
        "since 2026-12-07T12:06:41Z; PodDisruptionBudget drain/web allows 0 disruptions since "
        "2026-12-07T12:06:39Z (minAvailable 2; 2 healthy of 2 needed; 2 expected; DisruptionAllowed=False "
        "InsufficientPods) and covers 2 pod(s) still on it: web-5c7c8b858b-4bx97, web-5c7c8b858b-cgdc7 "
        "— the Eviction API refuses to evict them")


@pytest.fixture(scope="module")
def drained(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    con = load_recording(str(tmp_path_factory.mktemp("drain") / "drain.duckdb"), str(DRAIN / "recording"))
    yield con
    con.close()


def evidence_records(con: duckdb.DuckDBPyConnection, ids: list[int]) -> list[tuple[str, str, str]]:
    return rows(con, "SELECT kind, name, strftime(received_at, '%H:%M:%S') FROM raw_events "
                     "WHERE list_contains(?, event_id) ORDER BY event_id", ids)


def test_the_recording_replays_whole(drained: duckdb.DuckDBPyConnection) -> None:
    assert rows(drained, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(drained, "SELECT count(*) FROM raw_events") == [(268,)]
    kubelet, containerd, runc = (DRAIN / "versions.txt").read_text().splitlines()
    assert (kubelet, containerd.split()[2], runc) == ("Kubernetes v1.37.2", "1.6.20~ds1", "runc version 1.1.5+ds1")
    assert "Cannot evict pod as it would violate the pod's disruption budget." in (DRAIN / "times.txt").read_text()


def test_the_blocked_drain_is_a_finding_of_the_node_and_the_budget(drained: duckdb.DuckDBPyConnection) -> None:
    """What `ktrace stuck --at 12:07:56` lists: the node and the budget holding it, 74.9 s
    since the cordon, the node's and the budget's versions and the pods as evidence."""
    judged = stuck(drained, at=BLOCKED)
    columns, found = judged.rows
    found = [dict(zip(columns, r)) for r in found]
    assert [(r["kind"], r["namespace"], r["name"], r["problem"], str(r["since"]), round(r["stuck_for_s"], 1),
             r["top_cause"], r["causes"][0]["detail"]) for r in found] == [
        ("Node", None, "real-node-0", "drain_blocked", "2026-12-07 12:06:41.064523", 74.9, "drain_blocked", HELD),
        ("PodDisruptionBudget", "drain", "web", "drain_blocked", "2026-12-07 12:06:41.064523", 74.9,
         "drain_blocked", HELD),
    ]
    assert evidence_records(drained, rows(drained, "SELECT causes[1].evidence FROM drain_blocked_at(?) LIMIT 1",
                                          BLOCKED)[0][0]) == [
        ("Node", "real-node-0", "12:07:51"),  # the node's version current at 12:07:56
        ("PodDisruptionBudget", "web", "12:06:40"),  # 2 healthy of 2 needed
        ("Pod", "web-5c7c8b858b-cgdc7", "12:06:53"),
        ("Pod", "web-5c7c8b858b-4bx97", "12:06:55"),
    ]
    # 49 s into it: under the threshold; after the second drain: no pod left on the node
    assert rows(drained, "SELECT count(*) FROM problems_at('2026-12-07 12:07:30'::TIMESTAMP)") == [(0,)]
    assert rows(drained, "SELECT count(*) FROM drain_blocked_at(?, threshold_s := 0)", PASSED) == [(0,)]
    advice = rows(drained, "SELECT finding_advice('drain_blocked', ?)", HELD)[0][0]
    assert advice.startswith("the budget named above needs more healthy pods than it would keep")


EVICTED = ("eviction_api — DisruptionTarget EvictionByEvictionAPI: Eviction API: evicting — PodDisruptionBudget "
           "drain/web allowed it (the pod in its disruptedPods; then 0 more allowed, 2 healthy, 1 needed) — node "
           "real-node-0 cordoned (spec.unschedulable): a drain")


def test_evicted_pods_name_the_eviction_api_and_the_budget(drained: duckdb.DuckDBPyConnection) -> None:
    found = rows(drained, "SELECT name, problem, strftime(since, '%H:%M:%S'), causes[1].detail, causes[1].evidence "
                          "FROM pod_outcomes_at((SELECT max(received_at) FROM raw_events)) ORDER BY name")
    assert [r[:4] for r in found] == [
        ("web-5c7c8b858b-4bx97", "evicted", "12:07:59", EVICTED),
        ("web-5c7c8b858b-cgdc7", "evicted", "12:08:04", EVICTED),
    ]
    # the Node version before the eviction, the budget version naming the pod, the pod's
    assert evidence_records(drained, found[0][4]) == [
        ("Node", "real-node-0", "12:07:56"), ("PodDisruptionBudget", "web", "12:07:59"),
        ("Pod", "web-5c7c8b858b-4bx97", "12:07:59")]
    assert not [r for r in stuck(drained).rows[1]]  # finished: nothing is stuck at the end
    (story,) = explain(drained, "pod/web-5c7c8b858b-4bx97", namespace="drain")
    (outcome,) = [f for f in story.findings if f.topic == "outcome"]
    when, _, said = outcome.sentence.partition(": evicted — ")
    assert when.startswith("Evicted at 2026-12-07") and "12:07:59" in when  # as the time formatter writes it
    assert said == EVICTED
    assert outcome.advice.startswith("a planned disruption (kubectl drain, an autoscaler, a descheduler)")
    requested = [s for s in story.timeline if s["step"] == "deletion_requested"]
    assert [s["component"] for s in requested] == ["eviction API"]


def test_without_budgets_a_cordoned_node_with_pods_left_is_unknown(tmp_path: Path) -> None:
    """The same recording without its PodDisruptionBudget topic (a recorder not told to
    watch them): the refusals wrote nothing, so whether a budget holds the drain is unknown."""
    shutil.copytree(DRAIN / "recording", tmp_path / "recording",
                    ignore=shutil.ignore_patterns("ktrace.poddisruptionbudgets"))
    con = load_recording(str(tmp_path / "nobudgets.duckdb"), str(tmp_path / "recording"))
    assert rows(con, "SELECT kind, name, top_cause, causes[1].detail FROM drain_blocked_at(?)", BLOCKED) == [
        ("Node", "real-node-0", "unknown",
         "node real-node-0 cordoned since 2026-12-07T12:06:41Z with 2 pod(s) still on it: web-5c7c8b858b-4bx97, "
         "web-5c7c8b858b-cgdc7; PodDisruptionBudgets were not recorded: whether one blocks its drain is unknown"),
    ]
    details = rows(con, "SELECT causes[1].detail FROM pod_outcomes_at((SELECT max(received_at) FROM raw_events))")
    assert {d for (d,) in details} == {
        "eviction_api — DisruptionTarget EvictionByEvictionAPI: Eviction API: evicting — PodDisruptionBudgets: "
        "not recorded — node real-node-0 cordoned (spec.unschedulable): a drain"}
    con.close()


def test_explain_tells_the_drain_held_then_passed(drained: duckdb.DuckDBPyConnection) -> None:
    """At the end nothing is stuck, but the node's and the budget's stories keep the drain the
    budget held for 78 s (the cordon until the relaxed budget's status) and when it got
    through: each pod's eviction, the last one's the drain's passing."""
    sentence = ("Drain held for 1m18s (2026-12-07T12:06:41.064523Z – 2026-12-07T12:07:59.394276Z): drain_blocked — "
                + HELD + ". Then allowed; the drain passed at 2026-12-07T12:08:04.678709Z (every pod it held "
                "evicted: web-5c7c8b858b-4bx97 at 2026-12-07T12:07:59.657421Z, web-5c7c8b858b-cgdc7 at "
                "2026-12-07T12:08:04.678709Z).")
    for target, namespace in (("node/real-node-0", None), ("pdb/web", "drain")):
        (story,) = explain(drained, target, namespace=namespace)
        (drain,) = [f for f in story.findings if f.topic == "drain"]
        assert drain.sentence == sentence
        assert not [f for f in story.findings if f.topic == "stuck"]
        assert evidence_records(drained, rows(drained, "SELECT evidence FROM drain_holds_of(?)",
                                              [story.uid])[0][0]) == [
            ("Node", "real-node-0", "12:06:41"),  # the cordon
            ("PodDisruptionBudget", "web", "12:06:40"),  # 2 healthy of 2 needed
            ("Pod", "web-5c7c8b858b-cgdc7", "12:06:40"),  # both Running and Ready then
            ("Pod", "web-5c7c8b858b-4bx97", "12:06:40"),
        ]
    # the moments a replacement pod is awaited (under a second each) are no held drain
    assert rows(drained, "SELECT count(*) FROM drain_holds_of(?, threshold_s := 0)", [story.uid]) == [(3,)]
