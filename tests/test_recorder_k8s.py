"""The recorder against the real control plane and the real Kafka broker (markers k8s, kafka).

An independent watcher (``kubectl get --watch --output-watch-events``) sees every change the
API server reports; every (uid, resourceVersion) it saw must be in Kafka, in order per
object — through a normal run, a SIGKILL and restart, a stretch past an etcd compaction
(GAP + INFERRED_DELETED) and a 30 s broker outage (spool, then drain).
"""

from __future__ import annotations

import json
import time

import pytest

from tests.recorder_k8s import (Churn, Recorder, Watcher, apply_deployment, assert_nothing_lost,
                                assert_seq_gap_free, deployment_lifecycle, figures, read_kafka,
                                sessions, wait_ready_pods)

POD = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, labels: {{app: {name}}}}}
spec:
  terminationGracePeriodSeconds: 5
  containers: [{{name: app, image: "nginx:1.25"}}]
"""

pytestmark = [pytest.mark.k8s, pytest.mark.kafka]


@pytest.fixture
def setup(k8s_cluster, k8s_namespace, kafka_bootstrap, unique_topic_prefix, tmp_path):
    watcher = Watcher(k8s_cluster, k8s_namespace)
    recorder = Recorder(k8s_cluster, kafka_bootstrap, unique_topic_prefix, k8s_namespace, tmp_path / "state")
    yield k8s_cluster, k8s_namespace, watcher, recorder
    watcher.close()
    if recorder.proc is not None and recorder.proc.poll() is None:
        recorder.kill()


def test_deployment_lifecycle_every_event_recorded_with_its_component(setup, kafka_bootstrap, unique_topic_prefix,
                                                                      record_property) -> None:
    cluster, ns, watcher, recorder = setup
    recorder.start()
    deployment_lifecycle(cluster, ns, "web", 2, 4)
    watcher.wait_quiet()
    assert recorder.get("/readyz")[0] == 200 and recorder.get("/healthz")[0] == 200
    assert recorder.metric('ktrace_events_total{resource="pods",type="DELETED"}') == 8
    assert recorder.metric('ktrace_watch_lag_seconds_count{resource="pods"}') > 0
    assert recorder.metric("ktrace_gaps_total") == 0
    stopping = time.monotonic()
    assert recorder.stop() == 0
    record_property("sigterm_to_exit_s", round(time.monotonic() - stopping, 2))
    assert time.monotonic() - stopping < 10, "SIGTERM must end the recorder quickly"
    records = read_kafka(kafka_bootstrap, unique_topic_prefix)
    for name, value in figures(watcher, records).items():
        record_property(name, value)
    assert_nothing_lost(watcher, records)
    assert_seq_gap_free(records)
    pods = [r for r in records["pods"] if r["marker"] is None]
    binding = [r for r in pods if r["attribution"].startswith("binding")]
    assert len(binding) == 8 and {r["component"] for r in binding} == {"kube-scheduler"}
    assert {r["component"] for r in pods if r["type"] == "ADDED"} == {"kube-controller-manager"}
    assert {r["component"] for r in pods if ":status" in r["attribution"]} == {"kwok"}
    deletions = [r for r in pods if r["attribution"].startswith("deletionTimestamp set")]
    assert len(deletions) == 8 and {r["component"] for r in deletions} == {"kube-apiserver"}
    for resource in ("replicasets", "endpointslices"):
        assert {r["component"] for r in records[resource] if r["marker"] is None} == {"kube-controller-manager"}
    assert not any(b"hunter2" in (r["object"] or b"") for rs in records.values() for r in rs)
    [session] = sessions(records["pods"])
    types = [r["type"] for r in session]
    assert types[0] == "SESSION_START" and types[1] == "SYNCED" and types[-1] == "SESSION_END"
    assert session[-1]["marker"]["cause"] == "SIGTERM"


def test_a_force_delete_is_the_clients_a_graceful_one_the_node_agents(setup, kafka_bootstrap,
                                                                      unique_topic_prefix) -> None:
    """``kubectl delete --force --grace-period=0``: the first deletion request already has
    grace 0, so the client removed the pod; a plain delete ends with the node agent's
    grace-0 DELETE after its containers stopped (issue 25 item 7)."""
    cluster, ns, watcher, recorder = setup
    recorder.start()
    forced, graceful = "forced", "graceful"
    for name in (forced, graceful):  # bare pods: no controller replaces them
        cluster.kubectl("apply", "-f", "-", input=POD.format(name=name, ns=ns))
    wait_ready_pods(cluster, ns, forced, 1)
    wait_ready_pods(cluster, ns, graceful, 1)
    cluster.kubectl("delete", "pod", forced, "-n", ns, "--force", "--grace-period=0")
    cluster.kubectl("delete", "pod", graceful, "-n", ns)
    wait_ready_pods(cluster, ns, graceful, 0)
    watcher.wait_quiet()
    assert recorder.stop() == 0
    records = read_kafka(kafka_bootstrap, unique_topic_prefix)
    gone = {r["name"]: r for r in records["pods"] if r["marker"] is None and r["type"] == "DELETED"}
    assert gone[forced]["component"] == "client (force delete)"
    assert gone[forced]["attribution"].startswith("removed after a client's grace-0 DELETE")
    assert gone[graceful]["component"] == "kwok"
    assert gone[graceful]["attribution"].startswith("removed after the grace-0 DELETE of the node agent")


def test_sigkill_mid_churn_then_restart_loses_nothing(setup, kafka_bootstrap, unique_topic_prefix,
                                                      record_property) -> None:
    cluster, ns, watcher, recorder = setup
    recorder.start()
    with Churn(cluster, ns):
        time.sleep(6)
        recorder.kill()
        time.sleep(6)  # changes the recorder does not see while it is down
        recorder.start()
        time.sleep(6)
    watcher.wait_quiet()
    assert recorder.stop() == 0
    records = read_kafka(kafka_bootstrap, unique_topic_prefix)
    for name, value in figures(watcher, records).items():
        record_property(name, value)
    assert_nothing_lost(watcher, records)
    assert_seq_gap_free(records)
    first, second = sessions(records["pods"])
    assert second[0]["type"] == "SESSION_START" and second[0]["marker"]["cause"] == "resume from checkpoint"
    assert not any(r["type"] in ("GAP", "RELIST") for r in second)  # resumed, not relisted
    assert first[-1]["type"] != "SESSION_END"  # killed: no end marker, and none needed


def test_restart_past_compaction_writes_a_gap_and_infers_deletions(setup, k8s_control_plane, kafka_bootstrap,
                                                                   unique_topic_prefix) -> None:
    cluster, ns, watcher, recorder = setup
    recorder.start()
    apply_deployment(cluster, ns, "web", 3)
    wait_ready_pods(cluster, ns, "web", 3)
    watcher.wait_quiet(seconds=3)
    assert recorder.stop() == 0
    before = {p["metadata"]["uid"] for p in json.loads(cluster.kubectl("get", "pods", "-n", ns, "-o", "json"))["items"]}
    cluster.kubectl("delete", "deployment/web", "-n", ns)
    wait_ready_pods(cluster, ns, "web", 0)
    apply_deployment(cluster, ns, "next", 1)
    wait_ready_pods(cluster, ns, "next", 1)
    k8s_control_plane.compact_etcd()
    k8s_control_plane.restart_component("kube-apiserver")  # its watch cache forgets compacted history
    recorder.start()
    time.sleep(3)
    assert recorder.stop() == 0
    _, second = sessions(read_kafka(kafka_bootstrap, unique_topic_prefix)["pods"])
    types = [r["type"] for r in second]
    assert types[:3] == ["SESSION_START", "RELIST", "GAP"]
    gap = second[2]["marker"]
    assert "410" in gap["cause"] and int(gap["fromResourceVersion"]) < int(gap["toResourceVersion"])
    assert gap["fromTime"] < gap["toTime"]
    assert {r["uid"] for r in second if r["type"] == "INFERRED_DELETED"} == before
    added = [r for r in second if r["type"] == "ADDED"]
    assert len(added) == 1 and added[0]["inferred"] and added[0]["name"].startswith("next-")
    assert types[-2:] == ["SYNCED", "SESSION_END"]


def test_kafka_outage_spools_then_drains_in_order(setup, kafka_broker, kafka_bootstrap, unique_topic_prefix,
                                                  record_property) -> None:
    cluster, ns, watcher, recorder = setup
    recorder.start()
    with Churn(cluster, ns):
        time.sleep(5)
        kafka_broker.stop()
        down_at = time.monotonic()
        deadline = down_at + 30
        spooled = 0.0
        while time.monotonic() < deadline:
            spooled = max(spooled, recorder.metric("ktrace_spool_records"))
            time.sleep(1)
        assert spooled > 0, "nothing went to the spool while Kafka was down"
        assert recorder.get("/healthz")[0] == 200
        kafka_broker.restart()
        back_at = time.monotonic()
        while recorder.metric("ktrace_spool_records") > 0:
            assert time.monotonic() < back_at + 90, "the spool never drained"
            time.sleep(0.5)
        record_property("spool_peak_records", spooled)
        record_property("drained_s_after_broker_restart", round(time.monotonic() - back_at, 1))
        time.sleep(5)  # churn goes on, straight to Kafka again
    watcher.wait_quiet()
    assert recorder.metric("ktrace_producer_errors_total") > 0
    assert recorder.stop(timeout=60) == 0
    records = read_kafka(kafka_bootstrap, unique_topic_prefix)
    for name, value in figures(watcher, records).items():
        record_property(name, value)
    assert_nothing_lost(watcher, records)
    assert_seq_gap_free(records)
    assert len(sessions(records["pods"])) == 1
