"""Attribution on the recorded Deployment lifecycle, plus the rules it did not exercise
(DisruptionTarget, finalizers, core/v1 Events), built from recorded objects."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson

from recorder import lean
from recorder.attribution import Attributor, observed
from transports.locallog.source import LocalLogSource

DATA = Path(__file__).parent / "data" / "recorder" / "deployment"


def stream(resource: str) -> list[tuple[str, dict]]:
    out = []
    for line in (DATA / f"{resource}.watch.jsonl").read_bytes().splitlines():
        doc = orjson.loads(line)
        out.append((doc["type"], doc["object"]))
    return out


def attribute(resource: str) -> list[tuple[str, str, str | None, str]]:
    attributor = Attributor()
    return [(t, o["metadata"]["name"], *(lambda a: (a.component, a.evidence))(attributor.observe(t, o)))
            for t, o in stream(resource)]


def first_pod_history() -> list[tuple[str, str | None, str]]:
    rows = attribute("pods")
    name = rows[0][1]
    return [(t, c, e) for t, n, c, e in rows if n == name]


def test_one_pod_from_creation_to_removal() -> None:
    steps = [(t, c, e.split(" ")[0]) for t, c, e in first_pod_history()]
    assert steps == [
        ("ADDED", "kube-controller-manager", "managedFields:kube-controller-manager:Update"),
        ("MODIFIED", "kube-scheduler", "binding:"),
        ("MODIFIED", "kwok", "managedFields:kwok:Update:status"),
        ("MODIFIED", "kube-apiserver", "deletionTimestamp"),
        ("MODIFIED", "kwok", "managedFields:kwok:Update:status"),
        ("MODIFIED", "kwok", "managedFields:kwok:Update:status"),
        ("MODIFIED", "kwok", "DELETE"),
        ("DELETED", "kwok", "removed"),
    ]
    assert "grace 5s" in first_pod_history()[3][2]
    assert "entry unchanged within its second; status changed" in first_pod_history()[5][2]


def test_kubectl_scale_and_set_image_are_the_new_entries() -> None:
    rows = [(c, e) for t, n, c, e in attribute("deployments") if c and c.startswith("kubectl")]
    assert [c for c, _ in rows] == ["kubectl-client-side-apply", "kubectl", "kubectl-set"]
    assert rows[1][1].startswith("managedFields:kubectl:Update:scale")


def test_owned_objects_deleted_without_grace_are_the_garbage_collectors() -> None:
    deleted = [(c, e) for t, n, c, e in attribute("replicasets") if t == "DELETED"]
    assert len(deleted) == 2
    assert all(c == "kube-controller-manager" and "ownerReference Deployment/web" in e for c, e in deleted)
    assert [c for t, n, c, e in attribute("deployments") if t == "DELETED"] == ["kube-apiserver"]


def test_events_name_their_reporter() -> None:
    rows = attribute("events")
    assert {(c, e) for t, n, c, e in rows} == {
        ("deployment-controller", "event.reportingController"),
        ("replicaset-controller", "event.reportingController"),
        ("default-scheduler", "event.reportingController")}
    _, core = stream("events")[0]
    core = {"kind": "Event", "apiVersion": "v1", "metadata": core["metadata"],
            "source": {"component": "kubelet", "host": "n1"}}
    assert Attributor().observe("ADDED", core).component == "kubelet"


def test_an_events_removal_is_not_its_reporters() -> None:
    # the API server removes an Event when its TTL runs out; the watch says DELETED with the
    # last version, which still names the reporter of its writes
    kind, event = stream("events")[-1]
    attributor = Attributor()
    written = attributor.observe(kind, event)
    removed = attributor.observe("DELETED", event)
    assert written.evidence.startswith("event.") and written.component != "kube-apiserver"
    assert removed.component == "kube-apiserver" and "--event-ttl" in removed.evidence
    body = orjson.dumps(event)
    assert Attributor().observe("DELETED", lean.read_object(body).seen) == removed
    assert Attributor().observe("INFERRED_DELETED", event).component is None


def running_pod() -> list[tuple[str, dict]]:
    pods = stream("pods")
    name = pods[0][1]["metadata"]["name"]
    return [(t, o) for t, o in pods if o["metadata"]["name"] == name]


def test_disruption_target_names_the_requester() -> None:
    history = running_pod()
    attributor = Attributor()
    for t, o in history[:3]:
        attributor.observe(t, o)
    evicting = copy.deepcopy(history[2][1])
    evicting["status"]["conditions"].append({"type": "DisruptionTarget", "status": "True",
                                             "reason": "DeletionByTaintManager"})
    evicting["metadata"]["managedFields"].append({"manager": "kube-controller-manager", "operation": "Apply",
                                                  "subresource": "status", "time": "2099-01-01T00:00:00Z"})
    patched = attributor.observe("MODIFIED", evicting)
    assert patched.component == "kube-controller-manager" and "DisruptionTarget DeletionByTaintManager" in patched.evidence
    deleting = copy.deepcopy(evicting)
    deleting["metadata"]["deletionTimestamp"] = "2099-01-01T00:00:30Z"
    deleting["metadata"]["deletionGracePeriodSeconds"] = 30
    deletion = attributor.observe("MODIFIED", deleting)
    assert deletion.component == "kube-apiserver"
    assert "requested by kube-controller-manager (DisruptionTarget DeletionByTaintManager)" in deletion.evidence


def test_removal_after_the_last_finalizer() -> None:
    _, obj = running_pod()[2]
    held = copy.deepcopy(obj)
    held["spec"].pop("nodeName")
    held["metadata"].update(finalizers=["example.com/hold"], deletionTimestamp="2099-01-01T00:00:00Z",
                            deletionGracePeriodSeconds=0)
    attributor = Attributor()
    attributor.observe("MODIFIED", held)
    released = copy.deepcopy(held)
    released["metadata"]["finalizers"] = []
    assert "last finalizer (example.com/hold)" in attributor.observe("DELETED", released).evidence


def test_listed_and_unknown_priors() -> None:
    _, obj = running_pod()[2]
    listed = Attributor().observe("LISTED", obj)
    assert listed.component == "kwok" and listed.evidence.startswith("listed; ") and listed.server_time is None
    resumed = Attributor().observe("MODIFIED", obj)  # after a restart: no prior, latest entry
    assert resumed.component == "kwok" and "(latest entry)" in resumed.evidence
    gone = Attributor().observe("INFERRED_DELETED", obj)
    assert gone.component is None and "not seen" in gone.evidence


def test_priors_stay_bounded() -> None:
    attributor = Attributor()
    for t, o in stream("pods"):
        attributor.observe(t, o)
    assert len(attributor) == 0  # every pod was deleted: nothing kept


def edge_pod_history(name: str, skip_rv: str | None = None) -> list[tuple[str, str | None, str]]:
    """Attribution of one pod of the edge recording's kubectl capture (issue 8's data: the
    real API server, kwok for the kubelets), ``skip_rv`` left out of the stream."""
    attributor, out = Attributor(), []
    capture = DATA.parent.parent / "replayer" / "edge" / "kubectl" / "pods.json"
    for line in capture.read_bytes().splitlines():  # one watch event per line
        item = orjson.loads(line)
        obj = item["object"]
        if obj["metadata"]["resourceVersion"] == skip_rv:
            continue
        found = attributor.observe(item["type"], obj)
        if obj["metadata"]["name"] == name:
            out.append((item["type"], found.component, found.evidence))
    return out


def test_a_force_delete_of_a_pod_on_a_lost_node_is_the_clients() -> None:
    # `kubectl delete` (grace 5 s) on a lost node, then `--force --grace-period=0`: no status
    # write between them (nothing stopped the containers), so the grace-0 DELETE and the
    # removal are a client's, not the node agent's
    steps = edge_pod_history("stranded")[-3:]
    assert [(t, c) for t, c, _ in steps] == [
        ("MODIFIED", "kube-apiserver"), ("MODIFIED", "client (force delete)"),
        ("DELETED", "client (force delete)")]
    assert "no status write since the deletion request" in steps[1][2]
    assert "grace 5s" in steps[0][2]


def test_a_graceful_stop_then_grace_0_is_the_node_agents() -> None:
    steps = edge_pod_history("stubborn")[-2:]
    assert [(t, c) for t, c, _ in steps] == [("MODIFIED", "kwok"), ("DELETED", "kwok")]
    assert steps[0][2].startswith("DELETE with grace 0 from the node agent of kwok-node-0")


def test_a_first_deletion_request_with_grace_0_is_a_force_delete() -> None:
    # the same stream without the graceful request (rv 389): deletionTimestamp first appears
    # with grace 0 — `kubectl delete --force --grace-period=0` straight away
    steps = edge_pod_history("stranded", skip_rv="389")[-2:]
    assert [(t, c) for t, c, _ in steps] == [("MODIFIED", "client (force delete)"),
                                             ("DELETED", "client (force delete)")]
    assert steps[0][2].startswith("deletionTimestamp set with grace 0")


def test_a_finished_pod_deleted_with_grace_0_is_its_requesters_not_a_force_delete() -> None:
    # the real node's catalogue recording: `untolerated` was Failed (the kubelet refused it,
    # TaintToleration) when the taint-eviction controller deleted it; the API server gives a
    # finished pod grace 0 whoever asks (CheckGracefulDelete), so no client forced anything
    source = LocalLogSource(str(DATA.parent.parent / "node" / "catalogue" / "recording"))
    versions = [(d.record["type"], d.record["object"])
                for d in source.read(source.topics("ktrace"))
                if d.topic.endswith(".pods") and d.record["name"] == "untolerated"]
    attributor = Attributor()
    found = [attributor.observe(t, orjson.loads(body)) for t, body in versions]
    assert [(f.component, f.evidence) for f in found[-2:]] == [
        ("kube-apiserver", "deletionTimestamp set (DELETE, grace 0s); requested by "
                           "kube-controller-manager (DisruptionTarget DeletionByTaintManager)"),
        ("kube-controller-manager", "removed by a DELETE of a finished pod (grace 0 for any "
                                    "requester); requested by kube-controller-manager "
                                    "(DisruptionTarget DeletionByTaintManager)")]
    # the lean decode (the recorder's hot path) reads the same
    assert all(lean.read_object(body).seen == observed(orjson.loads(body))
               for _, body in versions)
    assert lean.read_object(versions[-1][1]).seen.finished


def test_a_deletion_without_a_grace_period_names_none() -> None:
    # the control-plane recording groupversion/: a Namespace's DELETE sets its
    # deletionTimestamp with no deletionGracePeriodSeconds (only a Pod's deletion has one)
    source = LocalLogSource(str(DATA.parent.parent / "controlplane" / "groupversion" / "recording"))
    records = [d.record for d in source.read(source.topics("ktrace"))
               if d.topic.endswith(".namespaces") and d.record["name"] == "blocked"]
    versions = [(r["type"], orjson.loads(r["object"])) for r in records]
    attributor = Attributor()
    found = [attributor.observe(t, o) for t, o in versions]
    assert [t for t, _ in versions] == ["ADDED", "MODIFIED", "MODIFIED"]
    assert "deletionGracePeriodSeconds" not in versions[1][1]["metadata"]
    assert (found[1].component, found[1].evidence) == ("kube-apiserver", "deletionTimestamp set (DELETE)")
    # as the recorder stored it
    assert [(r["component"], r["attribution"]) for r in records] == [(f.component, f.evidence) for f in found]
