"""The real node's recording of the kubelet's own verdicts (tests/data/node/catalogue, made by
its capture.py): admission rejections of pods bound past the scheduler, a failing and a
never-ending postStart hook, a Secret volume that does not exist, a readiness gate nobody
sets, a DaemonSet whose pods the kubelet refuses, Indexed Jobs failing per index — ktrace's
answers against what its EXPECTED.md reads from the raw records (docs/causes.md names these
tests for the rows they show)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb

from replayer.analyses.explain import explain
from tests.replayer_data import cli_stdout, recording_fixtures, rows, stuck_by_object

CATALOGUE = Path(__file__).parent / "data" / "node" / "catalogue"
END = datetime(2026, 12, 7, 17, 43, 3, 154559)  # the recording's last record
REJECTED = "Pod was rejected: "
OS_LABEL = "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"
HOOK = "sh -c echo 'config service 10.96.0.7:8500 refused the connection' >&2; exit 7"
POD_ID = "poststart_stall(b4867b7a-f1c0-4b88-813e-bc9169e69395)"
HOOK_FAILED = (f'Exec lifecycle hook ([{HOOK}]) for Container "app" in Pod "{POD_ID}" failed - error: '
               f"command '{HOOK}' exited with 7: config service 10.96.0.7:8500 refused the connection\n, "
               'message: "config service 10.96.0.7:8500 refused the connection\\n"')


db_file, recorded = recording_fixtures(CATALOGUE / "recording")


def finding(con: duckdb.DuckDBPyConnection, ref: str, namespace: str, topic: str):
    (found,) = [f for f in explain(con, ref, namespace=namespace)[0].findings if f.topic == topic]
    return found


def test_the_recording_replays_whole(recorded: duckdb.DuckDBPyConnection) -> None:
    assert rows(recorded, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(recorded, "SELECT count(*), max(received_at) FROM raw_events") == [(505, END)]
    kubelet, containerd, runc = (CATALOGUE / "versions.txt").read_text().splitlines()
    assert (kubelet, containerd.split()[2], runc) == ("Kubernetes v1.37.2", "1.6.20~ds1", "runc version 1.1.5+ds1")


def test_the_kubelet_rejects_pods_bound_past_the_scheduler(recorded: duckdb.DuckDBPyConnection) -> None:
    """Each pod bound by spec.nodeName fails one admission check: Failed at once with the
    check's reason and message — an outcome (admission), never stuck."""
    assert rows(recorded, """
        SELECT r.name, o.problem, o.since, o.causes[1].cause, o.causes[1].detail
        FROM pod_outcomes_at(?) o JOIN (SELECT DISTINCT uid, namespace, name FROM raw_events) r USING (uid)
        WHERE r.namespace IN ('admit', 'taint') ORDER BY r.name""", END) == [
        (name, "admission", datetime(2026, 12, 7, 17, 41, at), "admission",
         f"{reason}: {REJECTED}{message} (on node real-node-0)")
        for name, at, reason, message in [
            ("affinity", 43, "NodeAffinity",
             "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"),
            ("apparmor", 43, "AppArmor", "Cannot enforce AppArmor: AppArmor is not enabled on the host"),
            ("disk", 43, "OutOfephemeral-storage", "Node didn't have enough resource: ephemeral-storage, "
                                                   "requested: 109951162777600, used: 0, capacity: 267847642337"),
            ("dongle", 43, "OutOfktrace.test/dongle",
             "Node didn't have enough resource: ktrace.test/dongle, requested: 2, used: 0, capacity: 1"),
            ("osfield", 43, "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS"),
            ("oslabel", 43, "PodOSSelectorNodeLabelDoesNotMatch", OS_LABEL),
            ("portclash", 43, "NodePorts",
             "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"),
            ("strictgroups", 43, "SupplementalGroupsPolicyNotSupported",
             "SupplementalGroupsPolicy=Strict is not supported in this node"),
            ("untolerated", 28, "TaintToleration",
             "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"),
        ]]
    assert not [key for key in stuck_by_object(recorded) if key[1] in {"affinity", "dongle", "untolerated"}]
    # the status and the kubelet's Event of the same reason are the evidence
    dongle = finding(recorded, "pod/dongle", "admit", "outcome")
    assert dongle.sentence.startswith("Rejected by the kubelet at 2026-12-07T17:41:43Z: admission — OutOfktrace.test/dongle")
    assert [e.split(":")[0] for e in dongle.evidence] == ["ev", "po"]


