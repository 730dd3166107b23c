"""The real node's recording of what a kubelet configured for it decides (tests/data/node/pressure,
made by its capture.py: maxPods 3, a pid.available threshold crossed on purpose, a node feature
turned off): OutOfpods, the pids eviction and the admission Evicted while PIDPressure held,
evictions for a pod's and a container's own ephemeral-storage limit, PodFeatureUnsupported and
the scheduler's required-features refusal — ktrace's answers against what its EXPECTED.md reads
from the raw records (docs/causes.md names these tests for the rows they show)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb

from replayer.analyses.explain import explain
from replayer.objects import objects_of
from tests.replayer_data import cli_stdout, recording_fixtures, rows, stuck_by_object

PRESSURE = Path(__file__).parent / "data" / "node" / "pressure"
END = datetime(2026, 12, 7, 20, 41, 14, 881933)  # the recording's last record
PIDS_LOW = "The node was low on resource: pids. Threshold quantity: 31269, available: 29204."
PID_PRESSURE = "node real-node-0 PIDPressure=True since 2026-12-07T20:40:19Z"
NO_DISK_PRESSURE = "(node real-node-0 DiskPressure=False since 2026-12-07T20:39:54Z)"
OWN_LIMIT = "its own ephemeral-storage limit, not a shortage of the node"
FEATURE = "RestartAllContainersOnContainerExits"

db_file, recorded = recording_fixtures(PRESSURE / "recording")


def outcomes(con: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    return {name: (problem, cause, detail) for name, problem, cause, detail in rows(con, """
        SELECT r.name, o.problem, o.top_cause, o.causes[1].detail
        FROM pod_outcomes_at(?) o JOIN (SELECT DISTINCT uid, name FROM raw_events) r USING (uid)""", END)}


def test_the_recording_replays_whole(recorded: duckdb.DuckDBPyConnection) -> None:
    assert rows(recorded, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(recorded, "SELECT count(*), max(received_at) FROM raw_events") == [(217, END)]
    kubelet, containerd, runc = (PRESSURE / "versions.txt").read_text().splitlines()
    assert (kubelet, containerd.split()[2], runc) == ("Kubernetes v1.37.2", "1.6.20~ds1", "runc version 1.1.5+ds1")
    # the threshold the messages quote is the one the capture set
    assert (PRESSURE / "pids.txt").read_text().endswith("pid.available < 31269\n")


def test_the_pids_eviction_cites_the_nodes_pressure_when_it_held(recorded: duckdb.DuckDBPyConnection) -> None:
    """`forker` evicted for pids, `latecomer` refused while PIDPressure held: both cite the
    node's condition around the eviction (True since 20:40:19), not its later False."""
    found = outcomes(recorded)
    assert (found["forker"], found["latecomer"]) == (
        ("evicted", "evicted", f"pids — Evicted: {PIDS_LOW} — {PID_PRESSURE}"),
        ("evicted", "evicted", "node_condition — Evicted: Pod was rejected: The node had condition: "
                               f"[PIDPressure]. — {PID_PRESSURE}"))
    (forker,) = explain(recorded, "pod/forker", namespace="pids")
    assert [(s["step"], s["component"], s["detail"]) for s in forker.timeline][-4:] == [
        ("warning", "kubelet", f"Evicted: {PIDS_LOW}"),  # the Event's text, without the kubelet's trailing space
        ("killing", "kubelet", "Stopping container app"),
        ("containers_stopped", "kubelet", "exit 137"),
        ("terminal", "kubelet", "Failed — kubelet (node-pressure eviction)")]


