"""The real node's recording (tests/data/node/scenarios, made by tests/data/node/capture.py):
ktrace's answers against what its EXPECTED.md reads from the raw records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from replayer.analyses.stuck import stuck
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


def findings(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], dict]:
    """Each stuck pod's top finding, by (namespace, name), judged at the recording's end."""
    judged = stuck(con)
    columns = judged.rows[0]
    return {(r["namespace"], r["name"]): r["causes"][0] for r in (dict(zip(columns, row)) for row in judged.rows[1])}


# What EXPECTED.md reads from the raw records: the cause, its sub-reason, and the message
# that decides it (the kubelet's, containerd's or the container's own words).
EXPECTED_STUCK = {
    ("config", "configless"): ("container_config", "couldn't find key db-url in ConfigMap config/settings"),
    ("crash", "crasher"): ("crash_loop", "last exit 1 (Error): dial tcp 10.96.0.42:5432: connect: connection timed out"),
    ("crash", "initcrash"): ("init_container", "crash_loop — init container wait-for-db: CrashLoopBackOff, 4 restarts, "
                                               "last exit 1 (Error): dial tcp 10.96.0.42:5432: connect: connection timed out"),
    ("image", "absent"): ("image_pull", "registry_unreachable — app: ErrImagePull, failed to pull and unpack image"),
    ("image", "neverpull"): ("image_pull", "never_pull — app: ErrImageNeverPull, Container image \"ktrace.test/absent:1\" "
                                           "is not present with pull policy of Never"),
    ("initcmd", "initcmd"): ("run_container_error", 'exec: "/bin/db-migrate": stat /bin/db-migrate: no such file or directory'),
    ("oom", "hog"): ("oom_killed", "last exit 137 (OOMKilled)"),
    ("probes", "unlive"): ("crash_loop", "liveness_probe — app: CrashLoopBackOff, 5 restarts, last exit 137 (Error)"),
    ("probes", "unready"): ("readiness", "Readiness probe failed: cat: can't open '/tmp/ready'"),
    ("sandbox", "sandboxed"): ("sandbox", 'runtime_handler — FailedCreatePodSandBox ×9, 2026-12-07T07:32:59Z – 07:34:42Z: '
                                          'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get '
                                          'sandbox runtime: no runtime for "runsc" is configured'),
}


def test_every_failing_pod_gets_the_cause_an_expert_names(node_recorded: duckdb.DuckDBPyConnection) -> None:
    found = findings(node_recorded)
    for pod, (cause, decisive) in EXPECTED_STUCK.items():
        assert found[pod]["cause"] == cause, (pod, found[pod])
        assert decisive in found[pod]["detail"], (pod, found[pod]["detail"])
        assert found[pod]["evidence"], pod  # the records that show it


def test_advice_fits_the_case(node_recorded: duckdb.DuckDBPyConnection) -> None:
    """Advice read for each finding as `ktrace explain` reads it: finding_advice(cause, detail)."""
    found = findings(node_recorded)

    def advice(pod: tuple[str, str]) -> str:
        return rows(node_recorded, "SELECT finding_advice(?, ?)", found[pod]["cause"], found[pod]["detail"])[0][0]

    assert advice(("probes", "unlive")).startswith("the kubelet restarts the container because its liveness probe")
    never_started = advice(("initcmd", "initcmd"))  # exit 128: no logs exist to read
    assert "command" in never_started and "read the previous run's logs" not in never_started
    assert advice(("image", "absent")).startswith("the node cannot reach the registry")


def test_the_evicted_pod_is_an_outcome_not_stuck(node_recorded: duckdb.DuckDBPyConnection) -> None:
    assert ("evict", "filler") not in findings(node_recorded)
    (cause, detail), = rows(node_recorded, """
        SELECT top_cause, causes[1].detail FROM pod_outcomes_at((SELECT max(received_at) FROM raw_events))
        WHERE namespace = 'evict' AND name = 'filler'""")
    assert cause == "evicted"
    # the pod's own emptyDir limit, and the node was not under disk pressure
    assert detail == ('limit — Evicted: Usage of EmptyDir volume "data" exceeds the limit "1Mi". '
                      "— its own ephemeral-storage limit, not a shortage of the node (node real-node-0 "
                      "DiskPressure=False since 2026-12-07T07:32:48Z)")


def test_jobs_end_failed_with_the_last_pods_own_words(node_recorded: duckdb.DuckDBPyConnection) -> None:
    """Finished, so never stuck: the Job's Failed reason, and its last failed pod's exit code
    and termination message, as the raw Job and pod records say (EXPECTED.md)."""
    assert rows(node_recorded, """
        SELECT name, state, stuck, cause, detail
        FROM object_findings_at((SELECT max(received_at) FROM raw_events)) WHERE kind = 'Job' ORDER BY name""") == [
        ("backoff", "failed", False, "job_failed",
         "BackoffLimitExceeded: Job has reached the specified backoff limit; 2 pods created, 2 failed (backoffLimit 1); "
         "last failed pod backoff-rcsjf: container work exit 3 (Error) — schema version 7 not supported"),
        ("policy", "failed", False, "job_failed",
         "PodFailurePolicy: Container work for pod jobs/policy-8gzlg failed with exit code 42 matching FailJob "
         "rule at index 0; 1 pod created, 1 failed (backoffLimit 6); last failed pod policy-8gzlg: container work exit 42 (Error)"),
    ]
    assert not [key for key in findings(node_recorded) if key[0] == "jobs"]


def test_a_claim_whose_class_is_missing_is_followed_to_its_end(node_recorded: duckdb.DuckDBPyConnection) -> None:
    assert rows(node_recorded, """
        SELECT kind, name, state, stuck, cause, detail
        FROM object_findings_at((SELECT max(received_at) FROM raw_events)) WHERE namespace = 'storage'""") == [
        ("PersistentVolumeClaim", "data", "claim_pending", True, "storage_class_missing",
         'StorageClass "fast-ssd" does not exist — ProvisioningFailed: storageclass.storage.k8s.io "fast-ssd" '
         "not found (×8)"),
    ]
    assert findings(node_recorded)[("storage", "db")]["cause"] == "unschedulable"  # the pod waits on it