def test_a_bound_pod_says_no_scheduler_placed_it(recorded: duckdb.DuckDBPyConnection, db_file: str) -> None:
    """spec.nodeName at creation: the creator bound it; a DaemonSet's pod the scheduler did."""
    (said,) = json.loads(cli_stdout("explain", "pod/portclash", "-n", "admit", "--db", db_file, "-o", "json"))
    assert [(s["step"], s["component"], s["detail"]) for s in said["timeline"]] == [
        ("created", "kubectl-client-side-apply", None),
        ("scheduled", "kubectl-client-side-apply", "real-node-0 (spec.nodeName set at creation: no scheduler)"),
        ("warning", "kubelet", "NodePorts: Predicate NodePorts failed: node(s) didn't have free ports for the "
                               "requested pod ports"),
        ("terminal", "kubelet", "Failed")]
    (daemon,) = explain(recorded, "pod/winagent-r5gj9", namespace="ds")
    assert [(s["step"], s["component"]) for s in daemon.timeline][:2] == [
        ("created", "kube-controller-manager"), ("scheduled", "kube-scheduler")]


def test_a_finished_pod_deleted_with_grace_0_is_not_a_force_delete(recorded: duckdb.DuckDBPyConnection) -> None:
    """`untolerated` was Failed when the taint-eviction controller deleted it: the API server
    sets grace 0 for a finished pod whoever asks — the controller removed it, no client
    forced it (this recording was made before the recorder knew so: its stored attribution
    says force delete, and the replayer reads old recordings right)."""
    (story,) = explain(recorded, "pod/untolerated", namespace="taint")
    assert [(s["step"], s["component"], s["detail"]) for s in story.timeline][-3:] == [
        ("terminal", "kubelet", "Failed"),
        ("deletion_requested", "taint-eviction-controller", "grace 0s"),
        ("deleted", "taint-eviction-controller", None)]
    assert rows(recorded, "SELECT DISTINCT component FROM pod_transitions WHERE namespace = 'ds' "
                          "AND step = 'deleted'") == [("daemonset-controller",)]


def test_a_failing_poststart_hook_is_the_cause_not_a_crash_loop(recorded: duckdb.DuckDBPyConnection) -> None:
    """The kubelet kills the container each time its postStart hook fails (exit 137 is its
    kill); the status ends in CrashLoopBackOff, the hook's own failure (exit 7, its output)
    is in the earlier PostStartHookError — the decisive message."""
    found = stuck_by_object(recorded)[("Pod", "poststart")]
    assert (found["problem"], found["top_cause"], [c["cause"] for c in found["causes"]]) == (
        "not_ready", "run_container_error", ["run_container_error"])
    assert found["causes"][0]["detail"] == (
        "post_start_hook — app: CrashLoopBackOff, 3 restarts, last exit 137 (Error), back-off 40s restarting "
        f"failed container=app pod={POD_ID}; PostStartHookError: {HOOK_FAILED}; FailedPostStartHook ×4, "
        "2026-12-07T17:41:46Z – 17:42:29Z: PostStartHook failed; BackOff ×9, 2026-12-07T17:41:54Z – 17:42:57Z: "
        f"Back-off restarting failed container app in pod {POD_ID}")
    hook = finding(recorded, "pod/poststart", "stall", "stuck")
    assert hook.advice.startswith("the container's postStart hook failed")


def test_a_running_poststart_hook_holds_the_pod_in_container_creating(recorded: duckdb.DuckDBPyConnection) -> None:
    """`slowhook`'s container started (the kubelet's Started Event) and its status says
    ContainerCreating to the end: the hour-long hook has not returned. `secretless` is
    ContainerCreating for its missing Secret."""
    found = stuck_by_object(recorded)
    assert [(n, found[("Pod", n)]["problem"], round(found[("Pod", n)]["stuck_for_s"]), found[("Pod", n)]["top_cause"],
             found[("Pod", n)]["causes"][0]["detail"]) for n in ("slowhook", "secretless")] == [
        ("slowhook", "pending", 80, "starting", "post_start_hook — app: still ContainerCreating after Started, "
                                                "2026-12-07T17:41:45Z: Container started — its postStart hook has not returned"),
        ("secretless", "pending", 79, "volume_mount", 'FailedMount ×8, 2026-12-07T17:41:44Z – 17:42:48Z: MountVolume.SetUp '
                                                      'failed for volume "creds" : secret "db-creds" not found')]
    assert rows(recorded, "SELECT DISTINCT c.reason FROM containers c JOIN raw_events r USING (event_id) "
                          "WHERE r.name IN ('slowhook', 'secretless')") == [("ContainerCreating",)]
    assert finding(recorded, "pod/slowhook", "stall", "stuck").advice.startswith(
        "the container runs, but the kubelet reports it only once its postStart hook returns")


