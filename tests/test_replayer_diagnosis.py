"""Issue 8's diagnoses, exact rows, on recordings of the real control plane
(tests/data/replayer/{pending,midlife,crashed,edge}, made by capture_pending.py; what an
expert reads from each is in its EXPECTED.md). The real scheduler and controllers wrote the
scheduling, quota and rollout facts; kwok stands in for the kubelet (container states and
Events with the kubelet's reasons and message formats)."""

from __future__ import annotations

from datetime import datetime

from replayer import db
from replayer.analyses.timeline import timeline
from replayer.loader import Loader
from transports.locallog.source import LocalLogSource
from tests.replayer_data import recording, rows

PROBLEMS = ("SELECT kind, namespace, name, problem, top_cause, [c.cause FOR c IN causes] "
            "FROM problems ORDER BY kind, namespace, name")


def details(con, name: str, namespace: str | None = None) -> list[str]:
    return [d for (d,) in rows(con, "SELECT unnest([c.detail FOR c IN causes]) FROM problems "
                                    "WHERE name = ? AND (? IS NULL OR namespace = ?)",
                               name, namespace, namespace)]


def test_pods_that_never_start_or_get_ready(pending):
    assert rows(pending, PROBLEMS) == [
        # the quota's FailedCreate, on the Deployment as its controller copies ReplicaFailure
        ("Deployment", "quota", "web", "not_created", "not_created", ["not_created"]),
        ("Deployment", "stalled", "web", "rollout_stalled", "rollout_stalled", ["rollout_stalled"]),
        # the claim the pod pvc-missing-class waits on, followed to its own cause
        ("PersistentVolumeClaim", "pending", "claim-missing-class", "claim_pending",
         "storage_class_missing", ["storage_class_missing"]),
        ("Pod", "pending", "config-error", "pending", "container_config", ["container_config"]),
        ("Pod", "pending", "cpu", "pending", "unschedulable", ["unschedulable"]),
        ("Pod", "pending", "crashloop", "not_ready", "crash_loop", ["crash_loop"]),
        ("Pod", "pending", "image-pull", "pending", "image_pull", ["image_pull"]),
        ("Pod", "pending", "init-crashloop", "pending", "init_container", ["init_container"]),
        ("Pod", "pending", "oomkilled", "not_ready", "oom_killed", ["oom_killed"]),
        ("Pod", "pending", "pvc-missing-class", "pending", "unschedulable", ["unschedulable"]),
        ("Pod", "pending", "pvc-no-pv", "pending", "unschedulable", ["unschedulable"]),
        ("Pod", "pending", "run-error", "not_ready", "run_container_error", ["run_container_error"]),
        ("Pod", "pending", "selector", "pending", "unschedulable", ["unschedulable"]),
        ("Pod", "pending", "taint", "pending", "unschedulable", ["unschedulable"]),
        ("Pod", "pending", "unready", "not_ready", "readiness", ["readiness"]),
        ("Pod", "stalled", "web-7554c899cb-nj2vf", "not_ready", "readiness", ["readiness"]),
        ("ReplicaSet", "quota", "web-857bb4bd9d", "not_created", "not_created", ["not_created"]),
    ]


