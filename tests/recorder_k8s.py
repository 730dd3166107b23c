"""Drivers of the recorder tests on the real control plane and the real Kafka broker: ``ktrace
record`` as a separate process (Recorder), kubectl's own watch of a namespace (Watcher), a
Deployment's lifecycle and churn, and the records read back from Kafka with the checks that
nothing was lost."""

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

from transports.kafka.source import KafkaSource
from transports.kafka.settings import KafkaSettings

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
