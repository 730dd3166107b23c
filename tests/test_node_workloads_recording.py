"""The real node's recording of workloads that wait on pods (tests/data/node/workloads, made
by its capture.py): Services without a ready endpoint, a StatefulSet update held, a
DaemonSet pod missing, budgets selecting by expression and by an empty selector, a pod the
kubelet preempted for a critical one — ktrace's answers against what its EXPECTED.md reads
from the raw records."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb

from replayer.analyses.explain import explain
from tests.replayer_data import cli_stdout, recording_fixtures, rows, stuck_by_object

WORKLOADS = Path(__file__).parent / "data" / "node" / "workloads"
END = datetime(2026, 12, 7, 14, 44, 50, 110267)  # the recording's last record
PROBE_FAILED = "Readiness probe failed: cat: can't open '/tmp/ready': No such file or directory"
TYPO = ("selector app=wbe matches no pod in namespace svc (its pods have app: unready, web) — "
        "EndpointSlice typo-z7khm: no endpoint")
UNREADY = ("selector app=unready matches 1 pod, none Ready: pod unready-5b98cf9df-5xwdj not Ready "
           "(ContainersNotReady: containers with unready status: [app]; Unhealthy ×25, "
           f"2026-12-07T14:43:21Z – 14:43:44Z: {PROBE_FAILED}) — EndpointSlice unready-6k9cw: 1 endpoint, not ready")
HELD = ("update to revision db-5759895c5 held at 1 of 2 pods (1 Ready): pod db-1 is not Ready "
        "(ContainersNotReady: containers with unready status: [db]; Unhealthy ×25, "
        f"2026-12-07T14:43:31Z – 14:43:54Z: {PROBE_FAILED})")
MISSING = ("1 of 2 pods available (2 scheduled, 1 Ready) — pod agent-rdkxn for node real-node-0 not Ready "
           "(Pending, Unschedulable: "
           "0/2 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) "
           "didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/2 nodes are available: 1 No preemption victims "
           "found for incoming pod, 1 Preemption is not helpful for scheduling.)")
PREEMPTED = ("Preempting: Preempted in order to admit critical pod; DisruptionTarget TerminationByKubelet: "
             "Pod was preempted by Kubelet to accommodate a critical pod.")


db_file, recorded = recording_fixtures(WORKLOADS / "recording")


def evidence_records(con: duckdb.DuckDBPyConnection, ids: list[int]) -> list[tuple[str, str, str]]:
    return rows(con, "SELECT kind, name, strftime(received_at, '%H:%M:%S') FROM raw_events "
                     "WHERE list_contains(?, event_id) ORDER BY event_id", ids)


def evidence_of(con: duckdb.DuckDBPyConnection, kind: str, name: str) -> list[tuple[str, str, str]]:
    """The records a stuck finding rests on (problems: their database ids)."""
    (ids,) = rows(con, "SELECT causes[1].evidence FROM problems WHERE kind = ? AND name = ?", kind, name)[0]
    return evidence_records(con, ids)


def test_the_recording_replays_whole(recorded: duckdb.DuckDBPyConnection) -> None:
    assert rows(recorded, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(recorded, "SELECT count(*), max(received_at) FROM raw_events") == [(412, END)]
    kubelet, containerd, runc = (WORKLOADS / "versions.txt").read_text().splitlines()
    assert (kubelet, containerd.split()[2], runc) == ("Kubernetes v1.37.2", "1.6.20~ds1", "runc version 1.1.5+ds1")


def test_services_without_a_ready_endpoint_name_their_pods_or_selector(recorded: duckdb.DuckDBPyConnection) -> None:
    """`typo` selects app=wbe, which no pod has: its slice stays empty; `unready`'s one pod
    fails its readiness probe: its slice holds it, not ready. Both since their creation (no
    endpoint was ever ready), stuck past the threshold; `web`, whose pod is Ready, is not."""
    found = stuck_by_object(recorded)
    services = {name: r for (kind, name), r in found.items() if kind == "Service"}
    assert sorted(services) == ["typo", "unready"]
    assert [(r["problem"], str(r["since"]), round(r["stuck_for_s"]), r["top_cause"], r["causes"][0]["detail"])
            for _, r in sorted(services.items())] == [
        ("no_ready_endpoints", "2026-12-07 14:43:20", 90, "no_ready_endpoints", TYPO),
        ("no_ready_endpoints", "2026-12-07 14:43:19", 91, "no_ready_endpoints", UNREADY),
    ]
    # the Service, its slice version, the pod version and its kubelet's probe failure
    assert evidence_of(recorded, "Service", "unready") == [
        ("EndpointSlice", "unready-6k9cw", "14:43:21"), ("Event", "unready-5b98cf9df-5xwdj.18eeffd75f87491f", "14:43:44"),
        ("Pod", "unready-5b98cf9df-5xwdj", "14:43:34"), ("Service", "unready", "14:43:19")]
    assert evidence_of(recorded, "Service", "typo") == [
        ("EndpointSlice", "typo-z7khm", "14:43:20"), ("Service", "typo", "14:43:20")]
    # 30 s in, under the threshold: found, not yet stuck
    assert rows(recorded, "SELECT name, stuck FROM service_findings_at('2026-12-07 14:43:50'::TIMESTAMP) "
                          "ORDER BY name") == [("typo", False), ("unready", False)]


def test_explain_a_service_tells_why_it_has_no_ready_endpoint(recorded: duckdb.DuckDBPyConnection,
                                                              db_file: str) -> None:
    (story,) = explain(recorded, "svc/typo", namespace="svc")
    assert [s["step"] for s in story.timeline] == ["created", "endpoints"]
    (finding,) = story.findings
    assert finding.sentence == ("No ready endpoint for 1m30s (since 2026-12-07T14:43:20Z): no_ready_endpoints — "
                                + TYPO)
    assert finding.advice.startswith("a selector that matches no pod: compare it with the label values of the namespace's pods")
    (said,) = json.loads(cli_stdout("explain", "svc/unready", "-n", "svc", "--db", db_file, "-o", "json"))
    assert (said["kind"], said["name"], [f["sentence"] for f in said["findings"]]) == (
        "Service", "unready", ["No ready endpoint for 1m31s (since 2026-12-07T14:43:19Z): no_ready_endpoints — "
                               + UNREADY])
    table = cli_stdout("explain", "svc/typo", "-n", "svc", "--db", db_file)
    assert "no_ready_endpoints" in table and "typo-z7khm: no endpoint" in table


def test_a_statefulset_update_is_held_by_its_new_pod_not_ready(recorded: duckdb.DuckDBPyConnection) -> None:
    """VERSION=2 at 14:43:25.8: the controller replaced db-1 (the highest ordinal first) with
    revision db-5759895c5, which never passes its readiness probe, and waits: db-0 keeps the
    old revision. Held since the update began, with the pod's probe failure."""
    found = stuck_by_object(recorded)[("StatefulSet", "db")]
    assert (found["problem"], str(found["since"]), round(found["stuck_for_s"]), found["top_cause"],
            found["causes"][0]["detail"]) == (
        "update_held", "2026-12-07 14:43:25.824629", 84, "statefulset_update_held", HELD)
    assert evidence_of(recorded, "StatefulSet", "db") == [
        ("Event", "db-1.18eeffd99353f16d", "14:43:54"), ("Pod", "db-1", "14:43:45"), ("StatefulSet", "db", "14:43:30")]
    # the replaced db-1 was deleted by the StatefulSet controller (its Event names the pod)
    assert rows(recorded, "SELECT component, detail FROM pod_transitions WHERE namespace = 'sts' "
                          "AND step = 'deletion_requested'") == [("statefulset-controller", "grace 2s")]