def test_each_cause_says_what_the_evidence_says(pending):
    def first(name: str, namespace: str | None = None) -> str:
        return details(pending, name, namespace)[0]
    assert first("cpu").startswith("insufficient_cpu — 0/3 nodes are available: 3 Insufficient cpu.")
    assert first("selector").startswith("node_selector_mismatch — ")
    assert first("taint").startswith("node_selector_mismatch, untolerated_taint — ")
    assert first("pvc-missing-class").startswith("unbound_pvc — ")
    assert first("pvc-no-pv").startswith("unbound_pvc — 0/3 nodes are available: 3 node(s) "
                                         "didn't find available persistent volumes to bind.")
    assert 'registry.example/missing:1' in first("image-pull")
    assert first("crashloop").startswith("app: CrashLoopBackOff, 3 restarts, last exit 1 (Error)")
    assert first("oomkilled").startswith("app: CrashLoopBackOff, 3 restarts, last exit 137 "
                                         "(OOMKilled)")
    assert "; memory limit 64Mi; no owner recorded: the pod's own spec sets it; " in first("oomkilled")
    assert first("init-crashloop").startswith("crash_loop — init container init-db: "
                                              "CrashLoopBackOff, 3 restarts, last exit 1 (Error)")
    assert first("config-error").startswith('app: CreateContainerConfigError, configmap '
                                            '"app-config" not found')
    assert first("run-error").startswith("app: RunContainerError, last exit 128 (StartError)")
    assert first("unready") == ("Unhealthy, 2026-12-01T09:57:09Z: Readiness probe failed: "
                                "HTTP probe failed with statuscode: 503")
    assert "exceeded quota: no-pods" in first("web-857bb4bd9d", "quota")
    assert first("web", "quota") == ('quota — 0 of 2 pods — FailedCreate: pods "web-857bb4bd9d-fhxp4" is forbidden: '
                                     "exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0")
    assert first("web", "stalled") == ("ProgressDeadlineExceeded: ReplicaSet \"web-7554c899cb\" has timed "
                            "out progressing.")


def test_evidence_records_are_about_the_object(pending):
    for uid, kind, evidence in rows(pending, "SELECT uid, kind, flatten([c.evidence FOR c IN "
                                             "causes]) FROM problems"):
        found = rows(pending, "SELECT DISTINCT kind FROM raw_events WHERE list_contains(?, "
                              "event_id) ORDER BY kind", evidence)
        assert found and {k for (k,) in found} <= {kind, "Event"}, (uid, found)


def test_pending_and_terminating_filters_and_a_healthy_pod(pending):
    kinds = rows(pending, "SELECT DISTINCT problem FROM problems_at(data_end()) ORDER BY 1")
    assert kinds == [("claim_pending",), ("not_created",), ("not_ready",), ("pending",),
                     ("rollout_stalled",)]
    names = {n for (n,) in rows(pending, "SELECT name FROM problems")}
    assert not names & {"sidecar", "pull-start", "running"}


def test_image_pull_time_is_a_startup_step(pending):
    steps = [s for (s,) in rows(pending, "SELECT step FROM pod_transitions WHERE pod = "
                                         "'pull-start' ORDER BY step_no")]
    assert steps == ["created", "scheduled", "pulling", "pulled", "running", "ready"]
    assert rows(pending, "SELECT pull_s FROM pod_lifecycle WHERE pod = 'pull-start'") == [(5.87,)]
    assert rows(pending, "SELECT count(*) FROM gaps WHERE category = 'slow'") == [(0,)]


def test_a_recording_started_mid_life_derives_the_earlier_steps(midlife):
    assert rows(midlife, "SELECT count(*) FROM gaps WHERE category IN ('slow', 'unknown')") == [(0,)]
    assert rows(midlife, "SELECT count(*) FROM problems") == [(0,)]
    steps = rows(midlife, "SELECT step, time, derived, detail FROM pod_transitions "
                          "WHERE pod = 'flaky' ORDER BY step_no")
    derived = [s for s, _, d, _ in steps if d]
    assert derived == ["created", "scheduled", "running", "restarted", "ready"]
    assert steps[0][1] == datetime(2026, 12, 1, 9, 58, 31)  # creationTimestamp
    assert ("running", datetime(2026, 12, 1, 9, 58, 33), True, None) in steps  # startTime
    first_seen = [t for s, t, _, _ in steps if s == "first_seen"]
    assert first_seen and first_seen[0] > datetime(2026, 12, 1, 10, 1, 11)
    restarts = [(t, d, detail) for s, t, d, detail in steps if s == "restarted"]
    assert restarts == [
        (datetime(2026, 12, 1, 10, 0, 43), True,
         "app: 3 restarts before first seen; last exit 1 (Error)"),
        (restarts[1][0], False, "app: restart 4; last exit 1 (Error)")]
    assert rows(midlife, "SELECT run_at, restarts FROM pod_lifecycle WHERE pod = 'flaky'") == [
        (datetime(2026, 12, 1, 9, 58, 33), 4)]