def test_a_readiness_gate_nobody_sets_is_named(recorded: duckdb.DuckDBPyConnection, db_file: str) -> None:
    """Containers ready, Ready=False ReadinessGatesNotReady: the gate, not a probe."""
    found = stuck_by_object(recorded)[("Pod", "gated")]
    assert (found["problem"], found["top_cause"], found["causes"][0]["detail"]) == (
        "not_ready", "readiness", 'readiness_gate — containers ready; Ready=False ReadinessGatesNotReady: '
        'corresponding condition of pod readiness gate "ktrace.test/load-balancer-ready" does not exist.')
    (said,) = json.loads(cli_stdout("explain", "pod/gated", "-n", "stall", "--db", db_file, "-o", "json"))
    (gate,) = [f for f in said["findings"] if f["topic"] == "stuck"]
    assert "must set True on it" in gate["advice"] and "probe" not in gate["advice"].split("—")[0]


def test_a_daemonset_whose_pods_the_kubelet_refuses_is_stuck(recorded: duckdb.DuckDBPyConnection) -> None:
    """The controller kills and recreates each refused pod (FailedDaemonPod), rewriting its
    status each round: stuck since its first status short of a pod, the kubelet's reason shown."""
    found = stuck_by_object(recorded)[("DaemonSet", "winagent")]
    assert (found["problem"], str(found["since"]), round(found["stuck_for_s"]), found["top_cause"],
            found["causes"][0]["detail"]) == (
        "pods_missing", "2026-12-07 17:41:46.665126", 76, "daemonset_pods_missing",
        "0 of 1 pods available (1 scheduled, 0 Ready) — FailedDaemonPod: Found failed daemon pod ds/winagent-8lb6g "
        "on node real-node-0, will try to kill it (×7 since 2026-12-07T17:41:47Z: 7 failed pods killed and "
        "recreated) — pod winagent-r5gj9 for node real-node-0 not Ready (Failed, "
        f"PodOSSelectorNodeLabelDoesNotMatch: {REJECTED}{OS_LABEL})")
    # 60 s after the first missing status it is stuck, not before
    assert rows(recorded, "SELECT name, stuck FROM object_findings_at(?) WHERE kind = 'DaemonSet'",
                datetime(2026, 12, 7, 17, 42, 40)) == []
    assert rows(recorded, "SELECT name, stuck FROM object_findings_at(?) WHERE kind = 'DaemonSet'",
                datetime(2026, 12, 7, 17, 42, 47)) == [("winagent", True)]


def test_indexed_jobs_fail_by_their_limits_per_index(recorded: duckdb.DuckDBPyConnection) -> None:
    """FailedIndexes (index 1 used up backoffLimitPerIndex) and MaxFailedIndexesExceeded (two
    failed where one was allowed), with the indexes and the failing pod's message — not the
    backoffLimit, which per-index Jobs leave at MaxInt32."""
    assert [finding(recorded, f"job/{name}", "jobs", "outcome").sentence for name in ("shards", "strict")] == [
        "Failed since 2026-12-07T17:42:07Z: job_failed — FailedIndexes: Job has failed indexes; failed indexes 1 "
        "(backoffLimitPerIndex 1), completed 0,2; 4 pods created, 2 failed; last failed pod shards-1-jt79v: container work "
        "exit 2 (Error) — shard 1: checksum mismatch",
        "Failed since 2026-12-07T17:41:57Z: job_failed — MaxFailedIndexesExceeded: Job has exceeded the specified "
        "maximal number of failed indexes; failed indexes 1,2 (backoffLimitPerIndex 0, maxFailedIndexes 1), "
        "completed 0,3; 4 pods created, 2 failed; last failed pod strict-2-bmwm9: container work exit 2 (Error) — shard "
        "rejected: schema 7"]
    assert not [key for key in stuck_by_object(recorded) if key[0] == "Job"]
