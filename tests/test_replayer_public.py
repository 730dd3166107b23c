"""ktrace on data it did not make: public pod objects, watch output and Events pasted in
issue threads or recorded by other projects (tests/data/public/, provenance in SOURCES.md),
against what an expert reads from the raw data (EXPECTED.md, written from the data)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replayer import db
from replayer.replay import import_captures
from tests.replayer_data import rows

PUBLIC = Path(__file__).parent / "data" / "public"
# file → {(kind, name): (top cause, what its detail must say)}; files not listed here must
# report nothing stuck (a pod already running, one 0 s old, deletions not past their deadline)
EXPECTED: dict[str, dict[tuple[str, str], tuple[str, str]]] = {
    "unschedulable-memory-1": {("Pod", "foo"): ("unschedulable", "insufficient_memory")},
    "unschedulable-cpu-1": {("Pod", "ticktock1-log-v1-67468fc4cf-7sjhq"):
                            ("unschedulable", "insufficient_cpu")},
    "unschedulable-taint-1": {("Pod", "apache-7f6fddb7df-q229r"):
                              ("unschedulable", "untolerated_taint")},
    "unschedulable-taint-2": {
        ("Pod", "ohsu-7ffd6bcb7f-mnsjf"): ("unschedulable", "untolerated_taint"),
        ("Pod", "organization-violations-scheduler-29018065-v4648"):
            ("unschedulable", "untolerated_taint")},
    "unschedulable-taint-3": {("Pod", "nginx-with-toleration-84559fbfc4-dl7tz"):
                              ("unschedulable", "untolerated_taint")},
    "unschedulable-pvc-1": {("Pod", "drupal-79f84f8697-rmmzw"): ("unschedulable", "unbound_pvc")},
    "unschedulable-affinity-1": {("Pod", "unnamed-klotho-pod"):
                                 ("unschedulable", "node_selector_mismatch")},
    "image-pull-1": {("Pod", "foo"): ("image_pull", "nginx:1.13-invalid")},
    "image-pull-2": {("Pod", "foo-3789350985-pubfill"): ("image_pull", "ImagePullBackOff")},
    # its last watch row (all 7 are loaded: rows without resourceVersion are states, not
    # repeats of one version)
    "image-pull-3": {("Pod", "nginx-d645d84b6-ftbwc"): ("image_pull", "ImagePullBackOff")},
    "run-container-error-1": {("Pod", "foo"): ("run_container_error", "exit 127")},
    "crash-loop-1": {("Pod", "crashloop"): ("crash_loop", "last exit 1 (Error)")},
    "crash-loop-2": {("Pod", "dns-example"): ("crash_loop", "last exit 0 (Completed)")},
    "crash-loop-3": {("Pod", "nsapp-fa868e46640f566de09528-0"): ("crash_loop", "617 restarts")},
    "crash-loop-oom-2": {("Pod", "adsf-78687dd59f-8w42g"): ("crash_loop", "OOMKilled")},
    "container-config-1": {("Pod", "aegis-workload-demo-76f5f7dc46-vfldl"):
                           ("container_config", "couldn't find key VALUE in Secret")},
    "init-container-config-1": {("Pod", "sample-mychart-6bfc89db65-j9g9z"):
                                ("container_config", 'secrets "my-password" not found')},
    "init-crash-1": {("Pod", "unnamed-rtf-app-pod"): ("init_container", "init container init")},
    "volume-mount-1": {("Pod", "besu-node-bootnode-1-0"): ("volume_mount", "besu-genesis")},
    "readiness-1": {("Pod", "podinfo-9589d9bb-dqjbd"): ("readiness", "probe failed")},
    "readiness-2": {("Pod", "gravity-site-xxxxxx"): ("readiness", "statuscode: 503")},
    "not-created-quota-1": {("ReplicaSet", "coder-benzo-my-workspace-6df987574"):
                            ("not_created", "exceeded quota")},
    # issue 25: Jobs and claims (failed Jobs, job-failed-backoff-*, are finished: not stuck)
    "job-not-created-sa-1": {("Job", "fluffy"): ("not_created", 'serviceaccount "idontexist"')},
    # the newer volume's only time is the data's end: not yet threshold_s old (EXPECTED.md)
    "pv-released-1": {("PersistentVolume", "pvc-05ab5701-834e-4181-8401-d02ce444f3f6"):
                      ("pv_released", "reclaim policy Delete")},
    "pvc-storage-class-missing-1": {
        ("PersistentVolumeClaim", "storage0-data-fastdfs-group0-storage0-0"):
            ("storage_class_missing", 'StorageClass "fast" does not exist')},
    "pvc-storage-class-missing-2": {
        ("Pod", "prometheus-0"): ("unschedulable", "unbound_pvc"),
        ("PersistentVolumeClaim", "prometheus-data-prometheus-0"):
            ("storage_class_missing", 'StorageClass "standard" does not exist')},
}
SPECIMENS = sorted(p.stem for p in PUBLIC.glob("*.json"))


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("public")
    empty = folder / "empty.duckdb"
    db.open_db(str(empty)).close()  # the schema once; each specimen gets a copy
    cons = {}
    for name in SPECIMENS:
        path = folder / f"{name}.duckdb"
        shutil.copy(empty, path)
        con = db.open_db(str(path))
        import_captures([str(PUBLIC / f"{name}.json")], con, cluster="public")
        cons[name] = con
    yield cons
    for con in cons.values():
        con.close()


def test_every_specimen_is_judged():
    assert set(EXPECTED) <= set(SPECIMENS) and len(SPECIMENS) >= 20


@pytest.mark.parametrize("name", SPECIMENS)
def test_stuck_names_what_an_expert_reads(loaded, name: str):
    found = {(kind, obj): (top, detail) for kind, obj, top, detail in rows(
        loaded[name], "SELECT kind, name, top_cause, causes[1].detail FROM problems")}
    expected = EXPECTED.get(name, {})
    assert set(found) == set(expected)
    for key, (cause, says) in expected.items():
        assert found[key][0] == cause, found[key]
        assert says in found[key][1], found[key]


@pytest.mark.parametrize("name", SPECIMENS)
def test_no_time_is_made_up(loaded, name: str):
    """A pod stub without timestamps takes a time from the capture, never the epoch."""
    assert rows(loaded[name], "SELECT count(*) FROM raw_events "
                              "WHERE received_at < TIMESTAMP '2000-01-01'") == [(0,)]


def test_a_container_that_never_ran_has_no_running_step(loaded):
    steps = [s for (s,) in rows(loaded["run-container-error-1"],
                                "SELECT step FROM pod_transitions ORDER BY step_no")]
    assert "running" not in steps and "restarted" in steps


def test_a_pod_first_seen_mid_life_gets_derived_steps_and_no_verdict(loaded):
    con = loaded["crash-loop-oom-1"]
    steps = rows(con, "SELECT step, time::VARCHAR, derived FROM pod_transitions "
                      "ORDER BY step_no")
    assert steps[0] == ("created", "2020-11-26 12:30:38", True)  # its startTime
    assert ("first_seen", "2021-01-18 10:31:57", False) in steps
    restarted = rows(con, "SELECT detail FROM pod_transitions WHERE step = 'restarted'")
    assert restarted == [("jumpserver-reader: 21 restarts before first seen; last exit 137 "
                          "(OOMKilled)",)]
    assert rows(con, "SELECT count(*) FROM gaps WHERE category = 'slow'") == [(0,)]