def test_a_daemonset_pod_is_missing_where_its_host_port_is_taken(recorded: duckdb.DuckDBPyConnection) -> None:
    """Pod `holder` holds host port 18081 on the real node; the DaemonSet's pod for it stays
    Pending with the scheduler's message, the kwok node's runs. Missing since the first
    status that wanted 2 pods (14:43:23.16: none available yet)."""
    found = stuck_by_object(recorded)[("DaemonSet", "agent")]
    assert (found["problem"], str(found["since"]), found["top_cause"], found["causes"][0]["detail"]) == (
        "pods_missing", "2026-12-07 14:43:23.161821", "daemonset_pods_missing", MISSING)
    assert evidence_of(recorded, "DaemonSet", "agent") == [
        ("DaemonSet", "agent", "14:43:23"), ("Pod", "agent-rdkxn", "14:43:23")]


def test_the_node_a_daemonset_pod_is_pinned_away_from_is_a_node_affinity_mismatch(
        recorded: duckdb.DuckDBPyConnection) -> None:
    """The DaemonSet's pod for real-node-0 is pinned there by matchFields on metadata.name:
    NodeAffinity's PreFilter leaves the kwok node out, and the scheduler says so as
    `didn't satisfy plugin(s) [NodeAffinity]` (schedule_one.go) — node affinity, not `other`."""
    found = stuck_by_object(recorded)[("Pod", "agent-rdkxn")]
    assert (found["top_cause"], found["causes"][0]["detail"].split(" — ")[0]) == (
        "unschedulable", "node_selector_mismatch, host_ports")