def test_a_recorder_crash_is_a_session_loss_not_a_hole_and_not_slowness(crashed):
    unseen = rows(crashed, "SELECT type, round(seconds, 1) FROM gaps WHERE category = 'unseen'")
    assert unseen == [("session_lost", 14.1)]
    assert rows(crashed, "SELECT count(*) FROM gaps WHERE category = 'slow'") == [(0,)]
    assert rows(crashed, "SELECT count(*) FROM gaps WHERE category = 'unknown'") == [(0,)]
    # the pods made while it was down: their status writes (managedFields) came within a
    # second of their containers' starts; the 11-12 s until the recorder saw them are its own
    made_while_down = rows(crashed, "SELECT pod, run_to_api_s, round(api_to_watch_s) "
                                    "FROM pod_lifecycle WHERE api_to_watch_s > 5 ORDER BY pod")
    assert made_while_down == [(n, 0.0, 12.0 if n == "during-0" else 11.0) for n in (
        "during-0", "during-1", "during-2", "web-857bb4bd9d-22cst", "web-857bb4bd9d-kphzd")]
    assert rows(crashed, "SELECT count(*) FROM duplicate_sequence") == [(9,)]


def test_a_force_delete_on_a_lost_node_is_the_clients(edge):
    assert rows(edge, "SELECT component FROM pod_transitions WHERE pod = 'stranded' "
                      "AND step = 'deleted'") == [("client (force delete)",)]
    # this recording was made before the recorder's rule was fixed: its stored attribution
    # still names the node agent, and the replayer's reading (a grace-0 DELETE while the
    # node was not Ready) is what corrects it
    assert rows(edge, "SELECT component, attribution FROM raw_events WHERE kind = 'Pod' "
                      "AND name = 'stranded' AND type = 'DELETED'") == [
        ("kube-controller-manager", "removed after the grace-0 DELETE of the node agent of "
                                    "kwok-node-2 (last status writer kube-controller-manager)")]


def test_the_taint_eviction_controllers_events_are_steps_of_the_pod_they_name(evicted, edge):
    """Its Events' reference names the pod without a uid (pkg/controller/tainteviction:
    emitPodDeletionEvent): the pod of that name. "Marking for deletion" comes right before
    the DELETE it requested; "Cancelling deletion" after stranded's force delete (EXPECTED.md:
    the controller called off its own scheduled eviction; it did not delete the pod)."""
    assert rows(evicted, "SELECT pod, step, component FROM pod_transitions "
                         "WHERE component = 'taint-eviction-controller' ORDER BY pod, step_no") == [
        (pod, step, "taint-eviction-controller")
        for pod in ("web-6b47756fff-gdwqw", "web-76947d6dcf-2xgbx", "web-76947d6dcf-vtqjc")
        for step in ("taint_eviction", "deletion_requested")]
    assert rows(edge, "SELECT step, component, detail FROM pod_transitions WHERE pod = 'stranded' "
                      "AND step_no >= (SELECT step_no FROM pod_transitions WHERE pod = 'stranded' "
                      "AND step = 'deletion_requested') ORDER BY step_no") == [
        ("deletion_requested", "kube-apiserver", "grace 5s; requester unknown (a DELETE; no audit log)"),
        ("deleted", "client (force delete)", None),
        ("taint_eviction_cancelled", "taint-eviction-controller",
         "Cancelling deletion of Pod edge/stranded: its scheduled eviction called off (the taint "
         "went, the pod went, or its eviction was rescheduled)")]


def test_exit_137_at_the_deadline_did_not_exit_on_sigterm(edge):
    assert rows(edge, "SELECT stop_verdict FROM pod_lifecycle WHERE pod = 'stubborn'") == [
        ("did not exit on SIGTERM; killed at the deadline",)]


def test_a_claim_held_by_pvc_protection_names_the_pod_using_it(edge):
    assert details(edge, "data") == [
        "waiting for finalizers kubernetes.io/pvc-protection (added by kube-apiserver "
        "admission); still used by Pod/uses-data"]


def test_namespace_content_of_kinds_ktrace_did_not_record(edge):
    assert details(edge, "doomed")[0].endswith("not recorded by ktrace: configmaps")


def test_a_reused_name_is_two_pods(edge):
    found = rows(edge, "SELECT uid, list(step ORDER BY step_no) FROM pod_transitions "
                       "WHERE pod = 'reused' GROUP BY uid ORDER BY min(time)")
    assert [steps[-1] for _, steps in found] == ["deleted", "ready"]
    assert found[0][0] != found[1][0]


