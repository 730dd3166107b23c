"""The control plane's own catalogue rows (tests/data/controlplane, made by its capture.py on
the tests' real kube-apiserver, controller-manager and scheduler, kwok nodes and a node no
kubelet ever updates): what `stuck` and `explain` say of each, against what its EXPECTED.md
reads from the raw records — the deciding message always quoted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from replayer.analyses.explain import explain
from replayer.analyses.stuck import stuck
from tests.replayer_data import load_recording, loaded_file, read_only, rows

DATA = Path(__file__).parent / "data" / "controlplane"
END = datetime(2026, 12, 7, 17, 44, 33, 370240)  # the recording's last record
NO_FREE = "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
NEVER = ("node silent-node Ready=Unknown since 2026-12-07T17:43:17Z (NodeStatusNeverUpdated: "
         "Kubelet never posted node status.)")
PREEMPTED = ("Preempted, 2026-12-07T17:42:56Z: Preempted by pod 7cf600f2-029a-4def-8f0a-1b5d1aaddb79 on node "
             "kwok-node-0; DisruptionTarget PreemptionByScheduler: default-scheduler: preempting to accommodate "
             "a higher priority pod")
DENIED = ('admission webhook "deny-pods.freeze.ktrace.test" denied the request: '
          "CREATE of pods in namespace webhook is frozen by policy")
CONTENT = ("NamespaceDeletionContentFailure: Failed to delete all resource types, 1 remaining: admission webhook "
           '"deny-deletes.freeze.ktrace.test" denied the request: DELETE of configmaps in namespace frozen is '
           "frozen by policy")


@pytest.fixture(scope="module")
def db_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    return loaded_file(tmp_path_factory, "controlplane", DATA / "recording")


@pytest.fixture(scope="module")
def recorded(db_file: str) -> Iterator[duckdb.DuckDBPyConnection]:
    yield from read_only(db_file)


def run(*args: str) -> str:
    """`ktrace ARGS`' output (it must succeed)."""
    done = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.stdout


def judged(con: duckdb.DuckDBPyConnection, namespace: str | None = None) -> list[tuple]:
    """What `ktrace stuck` lists at the end: (kind, name, problem, since, top cause, the
    first cause's detail), of one namespace (None: the cluster-scoped objects)."""
    columns, found = stuck(con).rows
    return sorted((r["kind"], r["name"], r["problem"], str(r["since"]), r["top_cause"], r["causes"][0]["detail"])
                  for r in (dict(zip(columns, row)) for row in found) if r["namespace"] == namespace)


def evidence_of(con: duckdb.DuckDBPyConnection, kind: str, name: str) -> list[tuple[str, str, str]]:
    (ids,) = rows(con, "SELECT causes[1].evidence FROM problems WHERE kind = ? AND name = ?", kind, name)[0]
    return rows(con, "SELECT kind, name, strftime(received_at, '%H:%M:%S') FROM raw_events "
                     "WHERE list_contains(?, event_id) ORDER BY event_id", ids)


def findings(con: duckdb.DuckDBPyConnection, ref: str, namespace: str | None = None) -> list[str]:
    story = explain(con, ref, namespace=namespace)[0]
    return [f.sentence for f in story.findings]