def test_explain_a_service_tells_its_ready_endpoints(recorded: duckdb.DuckDBPyConnection) -> None:
    """Each version of a Service's EndpointSlice that changes which pods are ready is a step
    naming them: web's pod ready from 14:43:23.73; unready's pod in its slice, not ready, to
    the end; typo's slice empty (EXPECTED.md)."""
    stories = {name: explain(recorded, f"svc/{name}", namespace="svc") for name in ("web", "unready", "typo")}
    assert {name: [(s.kind, len(s.timeline)) for s in found] for name, found in stories.items()} == {
        "web": [("Service", 3)], "unready": [("Service", 3)], "typo": [("Service", 2)]}
    assert {name: [(s["step"], s["time"].strftime("%H:%M:%S.%f")[:-3], s["component"], s["detail"], s["derived"])
                   for s in found[0].timeline[1:]] for name, found in stories.items()} == {
        "web": [("endpoints", "14:43:20.011", "endpointslice-controller", "EndpointSlice web-wdjpg: no ready endpoint", False),
                ("endpoints", "14:43:23.732", "endpointslice-controller",
                 "EndpointSlice web-wdjpg: ready web-67f56bfc69-t9fqv", False)],
        "unready": [("endpoints", "14:43:19.970", "endpointslice-controller",
                     "EndpointSlice unready-6k9cw: no ready endpoint", False),
                    ("endpoints", "14:43:21.971", "endpointslice-controller",
                     "EndpointSlice unready-6k9cw: no ready endpoint; not ready unready-5b98cf9df-5xwdj", False)],
        "typo": [("endpoints", "14:43:20.033", "endpointslice-controller",
                  "EndpointSlice typo-z7khm: no ready endpoint", False)]}
    # each step's evidence is the slice version that shows it
    ids = rows(recorded, "SELECT evidence_event_id FROM object_transitions_of([?]) WHERE step = 'endpoints'",
               stories["web"][0].uid)
    assert evidence_records(recorded, [i for (i,) in ids]) == [
        ("EndpointSlice", "web-wdjpg", "14:43:20"), ("EndpointSlice", "web-wdjpg", "14:43:23")]


def test_explain_a_statefulset_and_a_daemonset(recorded: duckdb.DuckDBPyConnection) -> None:
    """Each workload's story, then its pods': the held update's status steps and the
    controller's Events; the missing pod's FailedScheduling."""
    stories = explain(recorded, "sts/db", namespace="sts")
    assert [(s.kind, s.name) for s in stories] == [("StatefulSet", "db"), ("Pod", "db-1"), ("Pod", "db-1"),
                                                   ("Pod", "db-0")]
    sts = stories[0]
    assert [s["detail"] for s in sts.timeline if s["step"] == "event"] == [
        "SuccessfulCreate: Create Pod db-0 in StatefulSet db successful",
        "SuccessfulCreate: Create Pod db-1 in StatefulSet db successful (×2, last 2026-12-07T14:43:30Z)",
        "SuccessfulDelete: Delete Pod db-1 in StatefulSet db successful"]
    assert [f.sentence for f in sts.findings] == [
        "Update held for 1m24s (since 2026-12-07T14:43:25.824629Z): statefulset_update_held — " + HELD]
    (ds, *pods) = explain(recorded, "ds/agent", namespace="ds")
    assert [f.sentence for f in ds.findings] == [
        "Pods missing for 1m27s (since 2026-12-07T14:43:23.161821Z): daemonset_pods_missing — " + MISSING]
    assert {p.name: [s["step"] for s in p.timeline] for p in pods} == {
        "agent-wlfsf": ["created", "scheduled", "running", "ready"], "agent-rdkxn": ["created", "warning"]}
    # the pod's own finding names the node its DaemonSet pinned it to (its required node
    # affinity on metadata.name: real-node-0, where the host port is taken — EXPECTED.md "ds")
    (pending,) = [f for p in pods if p.name == "agent-rdkxn" for f in p.findings if f.topic == "stuck"]
    assert pending.sentence.endswith("; FailedScheduling, 2026-12-07T14:43:23Z; pinned to node real-node-0 by "
                                     "its required node affinity")


