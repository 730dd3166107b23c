"""Workloads, Jobs, claims and volumes as first-class objects (issue 25): their findings
(object_findings_at), their stories (object_transitions_of) and `ktrace explain` of every
kind, exact rows on committed data — the public captures of tests/data/public (provenance in
SOURCES.md, what an expert reads in EXPECTED.md) and the recordings of the real control
plane in tests/data/replayer."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from ktrace.output import Answer, Output, table_text
from ktrace import views
from ktrace.views import STORY_STEPS
from replayer import db
from replayer.analyses.explain import explain
from replayer.analyses.stuck import stuck
from replayer.replay import import_captures
from tests.replayer_data import rows

PUBLIC = Path(__file__).parent / "data" / "public"
FINDINGS = ("SELECT kind, name, state, cause, since, stuck, detail "
            "FROM object_findings_at(data_end()) ORDER BY kind, name")


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory):
    """Each issue-25 capture imported into a database of its own, by file stem."""
    folder = tmp_path_factory.mktemp("workloads")
    cons: dict[str, object] = {"folder": folder}
    for stem in ("job-failed-backoff-1", "job-failed-backoff-2", "job-failed-deadline-1",
                 "job-complete-1", "job-not-created-sa-1", "pv-released-1",
                 "pvc-storage-class-missing-1", "pvc-storage-class-missing-2"):
        path = folder / f"{stem}.duckdb"
        cons[stem] = db.open_db(str(path))
        import_captures([str(PUBLIC / f"{stem}.json")], cons[stem], cluster="public")
    yield cons
    for stem, con in cons.items():
        if stem != "folder":
            con.close()


def test_a_job_failed_by_its_backoff_limit_is_finished_not_stuck(public):
    con = public["job-failed-backoff-1"]
    assert rows(con, FINDINGS) == [
        ("Job", "jobname", "failed", "job_failed", datetime(2020, 7, 30, 6, 53, 10), False,
         "BackoffLimitExceeded: Job has reached the specified backoff limit; 5 failed pods "
         "(backoffLimit 6); its pods were not recorded")]
    assert rows(con, "SELECT count(*) FROM problems") == [(0,)]


def test_a_job_failed_by_the_controllers_event_alone(public):
    """A describe paste: no status, seven SuccessfulCreate and the 1.9 wording of the Event —
    the pods it made are counted from its Events, which are evidence of the end."""
    con = public["job-failed-backoff-2"]
    assert rows(con, FINDINGS) == [
        ("Job", "backoff-fail", "failed", "job_failed", datetime(2018, 3, 2, 11, 59, 50), False,
         "BackoffLimitExceeded: Job has reach the specified backoff limit; 7 pods created "
         "(backoffLimit 3); its pods were not recorded")]
    assert rows(con, "SELECT count(*) FROM problems") == [(0,)]
    [story] = explain(con, "job/backoff-fail")
    [end] = story.findings
    created = [s["evidence_event_id"] for s in story.timeline
               if s["detail"].startswith("SuccessfulCreate: ")]
    assert len(created) == 7 and set(created[-3:]) <= set(end.evidence)
    assert "kubectl get pods -l job-name=NAME" in end.advice


def test_a_job_past_its_deadline_and_a_complete_one(public):
    # two real recordings (pulumi-kubernetes' test data): neither is stuck
    assert rows(public["job-failed-deadline-1"], FINDINGS) == [
        ("Job", "foo", "failed", "job_failed", datetime(2019, 9, 9, 21, 53, 57), False,
         "DeadlineExceeded: Job was active longer than specified deadline; 1 failed pods "
         "(backoffLimit 1); its pods were not recorded")]
    assert rows(public["job-complete-1"], FINDINGS) == [
        ("Job", "foo", "complete", None, datetime(2019, 7, 11, 19, 30, 56), False,
         "Complete; 1 succeeded")]
    [story] = explain(public["job-complete-1"], "job/foo")
    assert [(s["step"], s["detail"]) for s in story.timeline] == [
        ("created", None), ("status", "active 1"), ("condition", "Complete=True"),
        ("status", "succeeded 1")]
    for stem in ("job-failed-deadline-1", "job-complete-1"):
        assert rows(public[stem], "SELECT count(*) FROM problems") == [(0,)]


def test_a_job_whose_service_account_is_missing_cannot_create_its_pods(public):
    con = public["job-not-created-sa-1"]
    assert rows(con, "SELECT kind, name, problem, top_cause, causes[1].detail FROM problems") == [
        ("Job", "fluffy", "not_created", "not_created",
         'service_account — Error creating: pods "fluffy-" is forbidden: error looking up service account '
         'default/idontexist: serviceaccount "idontexist" not found')]
    # the advice is the ServiceAccount's, not quota, webhook or Pod Security
    [(advice,)] = rows(con, "SELECT finding_advice(c.cause, c.detail) FROM problems, unnest(causes) u(c)")
    assert advice.startswith("the pod template names a ServiceAccount that does not exist")


def test_a_claim_whose_storage_class_is_missing_from_its_earliest_event(public):
    con = public["pvc-storage-class-missing-1"]
    assert rows(con, "SELECT kind, name, problem, top_cause, since, stuck_for_s, "
                     "causes[1].detail FROM problems") == [
        ("PersistentVolumeClaim", "storage0-data-fastdfs-group0-storage0-0", "claim_pending",
         "storage_class_missing", datetime(2019, 7, 15, 10, 49), 4249.0,
         'StorageClass "fast" does not exist — ProvisioningFailed: storageclass.storage.k8s.io '
         '"fast" not found (×39)')]


def test_a_pod_pending_on_its_claim_is_followed_to_the_missing_class(public):
    con = public["pvc-storage-class-missing-2"]
    # the pod: stuck since the first of its 279 FailedScheduling Events (6h54m before
    # the capture's last time), not since the first record read
    assert rows(con, "SELECT kind, name, problem, top_cause, since, stuck_for_s FROM problems "
                     "ORDER BY kind") == [
        ("PersistentVolumeClaim", "prometheus-data-prometheus-0", "claim_pending",
         "storage_class_missing", datetime(2019, 8, 21, 11, 58, 18), 0.0),
        ("Pod", "prometheus-0", "pending", "unschedulable", datetime(2019, 8, 21, 5, 4), 24858.0)]
    [story] = explain(con, "pod/prometheus-0")
    found = {f.topic: f for f in story.findings}
    assert found["storage"].sentence == (
        'Its claim kube-system/prometheus-data-prometheus-0: storage_class_missing — '
        'StorageClass "standard" does not exist — ProvisioningFailed: '
        'storageclass.storage.k8s.io "standard" not found')
    assert found["storage"].advice.startswith("create the StorageClass named above")
    # an import has no receive clock: the stretch lasted at least as long as its objects say
    assert found["stuck"].sentence.startswith("Not running (Pending) for at least 6h54m")


def test_stuck_says_at_least_where_the_data_has_no_clock(public, recorded):
    """An import's end is the last time an object states: `stuck` marks its durations as lower
    bounds, in JSON and with ≥ in a table; a recording (received times) does not."""
    judged = stuck(public["pvc-storage-class-missing-2"])
    found = [r for r in Answer.of(views.STUCK, judged.rows).rows if r["kind"] == "Pod"]
    assert [(r["name"], r["stuck_for_s"], r["stuck_for_at_least"]) for r in found] == [
        ("prometheus-0", 24858.0, True)]
    table = table_text(Answer.of(views.STUCK, judged.rows), Output("table", width=None))
    assert "≥6h54m" in next(line for line in table.splitlines() if line.startswith("Pod "))
    clocked = Answer.of(views.STUCK, stuck(recorded).rows).rows
    assert clocked and not any(r["stuck_for_at_least"] for r in clocked)
    assert "≥" not in table_text(Answer.of(views.STUCK, stuck(recorded).rows), Output("table", width=None))


def test_volumes_released_with_a_delete_policy(public):
    assert rows(public["pv-released-1"], FINDINGS) == [
        ("PersistentVolume", "pvc-05ab5701-834e-4181-8401-d02ce444f3f6", "released",
         "pv_released", datetime(2020, 8, 31, 3), True,
         "phase Released — claim nokia-imshss/datadir-buphssnew5-etcd-0, reclaim policy Delete"),
        ("PersistentVolume", "pvc-11c91ba6-ab5f-4781-8bc8-8bb9ec69e1a4", "released",
         "pv_released", datetime(2020, 8, 31, 5), False,
         "phase Released — claim nokia-imshss/datadir-buphssnew5-etcd-2, reclaim policy Delete")]


def test_the_pending_recordings_claims(pending):
    assert rows(pending, "SELECT kind, name, state, cause, stuck, detail "
                         "FROM object_findings_at(data_end()) "
                         "WHERE kind = 'PersistentVolumeClaim' ORDER BY name") == [
        ("PersistentVolumeClaim", "claim-missing-class", "claim_pending", "storage_class_missing",
         True, 'StorageClass "missing" does not exist — ProvisioningFailed: '
               'storageclass.storage.k8s.io "missing" not found (×5)'),
        ("PersistentVolumeClaim", "claim-no-pv", "claim_waiting", "waiting_for_consumer", False,
         "WaitForPodScheduled: waiting for pod pvc-no-pv to be scheduled (×3)")]


def test_a_resolved_failed_create_is_history_not_the_cause(public):
    """The rule on the Job story of kubernetes#60735 given a FailedCreate before its first
    SuccessfulCreate (a missing ServiceAccount created meanwhile): not not_created."""
    con = public["job-failed-backoff-2"]
    con.execute("CREATE TEMP TABLE saved AS FROM k8s_events")
    try:
        job = rows(con, "SELECT uid FROM raw_events WHERE kind = 'Job'")[0][0]
        first = rows(con, "SELECT min(event_id) FROM k8s_events WHERE reason = 'SuccessfulCreate'")
        # the first SuccessfulCreate re-read as the FailedCreate it followed, a second earlier
        con.execute("UPDATE k8s_events SET reason = 'FailedCreate', type = 'Warning', "
                    "message = 'Error creating: pods \"backoff-fail-\" is forbidden: error looking "
                    "up service account default/runner: serviceaccount \"runner\" not found', "
                    "first_time = first_time - INTERVAL 1 SECOND, "
                    "last_time = last_time - INTERVAL 1 SECOND WHERE event_id = ?", [first[0][0]])
        assert rows(con, "SELECT state FROM object_findings_at(data_end()) WHERE uid = ?",
                    job) == [("failed",)]
        # and without the Job's end, the later SuccessfulCreate still resolves it
        con.execute("DELETE FROM k8s_events WHERE reason = 'BackoffLimitExceeded'")
        assert rows(con, "SELECT count(*) FROM object_findings_at(data_end())") == [(0,)]
    finally:
        con.execute("DELETE FROM k8s_events; INSERT INTO k8s_events FROM saved; DROP TABLE saved")


def test_explain_deployment_without_pods(pending):
    [story] = explain(pending, "deploy/web", namespace="quota")
    assert [(s["step"], s["detail"]) for s in story.timeline] == [
        ("created", None), ("status", "desired 2"),
        ("event", "ScalingReplicaSet: Scaled up replica set web-857bb4bd9d from 0 to 2"),
        ("condition", 'Progressing=True NewReplicaSetCreated: Created new replica set '
                      '"web-857bb4bd9d"'),
        ("condition", "Available=False MinimumReplicasUnavailable: Deployment does not have "
                      "minimum availability."),
        ("condition", 'ReplicaFailure=True FailedCreate: pods "web-857bb4bd9d-fhxp4" is '
                      'forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, '
                      'limited: pods=0')]
    assert not any(s["derived"] for s in story.timeline)


@pytest.mark.parametrize("target, namespace, first_steps", [
    ("rs/web-857bb4bd9d", "quota", ["created", "status", "event", "condition"]),
    ("pvc/claim-missing-class", "pending", ["created", "phase", "event"]),
    ("ns/pending", None, ["created", "phase"]),
    ("node/kwok-node-0", None, ["created", "condition"]),
])
def test_explain_every_kind_on_the_pending_recording(pending, target, namespace, first_steps):
    [story] = explain(pending, target, namespace=namespace)
    assert [s["step"] for s in story.timeline][:len(first_steps)] == first_steps


def test_explain_a_volume_and_a_terminating_namespace(edge):
    [pv] = explain(edge, "pv/edge-pv")
    assert [(s["step"], s["detail"], s["derived"]) for s in pv.timeline] == [
        ("created", None, False), ("phase", "Pending", False), ("phase", "Available", False),
        ("phase", "Bound", False)]
    [ns] = explain(edge, "ns/doomed")
    steps = [(s["step"], s["detail"]) for s in ns.timeline]
    assert steps[:4] == [("created", None), ("phase", "Active"), ("phase", "Terminating"),
                         ("deletion_requested", "no grace period")]
    assert [f.topic for f in ns.findings] == ["stuck"]
    [node] = explain(edge, "node/kwok-node-2")
    # listed when the recording started: its creation and first conditions are derived
    assert [(s["step"], s["derived"]) for s in node.timeline][:2] == [("created", True),
                                                                     ("condition", True)]
    assert ("condition", "Ready=Unknown NodeStatusUnknown: Kubelet stopped posting node "
                         "status.", False) in [(s["step"], s["detail"], s["derived"])
                                               for s in node.timeline]


def test_explain_a_failed_job_in_every_output_form(public):
    path = str(public["folder"] / "job-failed-backoff-1.duckdb")
    public["job-failed-backoff-1"].close()
    try:
        runner = CliRunner()
        table = runner.invoke(cli, ["explain", "job/jobname", "--db", path])
        assert table.exit_code == 0, table.output
        assert ("* Failed since 2020-07-30T06:53:10Z: job_failed — BackoffLimitExceeded: "
                "Job has reached the specified backoff limit") in " ".join(table.output.split())
        doc = runner.invoke(cli, ["explain", "job/jobname", "--db", path, "-o", "json"])
        [story] = json.loads(doc.output)
        assert [(s["step"], s["derived"]) for s in story["timeline"]][-2:] == [
            ("condition", True), ("status", True)]
        assert story["findings"][0]["topic"] == "outcome"
    finally:
        public["job-failed-backoff-1"] = db.open_db(path)


def test_a_list_import_is_created_at_its_creation_timestamp(tmp_path):
    """`kubectl get pods -o json` of the pending recording's healthy pod (its last version as
    kubectl captured it): the List's only record takes its time from the newest timestamp
    inside (09:57:04), yet the pod was created at its creationTimestamp, 09:57:03; every
    step of an import is derived."""
    last = {}
    for line in (Path(__file__).parent / "data" / "replayer" / "pending" / "kubectl"
                 / "pods.json").read_bytes().splitlines():
        obj = json.loads(line)["object"]
        last[obj["metadata"]["name"]] = obj
    capture = tmp_path / "pods.json"
    capture.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                   "items": [last["running"]]}))
    con = db.open_db(str(tmp_path / "list.duckdb"))
    import_captures([str(capture)], con, cluster="imported")
    assert rows(con, "SELECT step, time, derived FROM pod_transitions ORDER BY step_no") == [
        ("created", datetime(2026, 12, 1, 9, 57, 3), True),
        ("scheduled", datetime(2026, 12, 1, 9, 57, 4), True),
        ("running", datetime(2026, 12, 1, 9, 57, 4), True),
        ("ready", datetime(2026, 12, 1, 9, 57, 4), True)]
    con.close()


def test_a_timeline_over_days_prints_its_dates(tmp_path):
    """crash-loop-oom-1: created 2020-11-26, seen 2021-01-18 — the time of day alone would
    read as one day."""
    path = str(tmp_path / "oom.duckdb")
    con = db.open_db(path)
    import_captures([str(PUBLIC / "crash-loop-oom-1.json")], con, cluster="public")
    con.close()
    out = CliRunner().invoke(cli, ["timeline", "jumpserver-reader-589945c95c-d2nzg",
                                   "--db", path]).output
    assert "2020-11-26T12:30:38.000Z" in out and "2021-01-18T10:31:57.000Z" in out


def test_a_timeline_within_one_day_prints_the_time_of_day(pending):
    [story] = explain(pending, "pvc/claim-missing-class", namespace="pending")
    text = table_text(Answer(STORY_STEPS, story.timeline), Output("table"))
    assert [line.split()[0] for line in text.splitlines()[1:]] == [
        "09:56:51.753Z", "09:56:51.753Z", "09:56:51.783Z"]