def test_the_recording_replays_whole(recorded: duckdb.DuckDBPyConnection) -> None:
    assert rows(recorded, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(recorded, "SELECT count(*), max(received_at) FROM raw_events") == [(448, END)]
    assert (DATA / "versions.txt").read_text().splitlines()[:3] == [
        f"{c} Kubernetes v1.37.2" for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")]


def test_the_scheduler_quotes_each_volume_plugin_that_refused(recorded: duckdb.DuckDBPyConnection) -> None:
    """Each pod's volume is refused on every kwok node by one plugin (silent-node is refused
    by its taint): an RWOP claim in use, an iSCSI disk in use on the pod's node, a PV in
    zone-b, a CSI driver whose only CSIStorageCapacity (100Mi) is under the claim's 1Gi, a
    claim whose PV was removed. The zone's message is the volume's node affinity, as the
    VolumeZone predicate's old name NoVolumeZoneConflict already was."""
    pods = [r for r in judged(recorded, "volumes") if r[0] == "Pod"]
    assert pods == [
        ("Pod", "disk-second", "pending", "2026-12-07 17:42:59", "unschedulable",
         "node_selector_mismatch, untolerated_taint, other — 0/4 nodes are available: 1 node(s) had no available "
         "disk, 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector. preemption: "
         "0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful for "
         "scheduling.; FailedScheduling, 2026-12-07T17:42:59Z"),
        ("Pod", "needs-space", "pending", "2026-12-07 17:42:59", "unschedulable",
         "other, untolerated_taint — 0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 node(s) did not "
         f"have enough free storage. {NO_FREE}; FailedScheduling ×3, 2026-12-07T17:42:59Z – 17:42:59Z"),
        ("Pod", "rwop-second", "pending", "2026-12-07 17:42:59", "unschedulable",
         "other, untolerated_taint — 0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 node(s) "
         "unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another "
         "pod. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption "
         "victims found for incoming pod.; FailedScheduling, 2026-12-07T17:42:59Z"),
        ("Pod", "uses-lost", "pending", "2026-12-07 17:43:02", "unschedulable",
         'pv_missing — 0/4 nodes are available: persistentvolumeclaim "lost" bound to non-existent '
         'persistentvolume "lost-pv". not found; FailedScheduling, 2026-12-07T17:43:02Z'),
        ("Pod", "zoned", "pending", "2026-12-07 17:42:59", "unschedulable",
         "volume_node_affinity, untolerated_taint — 0/4 nodes are available: 1 node(s) had untolerated taint(s), "
         f"3 node(s) had no available volume zone. {NO_FREE}; FailedScheduling ×3, 2026-12-07T17:42:59Z – "
         "17:42:59Z"),
    ]
    # the pod and the scheduler's Events about it (three attempts: the claim, then its PV, bound)
    assert evidence_of(recorded, "Pod", "zoned") == [
        ("Event", "zoned.18ef09a4bbe75903", "17:42:59"), ("Event", "zoned.18ef09a4bc76415c", "17:42:59"),
        ("Event", "zoned.18ef09a4bc76415c", "17:42:59"), ("Pod", "zoned", "17:42:59")]


def test_a_generic_ephemeral_volume_whose_claim_a_quota_forbids(recorded: duckdb.DuckDBPyConnection) -> None:
    """The ephemeral volume controller cannot create scratch-data (persistentvolumeclaims: 0),
    so the scheduler waits for it: the controller's FailedBinding on the pod says why, and
    decides."""
    quota = ('ephemeral volume data: create PVC scratch-data: persistentvolumeclaims "scratch-data" is forbidden: '
             "exceeded quota: none, requested: persistentvolumeclaims=1, used: persistentvolumeclaims=0, limited: "
             "persistentvolumeclaims=0")
    assert judged(recorded, "ephemeral") == [
        ("Pod", "scratch", "pending", "2026-12-07 17:43:03", "unschedulable",
         'unbound_pvc — 0/4 nodes are available: waiting for ephemeral volume controller to create the '
         'persistentvolumeclaim "scratch-data". not found; FailedScheduling, 2026-12-07T17:43:03Z; '
         f"FailedBinding ×15, 2026-12-07T17:43:03Z – 17:44:25Z: {quota}")]
    assert [kind for kind, _, _ in evidence_of(recorded, "Pod", "scratch")] == ["Event"] * 4 + ["Pod"]
    (story,) = explain(recorded, "pod/scratch", namespace="ephemeral")
    assert f"FailedBinding ×15, 2026-12-07T17:43:03Z – 17:44:25Z: {quota}" in story.findings[0].sentence


def test_a_gated_pod_waits_on_its_gates(recorded: duckdb.DuckDBPyConnection) -> None:
    """The API server writes PodScheduled=False SchedulingGated; the scheduler's own
    `waiting for scheduling gates: [...]` status is never written to the pod or an Event."""
    assert judged(recorded, "sched") == [
        ("Pod", "gated", "pending", "2026-12-07 17:42:54", "scheduling_gated",
         "waiting on scheduling gates example.com/approval — PodScheduled=False SchedulingGated — "
         "Scheduling is blocked due to non-empty scheduling gates")]
    assert rows(recorded, "SELECT count(*) FROM (SELECT message FROM conditions UNION ALL SELECT message "
                          "FROM k8s_events) WHERE message LIKE '%waiting for scheduling gates%'") == [(0,)]


def test_a_pod_preempted_by_the_scheduler(recorded: duckdb.DuckDBPyConnection, db_file: str) -> None:
    """`preemptor` (PriorityClass high) needs 24 of kwok-node-0's 32 CPUs that `victim` (low)
    holds: the scheduler marks the victim DisruptionTarget PreemptionByScheduler, writes the
    Preempted Event and deletes it; an outcome, never stuck."""
    assert rows(recorded, "SELECT r.name, o.problem, o.since, o.causes[1].detail FROM pod_outcomes_at(?) o "
                          "JOIN (SELECT DISTINCT uid, name FROM raw_events) r USING (uid)", END) == [
        ("victim", "preempted", datetime(2026, 12, 7, 17, 42, 56), PREEMPTED)]
    (story,) = explain(recorded, "pod/victim", namespace="sched")
    assert [(f.topic, f.sentence) for f in story.findings][0] == (
        "outcome", "Preempted at 2026-12-07T17:42:56Z: preempted — " + PREEMPTED)
    assert ("deletion_requested", "kube-scheduler (preemption)", "grace 5s") in [
        (s["step"], s["component"], s["detail"]) for s in story.timeline]
    (said,) = json.loads(run("explain", "pod/victim", "-n", "sched", "--db", db_file, "-o", "json"))
    assert said["findings"][0]["sentence"] == "Preempted at 2026-12-07T17:42:56Z: preempted — " + PREEMPTED


def test_claims_the_pv_controller_cannot_bind(recorded: duckdb.DuckDBPyConnection) -> None:
    """`no-class` (storageClassName "", no PV): the controller's FailedBinding — a Normal
    Event, repeated at every resync; `too-big` names small-pv (100Mi) for 1Gi: VolumeMismatch.
    Its class `manual` is no StorageClass — the static PVs' class needs none: not
    storage_class_missing."""
    claims = [r for r in judged(recorded, "volumes") if r[0] == "PersistentVolumeClaim" and r[2] == "claim_pending"]
    assert claims == [
        ("PersistentVolumeClaim", "no-class", "claim_pending", "2026-12-07 17:42:59", "provisioning_failed",
         "FailedBinding: no persistent volumes available for this claim and no storage class is set (×8)"),
        ("PersistentVolumeClaim", "too-big", "claim_pending", "2026-12-07 17:42:59", "provisioning_failed",
         'VolumeMismatch: Cannot bind to requested volume "small-pv": requested PV is too small (×8)')]
    assert findings(recorded, "pvc/too-big", "volumes") == [
        'Claim not bound for 1m34s (since 2026-12-07T17:42:59Z): provisioning_failed — VolumeMismatch: Cannot bind '
        'to requested volume "small-pv": requested PV is too small (×8)']


def test_claims_lost_and_a_volume_no_plugin_can_delete(recorded: duckdb.DuckDBPyConnection) -> None:
    """lost-pv removed while bound (its pv-protection finalizer dropped): `lost` is Lost;
    `second` says it is bound to shared-pv, whose claimRef is `first`: ClaimMisbound; nfs-pv
    (Delete) released by `scratch`: no plugin deletes NFS volumes, phase Failed."""
    assert [r for r in judged(recorded, "volumes") if r[2] == "lost"] == [
        ("PersistentVolumeClaim", "lost", "lost", "2026-12-07 17:43:01", "pvc_lost",
         "phase Lost — its volume lost-pv — ClaimLost: Bound claim has lost its PersistentVolume. Data on the "
         "volume is lost!"),
        ("PersistentVolumeClaim", "second", "lost", "2026-12-07 17:43:01", "pvc_lost",
         "phase Lost — its volume shared-pv — ClaimMisbound: Two claims are bound to the same volume, this one is "
         "bound incorrectly")]
    assert [r for r in judged(recorded) if r[0] == "PersistentVolume"] == [
        ("PersistentVolume", "nfs-pv", "failed", "2026-12-07 17:43:01", "pv_failed",
         'phase Failed — claim volumes/scratch, reclaim policy Delete — VolumeFailedDelete: error getting deleter '
         'volume plugin for volume "nfs-pv": no deletable volume plugin matched')]
    assert findings(recorded, "pvc/second", "volumes")[0].startswith(
        "Lost for 1m32s (since 2026-12-07T17:43:01Z): pvc_lost — phase Lost — its volume shared-pv — ClaimMisbound")


def test_pods_on_a_node_no_kubelet_ever_updated(recorded: duckdb.DuckDBPyConnection) -> None:
    """silent-node was created with no kubelet: 20 s later (--node-startup-grace-period) the
    node controller wrote Ready=Unknown NodeStatusNeverUpdated. `stranded` (bound by
    spec.nodeName) never starts; `leaving`, deleted, stays Terminating: nothing confirms."""
    assert judged(recorded, "nodes") == [
        ("Pod", "leaving", "terminating", "2026-12-07 17:43:23", "node_not_ready", NEVER),
        ("Pod", "stranded", "pending", "2026-12-07 17:43:16", "node_not_ready", NEVER)]
    assert evidence_of(recorded, "Pod", "stranded") == [
        ("Node", "silent-node", "17:43:17"), ("Pod", "stranded", "17:43:16")]
    (node,) = explain(recorded, "node/silent-node")
    assert ("condition", "Ready=Unknown NodeStatusNeverUpdated: Kubelet never posted node status.") in [
        (s["step"], s["detail"]) for s in node.timeline]


def test_a_job_suspended_then_resumed(recorded: duckdb.DuckDBPyConnection) -> None:
    """Created suspended at 17:43:03, resumed at 17:43:09 (the controller's Resumed Event):
    job_suspended between, nothing once it runs."""
    assert rows(recorded, "SELECT name, cause, stuck, since FROM object_findings_at(?) WHERE kind = 'Job'",
                datetime(2026, 12, 7, 17, 43, 6)) == [
        ("later", "job_suspended", False, datetime(2026, 12, 7, 17, 43, 3))]
    assert rows(recorded, "SELECT count(*) FROM object_findings_at(?) WHERE kind = 'Job'", END) == [(0,)]
    (job, _pod) = explain(recorded, "job/later", namespace="jobs")
    assert job.findings == []
    assert [s["detail"] for s in job.timeline if s["step"] in ("event", "condition")] == [
        "Suspended: Job suspended", "Suspended=True JobSuspended: Job suspended",
        "Suspended=False JobResumed: Job resumed", "SuccessfulCreate: Created pod: later-65jsj",
        "Resumed: Job resumed"]


def test_pods_a_controller_could_not_create(recorded: duckdb.DuckDBPyConnection, db_file: str) -> None:
    """The StatefulSet's pod is over the namespace's quota (pods: 0); the ReplicaSet's is denied
    by the validating webhook (webhook.py): each with the controller's FailedCreate — and the
    Deployment with the ReplicaFailure condition its controller copies from the ReplicaSet."""
    assert judged(recorded, "sts") == [
        ("StatefulSet", "db", "not_created", "2026-12-07 17:43:10", "not_created",
         'quota — 0 of 1 pods — Create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: exceeded quota: '
         "none, requested: pods=1, used: pods=0, limited: pods=0 (×15)")]
    assert judged(recorded, "webhook") == [
        ("Deployment", "web", "not_created", "2026-12-07 17:43:15", "not_created",
         f"webhook_denied — 0 of 1 pods — FailedCreate: {DENIED}"),
        ("ReplicaSet", "web-857bb4bd9d", "not_created", "2026-12-07 17:43:15", "not_created",
         f"webhook_denied — 0 of 1 pods — Error creating: {DENIED} (×14)")]
    assert evidence_of(recorded, "ReplicaSet", "web-857bb4bd9d") == [
        ("Event", "web-857bb4bd9d.18ef09a865343928", "17:43:25"),
        ("Event", "web-857bb4bd9d.18ef09a865343928", "17:43:35"),
        ("Event", "web-857bb4bd9d.18ef09a865343928", "17:43:56"), ("ReplicaSet", "web-857bb4bd9d", "17:43:15")]
    table = run("explain", "sts/db", "-n", "sts", "--db", db_file)
    assert "not_created" in table and 'pods "db-0" is forbidden: exceeded quota: none' in table
    (story,) = explain(recorded, "deploy/web", namespace="webhook")
    assert [f.sentence for f in story.findings] == [
        f"Cannot create its pods for 1m18s (since 2026-12-07T17:43:15Z): not_created — webhook_denied — 0 of 1 pods — "
        f"FailedCreate: {DENIED}"]
    assert story.findings[0].advice.startswith("a validating or mutating admission webhook (named in the message)")
    assert DENIED in run("explain", "deploy/web", "-n", "webhook", "--db", db_file)


def test_a_namespace_whose_content_a_webhook_will_not_delete(recorded: duckdb.DuckDBPyConnection) -> None:
    """The namespace controller's DELETE of ConfigMap settings is denied by the webhook: the
    namespace stays Terminating with NamespaceDeletionContentFailure ContentDeletionFailed."""
    assert [r for r in judged(recorded) if r[0] == "Namespace"] == [
        ("Namespace", "frozen", "terminating", "2026-12-07 17:43:15", "namespace_content", CONTENT)]
    assert rows(recorded, "SELECT c.status, c.reason FROM conditions c JOIN raw_events r USING (event_id) "
                          "WHERE r.name = 'frozen' AND c.type = 'NamespaceDeletionContentFailure' "
                          "ORDER BY c.event_id DESC LIMIT 1") == [("True", "ContentDeletionFailed")]
    assert findings(recorded, "ns/frozen") == [
        f"Stuck Terminating for 1m18s (since 2026-12-07T17:43:15Z): namespace_content — {CONTENT}"]
    (story,) = explain(recorded, "ns/frozen")
    assert "ContentDeletionFailed — often an admission webhook denying DELETE" in story.findings[0].advice


def test_a_volume_whose_recycler_pod_a_quota_forbids(tmp_path: Path) -> None:
    """recycle/: recycled-pv (policy Recycle) released by its claim; the PV controller's
    recycler pod is over namespace default's quota (pods: 0): VolumeFailedRecycle, phase
    Failed — the quota's text decides."""
    con = load_recording(str(tmp_path / "recycle.duckdb"), str(DATA / "recycle" / "recording"))
    try:
        assert rows(con, "SELECT count(*), max(received_at) FROM raw_events") == [
            (87, datetime(2026, 12, 7, 18, 1, 45, 178280))]
        assert judged(con) == [
            ("PersistentVolume", "recycled-pv", "failed", "2026-12-07 18:01:25", "pv_failed",
             "phase Failed — claim recycle/data, reclaim policy Recycle — VolumeFailedRecycle: Recycle failed: "
             'unexpected error creating recycler pod:  pods "recycler-for-recycled-pv" is forbidden: exceeded '
             "quota: none, requested: pods=1, used: pods=0, limited: pods=0")]
        (story,) = explain(con, "pv/recycled-pv")
        assert "VolumeFailedRecycle — the recycler pod could not be created" in story.findings[0].advice
        assert [s["detail"] for s in story.timeline if s["step"] == "phase"] == [
            "Pending", "Available", "Bound", "Released", "Failed"]
    finally:
        con.close()


def test_a_claim_whose_volume_was_deleted_before_the_pv_controller_marked_it_lost(
        recorded: duckdb.DuckDBPyConnection) -> None:
    """volumes/lost: lost-pv's DELETED (17:43:01.696) comes 7 ms before the PV controller
    writes the claim Lost (17:43:01.703): judged between the two, the claim is still Bound to
    a volume that is gone — the deletion named, its record the evidence; after, pvc_lost."""
    between = datetime(2026, 12, 7, 17, 43, 1, 700000)
    found = rows(recorded, "SELECT f.name, f.since, f.detail, list(r.kind || ' ' || r.type ORDER BY e.n) "
                           "FROM object_findings_at(?) f, unnest(f.evidence) WITH ORDINALITY e(id, n) "
                           "JOIN raw_events r ON r.event_id = e.id "
                           "WHERE f.cause = 'volume_missing' GROUP BY ALL", between)
    assert found == [
        ("lost", datetime(2026, 12, 7, 17, 43, 1, 696133),
         "phase Bound, its volume lost-pv — PersistentVolume lost-pv deleted at 2026-12-07T17:43:01Z "
         "(kube-apiserver: removed after deletionTimestamp (grace period over))",
         ["PersistentVolumeClaim MODIFIED", "PersistentVolume DELETED"])]
    assert rows(recorded, "SELECT count(*) FROM object_findings_at(data_end()) WHERE cause = 'volume_missing'") == [
        (0,)]


def test_a_claim_naming_a_volume_another_claim_holds(recorded: duckdb.DuckDBPyConnection) -> None:
    """volumes/second names shared-pv, whose spec.claimRef is volumes/first: from its ADDED
    (17:43:01.219) until the PV controller writes it Lost with ClaimMisbound (17:43:01.228)
    it is a claim whose volume is bound to another — stuck, the volume's version the
    evidence; after, pvc_lost (test_claims_lost_and_a_volume_no_plugin_can_delete)."""
    between = datetime(2026, 12, 7, 17, 43, 1, 225000)
    found = rows(recorded, "SELECT p.name, p.problem, p.since, p.top_cause, c.detail, "
                           "  list(r.kind || ' ' || r.name || ' ' || r.type ORDER BY e.n) "
                           "FROM problems_at(?) p, unnest(p.causes) u(c), "
                           "  unnest(c.evidence) WITH ORDINALITY e(id, n) "
                           "JOIN raw_events r ON r.event_id = e.id "
                           "WHERE p.top_cause = 'volume_misbound' GROUP BY ALL", between)
    assert found == [
        ("second", "volume_misbound", datetime(2026, 12, 7, 17, 43, 1, 218990), "volume_misbound",
         "phase Pending, its volume shared-pv is bound to claim volumes/first (its spec.claimRef)",
         ["PersistentVolumeClaim second ADDED", "PersistentVolume shared-pv MODIFIED"])]
    assert rows(recorded, "SELECT name, cause FROM object_findings_at(data_end()) "
                          "WHERE name = 'second'") == [("second", "pvc_lost")]


def test_a_refused_binding_and_a_claim_bound_to_no_volume(tmp_path: Path) -> None:
    """binding/: the scheduler's Bind is denied by the webhook (PodScheduled=False
    SchedulerError): its own failure, not the nodes'; a claim Bound to PV ghost-pv, which
    does not exist (no PV controller to mark it Lost): VolumeZone's lookup of it decides."""
    con = load_recording(str(tmp_path / "binding.duckdb"), str(DATA / "binding" / "recording"))
    bind = ('running Bind plugin "DefaultBinder": admission webhook "deny-binding.freeze.ktrace.test" denied '
            "the request: CREATE of pods in namespace binding is frozen by policy")
    try:
        assert rows(con, "SELECT count(*), max(received_at) FROM raw_events") == [
            (126, datetime(2026, 12, 7, 21, 10, 35, 417227))]
        assert rows(con, "SELECT c.reason, c.message FROM conditions c JOIN raw_events r USING (event_id) "
                         "WHERE r.name = 'refused' AND c.type = 'PodScheduled'") == [("SchedulerError", bind)]
        assert judged(con, "binding") == [
            ("Pod", "refused", "pending", "2026-12-07 21:09:19", "unschedulable",
             f"scheduler_error — {bind}; FailedScheduling ×3, 2026-12-07T21:09:19Z – 21:09:24Z")]
        assert judged(con, "ghost") == [
            ("PersistentVolumeClaim", "orphan", "volume_missing", "2026-12-07 21:09:20.132835", "volume_missing",
             ORPHAN),
            ("Pod", "uses-orphan", "pending", "2026-12-07 21:09:20", "unschedulable",
             f"pv_missing — {NO_PV}; FailedScheduling ×2, 2026-12-07T21:09:20Z – 21:09:20Z")]
        (story,) = explain(con, "pod/refused", namespace="binding")
        assert story.findings[0].advice.startswith("the scheduler itself failed (PodScheduled=False "
                                                   "SchedulerError), not the nodes")
        (story,) = explain(con, "pod/uses-orphan", namespace="ghost")
        assert story.findings[0].advice.startswith("a claim of the pod is bound to a PersistentVolume "
                                                   "that does not exist")
        assert rows(con, "SELECT count(*) FROM k8s_events WHERE message LIKE '%non-existent pv(s)%'") == [(0,)]
    finally:
        con.close()


NO_PV = '0/1 nodes are available: persistentvolume "ghost-pv" not found. not found'
#: binding/'s claim ghost/orphan as its records read: Bound (the kubectl-patch at 21:09:20.13)
#: to ghost-pv, which no PersistentVolume record names; uses-orphan refused on it
ORPHAN = ("phase Bound, its volume ghost-pv — no PersistentVolume of that name was recorded — pods waiting "
          f"on it: uses-orphan (Pending, Unschedulable: {NO_PV})")


def test_a_claim_bound_to_no_volume_is_explained(tmp_path: Path) -> None:
    """binding/'s claim ghost/orphan: its own finding names the volume, that no PV of that
    name was ever recorded (the PV topic was: its list markers are there), and the pod
    waiting on it — its latest version and the pod's as evidence, in every output form."""
    db_file = str(tmp_path / "binding.duckdb")
    con = load_recording(db_file, str(DATA / "binding" / "recording"))
    try:
        assert rows(con, "SELECT count(*), count(name) FROM raw_events WHERE kind = 'PersistentVolume'") == [(3, 0)]
        assert rows(con, "SELECT v.phase, v.volume_name, r.component FROM raw_events r JOIN volumes v "
                         "USING (event_id) WHERE r.name = 'orphan' ORDER BY r.event_id DESC LIMIT 1") == [
            ("Bound", "ghost-pv", "kube-controller-manager")]
        (story,) = explain(con, "pvc/orphan", namespace="ghost")
        (pod,) = explain(con, "pod/uses-orphan", namespace="ghost")
    finally:
        con.close()
    (finding,) = story.findings
    since = "2026-12-07T21:09:20.132835Z"  # the version the kubectl-patch wrote Bound
    assert finding.sentence == f"Bound to a missing volume for 1m15s (since {since}): volume_missing — {ORPHAN}"
    assert finding.evidence == ["pvc:99b45068:5", "po:99b45068:5"]
    assert finding.advice.startswith("restore a PersistentVolume of the name the claim gives")
    assert [step["step"] for step in story.timeline] == ["created", "phase", "phase", "condition", "condition"]
    assert f"Its claim ghost/orphan: volume_missing — {ORPHAN}" in [f.sentence for f in pod.findings]
    (said,) = json.loads(run("explain", "pvc/orphan", "-n", "ghost", "--db", db_file, "-o", "json"))
    assert [(f["topic"], f["evidence"]) for f in said["findings"]] == [
        ("stuck", ["pvc:99b45068:5", "po:99b45068:5"])]
    table = run("explain", "pvc/orphan", "-n", "ghost", "--db", db_file)
    assert f"volume_missing — {ORPHAN} [evidence pvc:99b45068:5, po:99b45068:5]" in table
    listed = json.loads(run("stuck", "-n", "ghost", "--db", db_file, "-o", "json"))
    assert [(r["name"], r["problem"], r["causes"][0]["detail"]) for r in listed if r["kind"] != "Pod"] == [
        ("orphan", "volume_missing", ORPHAN)]


def own_recording(tmp_path: Path, name: str, records: int, last: datetime) -> tuple[str, duckdb.DuckDBPyConnection]:
    """DATA/NAME/recording (a control plane of its own) loaded into a database of its own: its
    file and a connection, checked to hold RECORDS records up to LAST, as its EXPECTED.md reads."""
    db_file = str(tmp_path / f"{name}.duckdb")
    con = load_recording(db_file, str(DATA / name / "recording"))
    assert rows(con, "SELECT count(*), max(received_at) FROM raw_events") == [(records, last)]
    return db_file, con


#: novolumezone/'s pod ghost/uses-orphan as its records read: VolumeBinding's Filter, VolumeZone disabled
NOT_EXIST = ("0/1 nodes are available: 1 node(s) unavailable due to one or more pvc(s) bound to non-existent "
             "pv(s). preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_a_profile_without_volume_zone_refuses_every_node_for_a_missing_volume(tmp_path: Path) -> None:
    """novolumezone/: a scheduler profile without VolumeZone; claim ghost/orphan Bound to
    ghost-pv, which does not exist (no PV controller to mark it Lost): the VolumeBinding
    Filter's `bound to non-existent pv(s)` is pv_missing, quoted in stuck and explain."""
    db_file, con = own_recording(tmp_path, "novolumezone", 112, datetime(2026, 12, 7, 23, 46, 43, 691729))
    try:
        assert rows(con, "SELECT count(*), count(name) FROM raw_events WHERE kind = 'PersistentVolume'") == [(4, 0)]
        assert rows(con, "SELECT reason, message, count, component FROM k8s_events "
                         "WHERE regarding_name = 'uses-orphan'") == [
            ("FailedScheduling", NOT_EXIST, 1, "default-scheduler")]
        assert judged(con, "ghost") == [
            ("PersistentVolumeClaim", "orphan", "volume_missing", "2026-12-07 23:45:28.471596", "volume_missing",
             f"phase Bound, its volume ghost-pv — no PersistentVolume of that name was recorded — pods waiting "
             f"on it: uses-orphan (Pending, Unschedulable: {NOT_EXIST})"),
            ("Pod", "uses-orphan", "pending", "2026-12-07 23:45:28", "unschedulable",
             f"pv_missing — {NOT_EXIST}; FailedScheduling, 2026-12-07T23:45:28Z")]
        (story,) = explain(con, "pod/uses-orphan", namespace="ghost")
    finally:
        con.close()
    stuck_finding = story.findings[0]
    assert stuck_finding.sentence == (
        "Not running (Pending) for 1m16s (since 2026-12-07T23:45:28Z): unschedulable — pv_missing — "
        f"{NOT_EXIST}; FailedScheduling, 2026-12-07T23:45:28Z")
    assert stuck_finding.evidence == ["po:42c2537a:3", "ev:42c2537a:3"]
    assert stuck_finding.advice.startswith("a claim of the pod is bound to a PersistentVolume that does not exist")
    (said,) = json.loads(run("explain", "pod/uses-orphan", "-n", "ghost", "--db", db_file, "-o", "json"))
    assert said["findings"][0]["sentence"] == stuck_finding.sentence
    table = run("stuck", "-n", "ghost", "--db", db_file)
    assert "uses-orphan  pending         1m16s      unschedulable" in table


#: groupversion/'s namespace `blocked` as its records read: the condition the namespace controller wrote
UNPARSED = "NamespaceDeletionGroupVersionParsingFailure: unexpected GroupVersion string: widgets.ktrace.test/v1/v1"


def test_a_group_version_that_does_not_parse_stops_every_namespace_deletion(tmp_path: Path) -> None:
    """groupversion/: namespace `tidy` goes while an extension API server's own discovery
    says a malformed groupVersion (the aggregator lists its APIService's instead); namespace
    `blocked`, deleted once a CRD whose group holds a `/` is in the store, stays Terminating
    with NamespaceDeletionGroupVersionParsingFailure True, its pod untouched: `stuck` and
    `explain` name the condition with its message, sub-reason group_version."""
    db_file, con = own_recording(tmp_path, "groupversion", 141, datetime(2026, 12, 7, 23, 59, 6, 894347))
    try:
        assert rows(con, "SELECT DISTINCT r.name, c.status, c.reason, c.message FROM conditions c "
                         "JOIN raw_events r USING (event_id) "
                         "WHERE c.type = 'NamespaceDeletionGroupVersionParsingFailure' ORDER BY r.name DESC") == [
            ("tidy", "False", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
            ("blocked", "True", "GroupVersionParsingFailed", "unexpected GroupVersion string: widgets.ktrace.test/v1/v1")]
        assert rows(con, "SELECT type FROM raw_events WHERE name = 'tidy' ORDER BY event_id DESC LIMIT 1") == [
            ("DELETED",)]
        # the controller deleted nothing in `blocked`: its pod is still running, no DELETE for it
        assert rows(con, "SELECT type, deletion_at FROM raw_events WHERE kind = 'Pod' AND namespace = 'blocked' "
                         "ORDER BY event_id DESC LIMIT 1") == [("MODIFIED", None)]
        assert judged(con, None) == [
            ("Namespace", "blocked", "terminating", "2026-12-07 23:57:51", "namespace_content",
             f"group_version — {UNPARSED}; 1 recorded objects remain")]
        (story,) = explain(con, "ns/blocked")
    finally:
        con.close()
    (finding,) = story.findings
    # a Namespace's deletion has no grace period (only a Pod's does): none is named
    assert [(s["step"], s["component"], s["detail"]) for s in story.timeline
            if s["step"] == "deletion_requested"] == [("deletion_requested", "kube-apiserver", "no grace period")]
    assert finding.sentence == (f"Stuck Terminating for 1m16s (since 2026-12-07T23:57:51Z): namespace_content — "
                                f"group_version — {UNPARSED}; 1 recorded objects remain")
    assert finding.evidence == ["ns:4e399949:14"]
    assert finding.advice.startswith("API discovery lists a group whose groupVersion does not parse")
    (said,) = json.loads(run("explain", "ns/blocked", "--db", db_file, "-o", "json"))
    assert [(f["sentence"], f["evidence"]) for f in said["findings"]] == [(finding.sentence, ["ns:4e399949:14"])]
    table = run("explain", "ns/blocked", "--db", db_file)
    assert "no grace period" in table and "grace 0s" not in table
    assert ("NamespaceDeletionGroupVersionParsingFailure=True GroupVersionParsingFailed: unexpected GroupVersion "
            "string: widgets.ktrace.test/v1/v1") in table
    listed = json.loads(run("stuck", "--db", db_file, "-o", "json"))
    assert [(r["name"], r["causes"][0]["detail"]) for r in listed] == [
        ("blocked", f"group_version — {UNPARSED}; 1 recorded objects remain")]


#: attached/'s VolumeAttachment, as the attach/detach controller named it
ATTACHMENT = "csi-89ea9bc8b6dd2684e5afbe07b384373f2a237840b989b1f8a74417fa824f11b7"


def test_a_volume_still_attached_to_a_pod_that_does_not_stop(tmp_path: Path) -> None:
    """attached/: pod attached/db deleted while its container keeps running (kwok's 900 s
    stop delay) and its CSI volume's VolumeAttachment says attached (written as an
    external-attacher writes it): volume_detach names the attachment and its volume, ranked
    below the containers that do not exit — in stuck and explain alike."""
    db_file, con = own_recording(tmp_path, "attached", 145, datetime(2026, 12, 8, 0, 9, 20, 377189))
    try:
        assert rows(con, "SELECT r.name, r.component, v.pv_name, v.node_name, v.attached FROM raw_events r "
                         "JOIN volumes v USING (event_id) WHERE r.kind = 'VolumeAttachment' ORDER BY r.event_id") == [
            (ATTACHMENT, "kube-controller-manager", "disk-pv", "kwok-node-0", False),
            (ATTACHMENT, "kubectl-patch", "disk-pv", "kwok-node-0", True)]
        assert rows(con, "SELECT reason, message, component FROM k8s_events WHERE regarding_name = 'db' "
                         "AND reason <> 'Scheduled'") == [
            # the controller's message ends with a space: held trimmed (clean_message)
            ("SuccessfulAttachVolume", 'AttachVolume.Attach succeeded for volume "disk-pv"',
             "attachdetach-controller")]
        (story,) = explain(con, "pod/db", namespace="attached")
    finally:
        con.close()
    causes = [("containers_not_exiting", 45, "containers still running past the grace period: app",
               ["po:7f52bbe9:5"]),
              ("volume_detach", 40, f"still attached: {ATTACHMENT} (disk-pv)", ["volumeattachments:7f52bbe9:3"])]
    (listed,) = json.loads(run("stuck", "-n", "attached", "--db", db_file, "-o", "json"))
    assert (listed["name"], listed["problem"], listed["since"]) == ("db", "terminating", "2026-12-08T00:08:10.000000Z")
    assert [(c["cause"], c["score"], c["detail"], c["evidence"]) for c in listed["causes"]] == causes
    since = "Stuck Terminating for 1m10s (since 2026-12-08T00:08:10Z)"
    assert [(f.sentence, f.evidence) for f in story.findings[:2]] == [
        (f"{since}: {cause} — {detail}", evidence) for cause, _, detail, evidence in causes]
    assert story.findings[1].advice == "check the CSI driver / attacher for the VolumeAttachment named above"
    # a kind kubectl has no short name for keeps its resource as the id's prefix (as jobs:,
    # leases:); `ktrace evidence` takes it, and the singular too
    for cited in ("volumeattachments:7f52bbe9:3", "volumeattachment:7f52bbe9:3"):
        record = json.loads(run("evidence", cited, "--db", db_file, "-o", "json"))
        assert (record["kind"], record["name"], record["type"]) == ("VolumeAttachment", ATTACHMENT, "MODIFIED")