def test_budgets_by_expression_and_by_empty_selector_cover_the_pods(recorded: duckdb.DuckDBPyConnection) -> None:
    """`backend` (matchExpressions tier In [backend, cache], maxUnavailable 1) and
    `everything` (an empty selector, minAvailable 2) both cover api's two pods — as the
    disruption controller counted them (expectedPods 2 each)."""
    assert rows(recorded, """
        SELECT p.name, b.budget, b.disruptions_allowed, b.current_healthy, b.desired_healthy, b.expected_pods
        FROM pod_budgets_at(?) b JOIN (SELECT DISTINCT uid, name FROM raw_events) p ON p.uid = b.pod_uid
        ORDER BY 1, 2""", END) == [
        ("api-7996666564-2gbkt", "backend", 1, 2, 1, 2), ("api-7996666564-2gbkt", "everything", 0, 2, 2, 2),
        ("api-7996666564-wbjth", "backend", 1, 2, 1, 2), ("api-7996666564-wbjth", "everything", 0, 2, 2, 2)]
    assert rows(recorded, "SELECT DISTINCT r.name, d.match_expressions, d.selects_all FROM disruption_budgets d "
                          "JOIN raw_events r USING (event_id) ORDER BY 1") == [
        ("backend", [{"key": "tier", "operator": "In", "values": ["backend", "cache"]}], False),
        ("everything", [], True)]
    # no other pod of the cluster is covered: the empty selector is the namespace's only
    assert rows(recorded, "SELECT count(DISTINCT pod_uid) FROM pod_budgets_at(?)", END) == [(2,)]


def test_the_kubelet_preempts_a_pod_for_a_critical_pod(recorded: duckdb.DuckDBPyConnection) -> None:
    """`critical` (system-node-critical, bound by spec.nodeName) found no CPU left: the kubelet
    preempted `victim` (its Preempting Event first at 14:43:27, then the kill, then its status
    write at 14:43:30: the Event is the earliest evidence)."""
    assert rows(recorded, "SELECT r.name, o.problem, o.since, o.causes[1].detail "
                          "FROM pod_outcomes_at(?) o JOIN (SELECT DISTINCT uid, name FROM raw_events) r USING (uid)",
                END) == [("victim", "preempted", datetime(2026, 12, 7, 14, 43, 27), PREEMPTED)]
    (story,) = explain(recorded, "pod/victim", namespace="preempt")
    (outcome,) = [f for f in story.findings if f.topic == "outcome"]
    assert outcome.sentence == "Preempted at 2026-12-07T14:43:27Z: preempted — " + PREEMPTED
    # never deleted: its stop is judged against its own grace period (2 s) from the kubelet's
    # Killing at 14:43:27.54 (busybox's sleep ignores SIGTERM; finishedAt 14:43:29Z)
    (stop,) = [f for f in story.findings if f.topic == "deletion"]
    assert (stop.sentence, stop.advice) == (
        "Containers did not exit on SIGTERM; killed when its grace period (2s) ran out after "
        "kubelet (critical-pod preemption) stopped it (no deletion).",
        "handle SIGTERM in the app, or shorten the grace period")
    # the timeline tells the kubelet's path on the pod's end
    assert [(s["step"], s["component"], s["detail"]) for s in story.timeline][-4:] == [
        ("warning", "kubelet", "Preempting: Preempted in order to admit critical pod"),
        ("killing", "kubelet", "Stopping container app"),
        ("containers_stopped", "kubelet", "exit 137"),
        ("terminal", "kubelet", "Failed — kubelet (critical-pod preemption)")]
    assert rows(recorded, "SELECT kubelet_termination(m) FROM unnest([?, ?, ?, NULL]) u(m)",
                "Pod was preempted by Kubelet to accommodate a critical pod.",
                "Pod was terminated in response to imminent node shutdown.",
                "The node was low on resource: memory. Threshold quantity: 100Mi, available: 90Mi. ") == [
        ("critical-pod preemption",), ("graceful node shutdown",), ("node-pressure eviction",), (None,)]
