"""The recorder against the real control plane and the real Kafka broker (markers k8s, kafka).

An independent watcher (``kubectl get --watch --output-watch-events``) sees every change the
API server reports; every (uid, resourceVersion) it saw must be in Kafka, in order per
object — through a normal run, a SIGKILL and restart, a stretch past an etcd compaction
(GAP + INFERRED_DELETED) and a 30 s broker outage (spool, then drain).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path

import pytest

from replayer.sources.kafka import KafkaSource
from schemas.kafka_settings import KafkaSettings

pytestmark = [pytest.mark.k8s, pytest.mark.kafka]

RESOURCES = ("pods", "replicasets", "deployments", "endpointslices")
DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {ns}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      terminationGracePeriodSeconds: 5
      containers: [{{name: app, image: "{image}", env: [{{name: PASSWORD, value: hunter2}}]}}]
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: {ns}}}
spec: {{selector: {{app: {name}}}, ports: [{{port: 80}}]}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """``ktrace record`` as a separate process, as it runs in production."""

    def __init__(self, cluster, bootstrap: str, prefix: str, namespace: str, state_dir: Path,
                 kinds: tuple[str, ...] = (*RESOURCES, "events")) -> None:
        self.port = free_port()
        self.args = ["--log-level", "INFO", "record", "--kubeconfig", str(cluster.kubeconfig),
                     "--kafka", bootstrap, "--topic-prefix", prefix, "-n", namespace,
                     "--kinds", ",".join(kinds), "--state-dir", str(state_dir),
                     "--metrics-port", str(self.port), "--cluster", "test"]
        self.log = state_dir.parent / f"recorder-{prefix}-{state_dir.name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Recorder:
        code = "from ktrace.cli import main; main()"
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-c", code, *self.args], stdout=log, stderr=log)
        self.wait_ready()
        return self

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"recorder exited:\n{self.log.read_text()[-3000:]}"
            try:
                if self.get("/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"recorder not ready:\n{self.log.read_text()[-3000:]}")

    def metric(self, name: str) -> float:
        _, text = self.get("/metrics")
        return sum(float(line.split()[-1]) for line in text.splitlines()
                   if line.startswith(name) and not line.startswith("#"))

    def stop(self, timeout: float = 30) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


class Watcher:
    """kubectl's own watch of the namespace, one process per resource: what really happened."""

    def __init__(self, cluster, namespace: str) -> None:
        self.seen: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # resource → (type, uid, rv)
        self.last_event = time.monotonic()
        self.procs = []
        for resource in RESOURCES:
            argv = [str(cluster.kubectl_bin), "--kubeconfig", str(cluster.kubeconfig), "get", resource,
                    "-n", namespace, "--watch", "--output-watch-events", "-o", "json"]
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.procs.append(proc)
            threading.Thread(target=self._read, args=(resource, proc), daemon=True).start()

    def _read(self, resource: str, proc: subprocess.Popen) -> None:
        decoder, buffer = json.JSONDecoder(), ""
        for line in proc.stdout:
            buffer += line
            try:
                doc, _ = decoder.raw_decode(buffer.strip())
            except json.JSONDecodeError:
                continue
            buffer = ""
            md = doc["object"]["metadata"]
            self.seen[resource].append((doc["type"], md["uid"], md["resourceVersion"]))
            self.last_event = time.monotonic()

    def wait_quiet(self, seconds: float = 6, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() - self.last_event < seconds:
            assert time.monotonic() < deadline, "the cluster never went quiet"
            time.sleep(0.5)

    def close(self) -> None:
        for proc in self.procs:
            proc.terminate()
            proc.wait(timeout=10)


def read_kafka(bootstrap: str, prefix: str) -> dict[str, list[dict]]:
    source = KafkaSource(KafkaSettings(bootstrap=bootstrap))
    try:
        records: dict[str, list[dict]] = defaultdict(list)
        for d in source.read(source.topics(prefix)):
            assert d.error is None, d.error
            records[d.topic.removeprefix(prefix + ".")].append(d.record)
        return records
    finally:
        source.close()


def dedupe(records: list[dict]) -> list[dict]:
    """A retried Kafka batch or a spool drain may repeat a record: same (session, seq)."""
    seen, out = set(), []
    for r in records:
        if (r["session"], r["seq"]) not in seen:
            seen.add((r["session"], r["seq"]))
            out.append(r)
    return out


def sessions(records: list[dict]) -> list[list[dict]]:
    """Each session's records in seq order, sessions in the order they started."""
    grouped: dict[str, list[dict]] = defaultdict(list)
    for r in dedupe(records):
        grouped[r["session"]].append(r)
    ordered = [sorted(rs, key=lambda r: r["seq"]) for rs in grouped.values()]
    return sorted(ordered, key=lambda rs: rs[0]["receivedAt"])


def assert_nothing_lost(watcher: Watcher, records: dict[str, list[dict]]) -> None:
    """Every (uid, rv) the watcher saw is recorded, and each object's versions are in order
    (Kafka keeps one uid in one partition; read order within it is the recorded order)."""
    for resource in RESOURCES:
        kept = [r for r in dedupe(records[resource]) if r["uid"] and r["marker"] is None]
        by_uid: dict[str, list[int]] = defaultdict(list)
        for r in kept:
            if r["type"] != "INFERRED_DELETED":
                by_uid[r["uid"]].append(int(r["resourceVersion"]))
        missing = [(t, uid, rv) for t, uid, rv in watcher.seen[resource] if int(rv) not in by_uid[uid]]
        assert not missing, f"{resource}: {len(missing)} of {len(watcher.seen[resource])} not recorded: {missing[:5]}"
        for uid, rvs in by_uid.items():
            first_seen = sorted(set(rvs), key=rvs.index)
            assert first_seen == sorted(first_seen), f"{resource} {uid} out of order: {rvs}"


def figures(watcher: Watcher, records: dict[str, list[dict]]) -> dict[str, int]:
    """What a run measured, attached to the test report (``--junitxml``)."""
    objects = [r for rs in records.values() for r in rs if r["marker"] is None and r["uid"]]
    return {
        "watcher_events": sum(len(v) for v in watcher.seen.values()),
        "object_records": len(objects),
        "repeated_seq": len(objects) - len({(r["session"], r["resource"], r["seq"]) for r in objects}),
        "repeated_uid_rv": len(objects) - len({(r["uid"], r["resourceVersion"], r["type"]) for r in objects}),
    }


def assert_seq_gap_free(records: dict[str, list[dict]]) -> None:
    for resource, recs in records.items():
        by_session: dict[str, set[int]] = defaultdict(set)
        for r in recs:
            by_session[r["session"]].add(r["seq"])
        for session, seqs in by_session.items():
            assert seqs == set(range(len(seqs))), f"{resource} session {session}: seq has gaps"
POD = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, labels: {{app: {name}}}}}
spec:
  terminationGracePeriodSeconds: 5
  containers: [{{name: app, image: "nginx:1.25"}}]