def test_every_message_is_held_trimmed(recorded: duckdb.DuckDBPyConnection) -> None:
    """The kubelet's eviction Event and status end in a space: the typed tables hold each
    message without it (clean_message, the one place), so no output repeats it."""
    evicted = [r[0] for r in rows(recorded, "SELECT event_id FROM k8s_events WHERE reason = 'Evicted'")]
    # the recording holds the kubelet's trailing space
    assert any((e.get("note") or e.get("message")).endswith(". ")
               for e in map(json.loads, objects_of(recorded, evicted).values()))
    assert rows(recorded, """
        SELECT count(*) FROM (SELECT message AS m FROM k8s_events UNION ALL
                              SELECT status_message FROM pods UNION ALL
                              SELECT message FROM containers UNION ALL
                              SELECT last_message FROM containers UNION ALL
                              SELECT message FROM conditions)
        WHERE m <> trim(m, ' ' || chr(9) || chr(10) || chr(13)) OR m = ''""") == [(0,)]


def test_evictions_for_the_pods_own_limits(recorded: duckdb.DuckDBPyConnection) -> None:
    """The pod's total of its containers' limits, then one container's own: the kubelet's
    messages, a limit of the pod's own (the node had no disk pressure); its kill after the
    2 s grace is named as the kubelet's, though no DisruptionTarget says so."""
    found = outcomes(recorded)
    assert (found["podlimit"], found["ctrlimit"]) == (
        ("evicted", "evicted", "limit — Evicted: Pod ephemeral local storage usage exceeds the total limit of "
                               f"containers 8Mi. — {OWN_LIMIT} {NO_DISK_PRESSURE}"),
        ("evicted", "evicted", 'limit — Evicted: Container logger exceeded its local ephemeral storage limit '
                               f'"8Mi". — {OWN_LIMIT} {NO_DISK_PRESSURE}'))
    assert rows(recorded, "SELECT pod, stop_verdict FROM pod_lifecycle WHERE namespace = 'limits' ORDER BY pod") == [
        (pod, "did not exit on SIGTERM; killed when its grace period (2s) ran out after kubelet "
              "(local-storage limit eviction) stopped it (no deletion)") for pod in ("ctrlimit", "podlimit")]


def test_the_kubelet_refuses_past_max_pods_and_for_a_feature_it_lacks(recorded: duckdb.DuckDBPyConnection) -> None:
    found = outcomes(recorded)
    assert (found["overflow"], found["restartall"]) == (
        ("admission", "admission", "OutOfpods: Pod was rejected: Node didn't have enough resource: pods, "
                                   "requested: 1, used: 3, capacity: 3 (on node real-node-0)"),
        ("admission", "admission", "PodFeatureUnsupported: Pod was rejected: Pod requires node features that "
                                   f"are not available: {FEATURE} (on node real-node-0)"))
    # the rest ended or run: nothing here is stuck but the pod no node fits
    assert sorted(found) == ["ctrlimit", "forker", "latecomer", "overflow", "podlimit", "restartall"]
    assert list(stuck_by_object(recorded)) == [("Pod", "restartall-scheduled")]


def test_a_pod_needing_a_feature_no_node_declares_is_unschedulable(recorded: duckdb.DuckDBPyConnection) -> None:
    found = stuck_by_object(recorded)[("Pod", "restartall-scheduled")]
    assert (found["problem"], round(found["stuck_for_s"]), found["top_cause"], found["causes"][0]["detail"]) == (
        "pending", 76, "unschedulable",
        "node_features, node_selector_mismatch — 0/2 nodes are available: 1 node(s) didn't match Pod's node "
        "affinity/selector, 1 node(s) didn't match Pod's required features. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling.; FailedScheduling, 2026-12-07T20:39:59Z")