def test_the_timeline_of_a_reused_name_is_two_pods_by_uid(edge):
    columns, found = timeline(edge, "reused")
    assert columns[:3] == ["namespace", "pod", "uid"] and len({r[2] for r in found}) == 2
    _, found = timeline(edge, "stubborn")
    assert len({r[2] for r in found}) == 1


def test_a_name_reused_before_the_old_pods_deletion_was_seen_ends_its_timeline(tmp_path):
    """Drop the first `reused` pod's DELETED from the recording: the new pod of the same name
    is the evidence that the old one was gone, and its timeline says so."""
    source = LocalLogSource(recording("edge"))
    kept = [d for d in source.read(source.topics("ktrace"))
            if not (d.record and d.record.get("name") == "reused" and d.record["type"] == "DELETED"
                    and d.record["uid"].startswith("36ee2731"))]
    con = db.open_db(str(tmp_path / "reused.duckdb"))
    Loader(con, "edge without a DELETED").load(kept)
    last = rows(con, "SELECT step, component, detail FROM pod_transitions "
                     "WHERE uid LIKE '36ee2731%' ORDER BY step_no DESC LIMIT 1")
    assert last == [("deleted", "unknown", "name reused by pod "
                     "d208f561-c0bb-45e4-bab4-7f8c0adddae8: its deletion was not seen")]


def test_a_pod_deleted_before_its_image_was_pulled_never_started(tmp_path):
    """The recorded image-pull pod (ErrImagePull ⇄ ImagePullBackOff), then deleted as the
    v1.37 kubelet ends it: every container terminated with its stand-in (status_manager.go:
    ContainerStatusUnknown, exit 137, "could not be located when the pod was terminated"),
    phase Failed, then DELETED. Its containers never ran: not 'exited cleanly', not killed."""
    import json
    from replayer.replay import import_captures
    from tests.replayer_data import DATA
    lines = [json.loads(line) for line in open(DATA / "pending" / "kubectl" / "pods.json")
             if '"name":"image-pull"' in line.replace(" ", "")]
    last = lines[-1]["object"]
    gone = json.loads(json.dumps(last))
    gone["metadata"].update(deletionTimestamp="2026-12-01T09:57:50Z",
                            deletionGracePeriodSeconds=0,
                            resourceVersion=str(int(last["metadata"]["resourceVersion"]) + 1000))
    gone["status"]["phase"] = "Failed"
    gone["status"]["containerStatuses"][0]["state"] = {"terminated": {
        "exitCode": 137, "reason": "ContainerStatusUnknown",
        "message": "The container could not be located when the pod was terminated"}}
    capture = tmp_path / "pods.json"
    capture.write_text("".join(json.dumps(x) + "\n" for x in lines + [
        {"type": "MODIFIED", "object": gone}, {"type": "DELETED", "object": gone}]))
    con = db.open_db(str(tmp_path / "gone.duckdb"))
    import_captures([str(capture)], con, cluster="imported")
    assert rows(con, "SELECT stop_verdict FROM pod_lifecycle") == [
        ("never started (seen waiting, never running)",)]
    assert "running" not in [s for (s,) in rows(con, "SELECT step FROM pod_transitions")]