"""


def apply_deployment(cluster, ns: str, name: str, replicas: int, image: str = "nginx:1.25") -> None:
    cluster.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(name=name, ns=ns, replicas=replicas, image=image))


def wait_ready_pods(cluster, ns: str, name: str, want: int, image: str | None = None, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pods = json.loads(cluster.kubectl("get", "pods", "-n", ns, "-l", f"app={name}", "-o", "json"))["items"]
        ready = [p for p in pods if any(c["type"] == "Ready" and c["status"] == "True"
                                        for c in p["status"].get("conditions", []))
                 and not p["metadata"].get("deletionTimestamp")
                 and (image is None or p["spec"]["containers"][0]["image"] == image)]
        if len(ready) == want == len(pods):
            return
        time.sleep(0.5)
    raise TimeoutError(f"{name}: not {want} ready pods")


def deployment_lifecycle(cluster, ns: str, name: str, replicas: int, scaled: int) -> None:
    """Create, scale, roll out a new image, delete: 2 × ``scaled`` pods come and go."""
    apply_deployment(cluster, ns, name, replicas)
    wait_ready_pods(cluster, ns, name, replicas)
    cluster.kubectl("scale", f"deployment/{name}", "-n", ns, f"--replicas={scaled}")
    wait_ready_pods(cluster, ns, name, scaled)
    cluster.kubectl("set", "image", f"deployment/{name}", "-n", ns, "app=nginx:1.26")
    wait_ready_pods(cluster, ns, name, scaled, image="nginx:1.26")
    cluster.kubectl("delete", f"deployment/{name}", "-n", ns)
    wait_ready_pods(cluster, ns, name, 0)


class Churn:
    """Scales a Deployment up and down in a background thread until stopped."""

    def __init__(self, cluster, ns: str, name: str = "churn") -> None:
        self.cluster, self.ns, self.name = cluster, ns, name
        self.stop_event = threading.Event()
        apply_deployment(cluster, ns, name, 1)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        replicas = [3, 1, 4, 2]
        i = 0
        while not self.stop_event.is_set():
            self.cluster.kubectl("scale", f"deployment/{self.name}", "-n", self.ns, f"--replicas={replicas[i % 4]}")
            i += 1
            self.stop_event.wait(1.5)

    def __enter__(self) -> Churn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_event.set()
        self.thread.join(timeout=30)


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