def test_explain_the_node_tells_its_pressure_and_the_kubelets_reclaim(db_file: str) -> None:
    """The kubelet's Events about its node name it without a uid (EvictionThresholdMet, its
    start-up Events): they are the node's story all the same."""
    (said,) = json.loads(cli_stdout("explain", "node/real-node-0", "--db", db_file, "-o", "json"))
    steps = [(s["time"][11:23], s["step"], s["component"], s["detail"]) for s in said["timeline"]
             if s["time"] > "2026-12-07T20:40"]
    assert steps == [
        ("20:40:19.813", "event", "kubelet", "Warning EvictionThresholdMet: Attempting to reclaim pids"),
        ("20:40:19.990", "event", "kubelet", "NodeHasInsufficientPID: Node real-node-0 status is now: "
                                             "NodeHasInsufficientPID"),
        ("20:40:19.991", "condition", "kubelet", "PIDPressure=True KubeletHasInsufficientPID: kubelet has "
                                                 "insufficient PID available"),
        ("20:40:55.784", "event", "kubelet", "NodeHasSufficientPID: Node real-node-0 status is now: "
                                             "NodeHasSufficientPID"),
        ("20:40:55.786", "condition", "kubelet", "PIDPressure=False KubeletHasSufficientPID: kubelet has "
                                                 "sufficient PID available")]
    assert "Starting: Starting kubelet." in [s["detail"] for s in said["timeline"]]
    # the pressure passed: not stuck, a finding of its stretch with the kubelet's reclaim and
    # the two pods evicted or refused for pids meanwhile (EXPECTED.md "the node", "pids")
    assert not [f for f in said["findings"] if f["topic"] == "stuck"]
    (pressure,) = [f for f in said["findings"] if f["topic"] == "pressure"]
    assert pressure["sentence"] == (
        "PIDPressure=True from 2026-12-07T20:40:19Z to 2026-12-07T20:40:55Z (36s): "
        "KubeletHasInsufficientPID: kubelet has insufficient PID available; the kubelet's "
        'EvictionThresholdMet "Attempting to reclaim pids" at 2026-12-07T20:40:19Z; evicted or '
        "refused for it: pids/latecomer at 2026-12-07T20:40:20.323391Z, pids/forker at "
        "2026-12-07T20:40:22.509422Z.")
    assert pressure["advice"].startswith("a pod starts more processes than the node has free")
    # the versions that raised and cleared it, the kubelet's Event, each pod's first Evicted version
    cited = [dict(line.split(":", 1) for line in cli_stdout("evidence", ev, "--db", db_file).splitlines()
                  if line.startswith(("kind:", "name:", "received_at:")))
             for ev in pressure["evidence"]]
    assert [(c["kind"].strip(), c["name"].strip().split(".")[0], c["received_at"].strip()[11:23])
            for c in cited] == [
        ("Node", "real-node-0", "20:40:19.991"), ("Node", "real-node-0", "20:40:55.786"),
        ("Event", "real-node-0", "20:40:19.813"),  # an Event's name: its object's, a dot, a suffix
        ("Pod", "latecomer", "20:40:20.323"), ("Pod", "forker", "20:40:22.509")]
    table = cli_stdout("explain", "node/real-node-0", "--db", db_file)
    assert "PIDPressure=True from 2026-12-07T20:40:19Z to 2026-12-07T20:40:55Z (36s)" in table


def test_a_node_first_seen_in_a_list_was_created_by_its_registrar(recorded: duckdb.DuckDBPyConnection) -> None:
    """Both nodes are first seen in the recorder's List, whose attribution names the latest
    managedFields entry (kubectl-patch wrote real-node-0's status, kube-controller-manager
    kwok-node-0's podCIDR); `created` names the creator — the kubelet that registered
    real-node-0 (all its entries share one second), the capture's client for kwok-node-0."""
    assert rows(recorded, "SELECT name, component FROM raw_events WHERE kind = 'Node' AND type = 'LISTED' "
                          "ORDER BY name") == [("kwok-node-0", "kube-controller-manager"),
                                               ("real-node-0", "kubectl-patch")]
    for name, creator in (("real-node-0", "kubelet"), ("kwok-node-0", "Python-urllib")):
        (node,) = explain(recorded, f"node/{name}")
        assert [(s["step"], s["component"], s["derived"]) for s in node.timeline[:1]] == [
            ("created", creator, True)], name