def _oom_capture(tmp_path, limits: list[str]):
    """A model test of oom_killed's template note (given rows → expected rows; no recording
    of a Deployment whose pods were OOM-killed exists yet): Deployment `web` recorded with
    each memory limit in `limits` (one version per limit, a minute apart), its ReplicaSet,
    and a pod crash-looping OOMKilled with the last limit, created after them."""
    import json
    from replayer.replay import import_captures
    dep_uid, rs_uid = "00000000-0000-4000-8000-00000000d001", "00000000-0000-4000-8000-00000000d002"
    def template(limit: str) -> dict:
        return {"spec": {"containers": [{"name": "app", "resources": {"limits": {"memory": limit}}}]}}
    records = [{"type": "ADDED" if i == 0 else "MODIFIED", "object": {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": dep_uid, "generation": i + 1,
                     "resourceVersion": str(10 + i), "creationTimestamp": "2026-12-01T10:00:00Z"},
        "spec": {"replicas": 1, "template": template(limit)},
        "status": {"conditions": [{"type": "Progressing", "status": "True",
                                   "reason": "NewReplicaSetAvailable",
                                   "lastTransitionTime": f"2026-12-01T10:0{i}:00Z"}]}}}
        for i, limit in enumerate(limits)]
    records.append({"type": "ADDED", "object": {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web-1", "namespace": "shop", "uid": rs_uid, "resourceVersion": "30",
                     "creationTimestamp": "2026-12-01T10:05:00Z",
                     "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": dep_uid,
                                          "controller": True}]},
        "spec": {"replicas": 1, "template": template(limits[-1])}}})
    records.append({"type": "ADDED", "object": {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1-a", "namespace": "shop", "resourceVersion": "40",
                     "uid": "00000000-0000-4000-8000-00000000d003",
                     "creationTimestamp": "2026-12-01T10:05:01Z",
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "uid": rs_uid,
                                          "controller": True}]},
        "spec": {"nodeName": "n1", "containers": [
            {"name": "app", "resources": {"limits": {"memory": limits[-1]}}}]},
        "status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "False", "lastTransitionTime": "2026-12-01T10:05:02Z"}],
            "containerStatuses": [{"name": "app", "ready": False, "restartCount": 2,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                             "startedAt": "2026-12-01T10:05:20Z",
                                             "finishedAt": "2026-12-01T10:05:30Z"}}}]}}})
    capture = tmp_path / "oom.json"
    capture.write_text("".join(json.dumps(r) + "\n" for r in records))
    con = db.open_db(str(tmp_path / "oom.duckdb"))
    import_captures([str(capture)], con, cluster="imported")
    return con


def test_oom_killed_names_a_limit_the_owners_template_lowered(tmp_path):
    con = _oom_capture(tmp_path, ["256Mi", "256Mi", "64Mi"])
    assert details(con, "web-1-a") == [
        "app: CrashLoopBackOff, 2 restarts, last exit 137 (OOMKilled); memory limit 64Mi; "
        "Deployment/web's template set it 256Mi at 2026-12-01T10:00:00Z, then 64Mi at "
        "2026-12-01T10:02:00Z"]


def test_oom_killed_with_a_template_unchanged_since_before_the_pod(tmp_path):
    con = _oom_capture(tmp_path, ["64Mi"])
    assert details(con, "web-1-a") == [
        "app: CrashLoopBackOff, 2 restarts, last exit 137 (OOMKilled); memory limit 64Mi; "
        "Deployment/web's template unchanged in the recording since 2026-12-01T10:00:00Z"]


def test_an_eviction_cites_the_nodes_pressure_condition(tmp_path):
    """Model test: public capture evicted-3 (kubernetes#122932) beside a version of its node
    `kaapana` reporting DiskPressure (constructed: the issue did not paste the node)."""
    import json
    from replayer.replay import import_captures
    from tests.replayer_data import DATA
    pod = (DATA.parent / "public" / "evicted-3.json").read_text()
    node = {"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "kaapana", "uid": "00000000-0000-4000-8000-00000000e001"}, "status": {
        "conditions": [{"type": "DiskPressure", "status": "True", "reason": "KubeletHasDiskPressure",
                        "message": "kubelet has disk pressure",
                        "lastHeartbeatTime": "2024-01-22T16:56:00Z",
                        "lastTransitionTime": "2024-01-22T16:50:00Z"}]}}}
    capture = tmp_path / "evicted.json"
    capture.write_text(json.dumps(node) + "\n" + pod)
    con = db.open_db(str(tmp_path / "evicted.duckdb"))
    import_captures([str(capture)], con, cluster="imported")
    assert rows(con, "SELECT c.detail, c.evidence FROM pod_outcomes_at(data_end()), "
                     "unnest(causes) u(c)") == [
        ("ephemeral-storage — Evicted: The node was low on resource: ephemeral-storage. "
         "Threshold quantity: 1Gi, available: 0. — node kaapana DiskPressure=True since "
         "2024-01-22T16:50:00Z", [1, 2])]
