"""The real node's recording of the kubelet's graceful node shutdown and of a pod-level
memory eviction (tests/data/node/shutdown, made by its capture.py: the operating system's
PrepareForShutdown from the logind stand-in of tests/infra/logind.py; pods left 1 GiB of
memory) — ktrace's answers against what its EXPECTED.md reads from the raw records
(docs/causes.md names these tests for the rows they show)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb

from tests.replayer_data import cli_stdout, recording_fixtures, rows, stuck_by_object

SHUTDOWN = Path(__file__).parent / "data" / "node" / "shutdown"
END = datetime(2026, 12, 7, 23, 51, 36, 208965)  # the recording's last record
STOPPED = "Pod was terminated in response to imminent node shutdown."
ANNOUNCED = ('node real-node-0 shutting down: the kubelet\'s Shutdown Event "Shutdown manager detected '
             'shutdown event" at 2026-12-07T23:50:21Z')
EXITED_0 = "phase Succeeded only because its containers exited 0 on the kubelet's SIGTERM: stopped, not finished"
WEB = "web-67f56bfc69-fg6nl"  # the Deployment's pod on the node when it shut down
SHUTDOWN_EVENT = "ev:f36cb769:33"

db_file, recorded = recording_fixtures(SHUTDOWN / "recording")


def outcomes(con: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    return {name: (cause, detail) for name, cause, detail in rows(con, """
        SELECT r.name, o.top_cause, o.causes[1].detail
        FROM pod_outcomes_at(?) o JOIN (SELECT DISTINCT uid, name FROM raw_events) r USING (uid)""", END)}


def cited(db_file: str, evidence: list[str]) -> list[tuple[str, str, str]]:
    """(kind, name, received_at's time of day) of each evidence id, as `ktrace evidence` shows it."""
    found = []
    for ev in evidence:
        fields = dict(line.split(":", 1) for line in cli_stdout("evidence", ev, "--db", db_file).splitlines()
                      if line.startswith(("kind:", "name:", "received_at:")))
        found.append((fields["kind"].strip(), fields["name"].strip().split(".")[0],
                      fields["received_at"].strip()[11:23]))
    return found


def test_the_recording_replays_whole(recorded: duckdb.DuckDBPyConnection) -> None:
    assert rows(recorded, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(recorded, "SELECT count(*), max(received_at) FROM raw_events") == [(244, END)]
    kubelet, containerd, runc = (SHUTDOWN / "versions.txt").read_text().splitlines()
    assert (kubelet, containerd.split()[2], runc) == ("Kubernetes v1.37.2", "1.6.20~ds1", "runc version 1.1.5+ds1")
    # the operating system's side: the kubelet took its delay lock at start and let it go
    # once its pods were stopped, 9 s after PrepareForShutdown (logind.txt, the stand-in's log)
    said = [line.split(" ", 1)[1] for line in (SHUTDOWN / "logind.txt").read_text().splitlines()]
    assert said[1:] == [
        "Get InhibitDelayMaxUSec from :1.1",
        "Inhibit('shutdown', 'kubelet', 'Kubelet needs time to handle node shutdown', 'delay') from :1.1",
        "PrepareForShutdown(true) sent; 1 delay lock(s) held",
        "delay lock of 'kubelet' released",
        "every delay lock released: logind would let the shutdown proceed now"]


def test_pods_the_node_shutdown_stopped_ended_by_it_not_by_a_crash_or_a_clean_exit(
        recorded: duckdb.DuckDBPyConnection) -> None:
    """Regular pods first (8 s of the 12 s grace period), then the critical one (its 4 s):
    `stubborn` ignored SIGTERM (137, Failed Terminated); `web`'s and `critical`'s containers
    exited 0 on it, so the kubelet wrote Succeeded and no reason — the DisruptionTarget
    condition is all that says why, and it decides."""
    found = outcomes(recorded)
    assert (found["stubborn"], found["critical"], found[WEB]) == (
        ("node_shutdown", f"Terminated: {STOPPED} — {ANNOUNCED}"),
        ("node_shutdown", f"DisruptionTarget TerminationByKubelet: {STOPPED} — {EXITED_0} — {ANNOUNCED}"),
        ("node_shutdown", f"DisruptionTarget TerminationByKubelet: {STOPPED} — {EXITED_0} — {ANNOUNCED}"))
    assert rows(recorded, "SELECT pod, stop_verdict FROM pod_lifecycle WHERE namespace = 'shutdown' "
                          "AND stop_verdict IS NOT NULL ORDER BY pod") == [
        ("critical", "exited 0 on the SIGTERM of kubelet (graceful node shutdown): stopped, not finished (no deletion)"),
        ("stubborn", "killed (SIGKILL, exit 137) by kubelet (graceful node shutdown) (no deletion)"),
        (WEB, "exited 0 on the SIGTERM of kubelet (graceful node shutdown): stopped, not finished (no deletion)")]


def test_explain_a_pod_names_the_node_shutdown_with_its_message_and_evidence(db_file: str) -> None:
    (said,) = json.loads(cli_stdout("explain", "pod/critical", "-n", "shutdown", "--db", db_file, "-o", "json"))
    outcome, stop = said["findings"]
    assert (outcome["topic"], outcome["sentence"], outcome["evidence"]) == (
        "outcome", "Stopped by its node's shutdown at 2026-12-07T23:50:29Z: node_shutdown — DisruptionTarget "
                   f"TerminationByKubelet: {STOPPED} — {EXITED_0} — {ANNOUNCED}",
        [SHUTDOWN_EVENT, "po:f36cb769:33"])
    assert outcome["advice"].startswith("the node's operating system shut down")
    assert stop["sentence"] == ("Containers exited 0 on the SIGTERM of kubelet (graceful node shutdown): "
                                "stopped, not finished (no deletion).")
    # the kubelet's Shutdown Event about the node, and the pod's version with the condition
    assert cited(db_file, outcome["evidence"]) == [("Event", "real-node-0", "23:50:21.103"),
                                                    ("Pod", "critical", "23:50:29.651")]
    assert [(s["step"], s["detail"]) for s in said["timeline"]][-3:] == [
        ("killing", "Stopping container app"), ("containers_stopped", "exit 0"),
        ("terminal", "Succeeded — kubelet (graceful node shutdown)")]
    table = cli_stdout("explain", "pod/critical", "-n", "shutdown", "--db", db_file)
    assert "exited cleanly" not in table and STOPPED in table


def test_a_pod_bound_to_the_node_while_it_shuts_down_is_refused(
        recorded: duckdb.DuckDBPyConnection, db_file: str) -> None:
    """The refusal has its own sub-reason: not admission's "let the scheduler place it" but
    the node going down, and what becomes of a controller's pod and a bare one."""
    assert outcomes(recorded)["latecomer"] == (
        "admission", "node_shutdown — NodeShutdown: Pod was rejected: Pod was rejected as the node is shutting "
                     "down. (on node real-node-0)")
    (said,) = json.loads(cli_stdout("explain", "pod/latecomer", "-n", "shutdown", "--db", db_file, "-o", "json"))
    (outcome,) = [f for f in said["findings"] if f["topic"] == "outcome"]
    assert outcome["advice"].startswith("the kubelet refuses every pod while its node shuts down")
    assert "a bare pod stays Failed and must be created again" in outcome["advice"]
    assert "let the scheduler place it" not in outcome["advice"]


def test_stuck_names_the_shutting_down_node(recorded: duckdb.DuckDBPyConnection, db_file: str) -> None:
    """The node is NotReady because it is shutting down (the kubelet's own Ready message and
    its Shutdown Event); the Deployment's new pod finds no node (the node's not-ready taint).
    The stopped and refused pods are outcomes, not stuck."""
    found = stuck_by_object(recorded)
    assert sorted(found) == [("Node", "real-node-0"), ("Pod", "web-67f56bfc69-hxs48")]
    node = found[("Node", "real-node-0")]
    (cause,) = node["causes"]
    assert (node["problem"], round(node["stuck_for_s"]), cause["cause"], cause["detail"]) == (
        "node_not_ready", 75, "node_not_ready",
        "node_shutdown — node real-node-0 Ready=False since 2026-12-07T23:50:21Z (KubeletNotReady: node is "
        "shutting down); the kubelet's Shutdown Event \"Shutdown manager detected shutdown event\" at "
        "2026-12-07T23:50:21Z")
    assert cited(db_file, cause["evidence"]) == [
        ("Node", "real-node-0", "23:51:33.748"), ("Lease", "real-node-0", "23:51:33.642"),
        ("Event", "real-node-0", "23:50:21.103")]
    pending = found[("Pod", "web-67f56bfc69-hxs48")]
    assert (pending["top_cause"], pending["causes"][0]["detail"].split(";")[0]) == (
        "unschedulable", "untolerated_taint, node_selector_mismatch — 0/2 nodes are available: 1 node(s) didn't "
                         "match Pod's node affinity/selector, 1 node(s) had untolerated taint(s). preemption: 0/2 "
                         "nodes are available: 2 Preemption is not helpful for scheduling.")
    (said,) = json.loads(cli_stdout("explain", "node/real-node-0", "--db", db_file, "-o", "json"))
    (stuck,) = [f for f in said["findings"] if f["topic"] == "stuck"]
    assert stuck["advice"].startswith("the node's operating system is shutting down")
    assert [(s["time"][11:23], s["detail"]) for s in said["timeline"] if "23:50:21" in s["time"]] == [
        ("23:50:21.103", "Shutdown: Shutdown manager detected shutdown event"),
        ("23:50:21.107", "NodeNotReady: Node real-node-0 status is now: NodeNotReady"),
        ("23:50:21.160", "Ready=False KubeletNotReady: node is shutting down")]


def test_the_pod_level_eviction_sentence(recorded: duckdb.DuckDBPyConnection) -> None:
    """`hog` asks 64Mi for the whole pod (spec.resources) and holds 960 MiB: the kubelet's
    memory eviction message has the pod-level sentence before the container's. Its pod-level
    usage reads 0 — the kubelet's own figure (EXPECTED.md)."""
    memory = ("The node was low on resource: memory. Threshold quantity: 100Mi, available: 62708Ki. "
              "Pod hog was using 0, request is 64Mi, has larger consumption of memory. Container app was "
              "using 985608Ki, request is 0, has larger consumption of memory.")
    assert outcomes(recorded)["hog"] == (
        "evicted", f"memory — Evicted: {memory} — node real-node-0 MemoryPressure=True since 2026-12-07T23:50:01Z")
