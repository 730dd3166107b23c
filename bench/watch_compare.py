"""``python -m bench.watch_compare [--events N]``: ktrace record beside kubectl --watch.

Starts a real Kafka broker (``--kafka``, else ``$KTRACE_TEST_KAFKA``, else a local one) and a
real control plane (tests/infra/k8s.py), then runs side by side on the same pods stream:

  ktrace   ktrace record --kinds pods --kafka … (every namespace): watch bytes → Avro → Kafka
  kubectl  kubectl get pods -A --watch --output-watch-events -o json > file

and drives a deterministic churn of Deployments (created, scaled up, rolled, scaled to zero,
deleted; kwok runs and stops the pods) of about N pod events. A fence pod, created and deleted
last, tells when each consumer has seen everything. The API server sets the pace, so both see
events at the same wall rate: events per CPU-second (what one core would sustain) is the fair
throughput figure. Prints a table, then one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import codecs
import ctypes
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from bench.broker import kafka_bootstrap
from bench.machine import describe
from transports.kafka.source import KafkaSource
from transports.kafka.settings import KafkaSettings
from tests.infra.k8s import ControlPlaneError, LocalControlPlane, free_ports
from tests.infra.kafka import KafkaBrokerError

NAMESPACE = "bench"
REPLICAS = 50  # per Deployment, after the scale-up
WAVE = 4  # Deployments churned at once
EVENTS_PER_POD = 8  # ADDED, bound, Running, deletionTimestamp, stopped, Failed, grace 0, DELETED
STEP_TIMEOUT_S = 180
CATCH_UP_TIMEOUT_S = 120
POLL_S = 0.25
IDLE_S = 5  # how long the idle CPU of both is measured before the churn
CONSUMER_NICE = -10


class BenchError(RuntimeError):
    """The run could not be completed; the message says where it stopped."""


# --- the churn -----------------------------------------------------------------------------


def deployment(name: str, wave: int, replicas: int) -> dict[str, Any]:
    """A Deployment whose pods look like a real service's: two containers, env, probes."""
    labels = {"app": name, "bench": "watch-compare", "wave": str(wave)}
    env = [{"name": f"SETTING_{i}", "value": f"value-{i}"} for i in range(6)]
    probe = {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10}
    resources = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}}
    containers = [{"name": c, "image": f"registry.example/{c}:1", "env": env, "resources": resources,
                   "readinessProbe": probe, "ports": [{"containerPort": 8080}]}
                  for c in ("app", "proxy")]
    strategy = {"rollingUpdate": {"maxSurge": "50%", "maxUnavailable": "50%"}}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "strategy": strategy,
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}}}


def waves(events: int) -> list[list[str]]:
    """Deployment names, WAVE at a time: each pod lives twice (before and after the roll)."""
    count = max(1, math.ceil(events / (2 * REPLICAS * EVENTS_PER_POD)))
    names = [f"web-{i}" for i in range(count)]
    return [names[i:i + WAVE] for i in range(0, count, WAVE)]


Step = tuple[Callable[[], object], Callable[[], bool], str]  # action, done yet?, what


def wave_steps(plane: LocalControlPlane, wave: int, names: list[str]) -> list[Step]:
    """Create at half size, scale up, roll to a new image, scale to zero, delete."""
    selector, half = f"wave={wave}", REPLICAS // 2
    docs = "\n".join(json.dumps(deployment(n, wave, half)) for n in names)
    in_wave = ("deployment", "-n", NAMESPACE, "-l", selector)

    def scale(replicas: int) -> Callable[[], object]:
        return lambda: plane.kubectl("scale", *in_wave, f"--replicas={replicas}")

    return [
        (lambda: plane.kubectl("apply", "-f", "-", input=docs),
         lambda: converged(plane, selector, half), "created"),
        (scale(REPLICAS), lambda: converged(plane, selector, REPLICAS), "scaled up"),
        (lambda: plane.kubectl("set", "image", *in_wave, "app=registry.example/app:2"),
         lambda: converged(plane, selector, REPLICAS), "rolled"),
        (scale(0), lambda: converged(plane, selector, 0), "scaled to zero"),
        (lambda: plane.kubectl("delete", *in_wave), lambda: not pods(plane, selector), "deleted"),
    ]


def converged(plane: LocalControlPlane, selector: str, want: int) -> bool:
    """Every Deployment of the selector reports exactly ``want`` pods, all new and available."""
    path = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments?labelSelector={selector}"
    items = plane.api(path)["items"]
    for d in items:
        status = d.get("status", {})
        if status.get("observedGeneration", 0) < d["metadata"]["generation"]:
            return False
        counts = (status.get(k, 0) for k in ("replicas", "updatedReplicas", "availableReplicas"))
        if any(c != want for c in counts):
            return False
    return bool(items)


def pods(plane: LocalControlPlane, selector: str) -> list[dict[str, Any]]:
    return plane.api(f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector={selector}")["items"]


def wait_until(probe: Callable[[], bool], what: str, timeout: float = STEP_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise BenchError(f"{what}: not reached within {timeout:.0f}s")
        time.sleep(0.5)


def prepare_namespace(plane: LocalControlPlane) -> None:
    """Pods are refused until the namespace's default ServiceAccount exists."""
    plane.kubectl("create", "namespace", NAMESPACE)
    wait_until(lambda: bool(plane.kubectl("get", "serviceaccount", "default", "-n", NAMESPACE,
                                          "--ignore-not-found", "-o", "name")), "default ServiceAccount")


def fence(plane: LocalControlPlane) -> str:
    """Create and force-delete a pod on no node; its DELETED is the stream's last event."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fence", "namespace": NAMESPACE},
           "spec": {"nodeName": "nowhere", "containers": [{"name": "c", "image": "none"}]}}
    uid = plane.api(f"/api/v1/namespaces/{NAMESPACE}/pods", method="POST", body=pod)["metadata"]["uid"]
    plane.kubectl("delete", "pod", "fence", "-n", NAMESPACE, "--grace-period=0", "--force")
    return uid


# --- the consumers -------------------------------------------------------------------------


def _child_setup() -> None:
    """In the child: SIGTERM when the benchmark dies, so no consumer outlives it; and a raised
    priority (the same for both), because the API server closes a watch whose reader falls
    behind for a moment, and kubectl --watch then just exits: on a busy machine, it would."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    try:
        os.nice(CONSUMER_NICE)
    except PermissionError:
        pass  # not root: both run at the default priority, still alike


@dataclass
class Consumer:
    """One watcher, as one process or (kubectl, restarted) several in turn.

    Each ended process is reaped with wait4, whose rusage keeps its CPU time and peak RSS.
    """

    name: str
    argv: list[str]
    stdout: Path
    log: Path
    restart_on_exit: bool = False  # kubectl: as `while :; do kubectl get --watch …; done` would
    process: subprocess.Popen[bytes] | None = None
    ended_cpu_s: float = 0.0
    ended_rss_mb: float = 0.0
    restarts: int = 0
    failure: str | None = None
    ready_cpu_s: float = 0.0
    done: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        with self.stdout.open("ab") as out, self.log.open("ab") as err:
            self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=err, preexec_fn=_child_setup)

    def supervise(self) -> None:
        """Restart an ended kubectl; remember why anything else ended."""
        with self.lock:
            code = self._reap()
            if code is None or self.failure:
                return
            if self.restart_on_exit and code == 0:
                self.restarts += 1
                self.start()
            else:
                tail = self.log.read_text(errors="replace")[-2000:]
                self.failure = f"{self.name} exited with code {code}:\n{tail}"

    def _reap(self) -> int | None:
        if self.process.returncode is not None:
            return self.process.returncode
        pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
        if pid == 0:
            return None
        self.process.returncode = os.waitstatus_to_exitcode(status)
        self.ended_cpu_s += usage.ru_utime + usage.ru_stime
        self.ended_rss_mb = max(self.ended_rss_mb, usage.ru_maxrss / 1024)
        return self.process.returncode

    def cpu_s(self) -> float:
        """User + system time of all its processes so far."""
        with self.lock:
            if self._reap() is not None:
                return self.ended_cpu_s
            times = psutil.Process(self.process.pid).cpu_times()
            return self.ended_cpu_s + times.user + times.system

    def peak_rss_mb(self) -> float:
        """The highest resident set of any of its processes (VmHWM of the live one)."""
        with self.lock:
            if self._reap() is not None:
                return self.ended_rss_mb
            status = Path(f"/proc/{self.process.pid}/status").read_text()
            hwm = int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.M).group(1)) / 1024
            return max(self.ended_rss_mb, hwm)

    def mark_done(self, began: float) -> None:
        self.done = {"wall_s": time.monotonic() - began, "cpu_s": self.cpu_s() - self.ready_cpu_s,
                     "rss_mb": self.peak_rss_mb()}

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM (ktrace flushes and exits 0), SIGKILL if it lingers."""
        with self.lock:
            self.restart_on_exit = False
            if self.process is None or self._reap() is not None:
                return
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Supervisor(threading.Thread):
    """Checks the consumers every 0.1s: a dropped kubectl watch is restarted at once."""

    def __init__(self, consumers: list[Consumer]) -> None:
        super().__init__(daemon=True)
        self.consumers = consumers
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(0.1):
            for consumer in self.consumers:
                consumer.supervise()

    def check(self) -> bool:
        """Raise if a consumer failed; True otherwise, so it fits inside a wait_until probe."""
        for consumer in self.consumers:
            if consumer.failure:
                raise BenchError(consumer.failure)
        return True

    def stop(self) -> None:
        self.stopping.set()
        self.join()


def ktrace_argv(plane: LocalControlPlane, bootstrap: str, prefix: str, work: Path,
                port: int) -> list[str]:
    """ktrace record as deployed: default redaction and Kafka settings; pods only, like kubectl."""
    return [sys.executable, "-c", "from ktrace.cli import main; main()", "record",
            "--kubeconfig", str(plane.kubeconfig), "--kafka", bootstrap, "--topic-prefix", prefix,
            "--kinds", "pods", "--cluster", "bench", "--state-dir", str(work / "ktrace-state"),
            "--metrics-port", str(port)]


def kubectl_argv(plane: LocalControlPlane) -> list[str]:
    # -v=6 logs each request once (not each event): the watch request's line says it is open.
    return [str(plane.kubectl_bin), "--kubeconfig", str(plane.kubeconfig), "get", "pods", "-A",
            "--watch", "--output-watch-events", "-o", "json", "-v=6"]


def ktrace_ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
            return response.status == 200
    except OSError:  # refused while starting; HTTPError 503 until the list is done
        return False


def kubectl_ready(stderr: Path) -> bool:
    return 'watch=true" status="200' in stderr.read_text(errors="replace")


# --- what each consumer saw ----------------------------------------------------------------


class JsonTail:
    """kubectl's output file, parsed as it grows: one (type, uid, resourceVersion) per document."""

    _SPACE = re.compile(r"\s*")

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.buffer = path, 0, ""
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.events: list[tuple[str, str, str]] = []

    def poll(self) -> None:
        with self.path.open("rb") as fh:
            fh.seek(self.offset)
            chunk = fh.read()
        self.offset += len(chunk)
        self.buffer += self.decoder.decode(chunk)
        position = 0
        while True:
            position = self._SPACE.match(self.buffer, position).end()
            try:
                doc, position = json.JSONDecoder().raw_decode(self.buffer, position)
            except json.JSONDecodeError:
                break  # an unfinished document: the rest comes later
            md = doc["object"]["metadata"]
            self.events.append((doc["type"], md["uid"], md["resourceVersion"]))
        self.buffer = self.buffer[position:]


class KafkaTail:
    """ktrace's pods topic, read on from where the last poll stopped."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.source = KafkaSource(KafkaSettings(bootstrap=bootstrap))
        self.topic = topic
        self.positions: dict[tuple[str, int], int] = {}
        self.records: dict[tuple[str, int], dict[str, Any]] = {}  # (session, seq): a retry repeats one

    def poll(self) -> None:
        for d in self.source.read([self.topic], after=self.positions):
            if d.error is not None:
                raise BenchError(f"undecodable record in {self.topic}: {d.error}")
            self.positions[(d.topic, d.partition)] = d.offset
            if d.record["marker"] is None:
                self.records[(d.record["session"], d.record["seq"])] = d.record

    @property
    def events(self) -> list[tuple[str, str, str]]:
        return [(r["type"], r["uid"], r["resourceVersion"]) for r in self.records.values()]

    def close(self) -> None:
        self.source.close()


def caught_up(events: list[tuple[str, str, str]], fence_uid: str) -> bool:
    return any(t == "DELETED" and uid == fence_uid for t, uid, _ in events)


# --- the run -------------------------------------------------------------------------------


@dataclass
class Run:
    plane: LocalControlPlane
    bootstrap: str
    work: Path
    events: int
    prefix: str = field(default_factory=lambda: f"bench-{uuid.uuid4().hex[:8]}")
    supervisor: Supervisor = field(init=False)

    def execute(self, stack: ExitStack) -> dict[str, Any]:
        ktrace, kubectl = self._start(stack)
        idle = idle_cpu({"ktrace": ktrace, "kubectl": kubectl})
        for consumer in (ktrace, kubectl):
            consumer.ready_cpu_s = consumer.cpu_s()
        kafka = KafkaTail(self.bootstrap, f"{self.prefix}.pods")
        stack.callback(kafka.close)
        tails = {"ktrace": kafka, "kubectl": JsonTail(self.work / "kubectl.json")}
        began = time.monotonic()
        churn_s = self._churn()
        fence_uid = fence(self.plane)
        self._wait_caught_up({"ktrace": ktrace, "kubectl": kubectl}, tails, fence_uid, began)
        return {**self._result(ktrace, kubectl, tails, churn_s), "idle_cpu_per_s": idle,
                "kubectl_restarts": kubectl.restarts,
                "watches_dropped_by_apiserver": dropped_watches(self.plane)}

    def _start(self, stack: ExitStack) -> tuple[Consumer, Consumer]:
        """Both consumers, watching, under a supervisor; all stopped when the stack unwinds."""
        port, work = free_ports(1)[0], self.work
        ktrace = Consumer("ktrace", ktrace_argv(self.plane, self.bootstrap, self.prefix, work, port),
                          work / "ktrace.out", work / "ktrace.log")
        kubectl = Consumer("kubectl", kubectl_argv(self.plane), work / "kubectl.json",
                           work / "kubectl.log", restart_on_exit=True)
        for consumer in (ktrace, kubectl):
            consumer.start()
            stack.callback(consumer.stop)
        self.supervisor = Supervisor([ktrace, kubectl])
        self.supervisor.start()
        stack.callback(self.supervisor.stop)
        check = self.supervisor.check
        wait_until(lambda: check() and ktrace_ready(port), "ktrace ready", 90)
        wait_until(lambda: check() and kubectl_ready(work / "kubectl.log"), "kubectl watching", 60)
        return ktrace, kubectl

    def _churn(self) -> float:
        began, check = time.monotonic(), self.supervisor.check
        for number, names in enumerate(waves(self.events)):
            for action, done, what in wave_steps(self.plane, number, names):
                action()
                wait_until(lambda: check() and done(), f"wave {number} {what}")
            print(f"# wave {number}: {len(names)} Deployments churned "
                  f"({time.monotonic() - began:.0f}s)", file=sys.stderr, flush=True)
        return time.monotonic() - began

    def _wait_caught_up(self, consumers: dict[str, Consumer], tails: dict[str, Any],
                        fence_uid: str, began: float) -> None:
        deadline = time.monotonic() + CATCH_UP_TIMEOUT_S
        pending = set(consumers)
        while pending:
            self.supervisor.check()
            for name in sorted(pending):
                tails[name].poll()
                if caught_up(tails[name].events, fence_uid):
                    consumers[name].mark_done(began)
                    pending.discard(name)
            if pending and time.monotonic() > deadline:
                raise BenchError(f"{', '.join(sorted(pending))} did not see the fence pod's deletion "
                                 f"within {CATCH_UP_TIMEOUT_S}s of the churn's end")
            time.sleep(POLL_S)

    def _result(self, ktrace: Consumer, kubectl: Consumer, tails: dict[str, Any],
                churn_s: float) -> dict[str, Any]:
        seen = {name: tails[name].events for name in tails}
        recorded = {(uid, rv) for _, uid, rv in seen["ktrace"]}
        missing = [(t, uid, rv) for t, uid, rv in seen["kubectl"] if (uid, rv) not in recorded]
        figures = {c.name: consumer_figures(c, seen[c.name]) for c in (ktrace, kubectl)}
        return {
            "events_target": self.events, "churn_s": round(churn_s, 1),
            "ktrace": figures["ktrace"], "kubectl": figures["kubectl"],
            "ratio_ktrace_to_kubectl": ratios(figures["ktrace"], figures["kubectl"]),
            "all_recorded": not missing, "missing": len(missing), "missing_sample": missing[:5],
            "machine": describe(),
        }


def idle_cpu(consumers: dict[str, Consumer]) -> dict[str, float]:
    """CPU seconds per second each spends watching a quiet stream: its share of the figures."""
    before = {name: c.cpu_s() for name, c in consumers.items()}
    time.sleep(IDLE_S)
    return {name: round((c.cpu_s() - before[name]) / IDLE_S, 4) for name, c in consumers.items()}


def dropped_watches(plane: LocalControlPlane) -> int:
    """Pods watches the API server closed because their reader fell behind (any client's)."""
    log = plane.components["kube-apiserver"].log.read_text(errors="replace")
    return log.count("Forcing pods watcher close due to unresponsiveness")


def consumer_figures(consumer: Consumer, seen: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Events are what it wrote; versions, the distinct (uid, resourceVersion) among them."""
    done, events = consumer.done, len(seen)
    return {"events": events, "versions": len({(uid, rv) for _, uid, rv in seen}),
            "wall_s": round(done["wall_s"], 1), "cpu_s": round(done["cpu_s"], 2),
            "startup_cpu_s": round(consumer.ready_cpu_s, 2),
            "events_per_s": round(events / done["wall_s"]),
            "events_per_cpu_s": round(events / done["cpu_s"]) if done["cpu_s"] else None,
            "peak_rss_mb": round(done["rss_mb"], 1)}


def ratios(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float | None]:
    keys = ("events", "cpu_s", "events_per_cpu_s", "peak_rss_mb")
    return {k: round(a[k] / b[k], 2) if a[k] and b[k] else None for k in keys}


# --- output --------------------------------------------------------------------------------


def table(result: dict[str, Any]) -> str:
    rows = [("", "events", "versions", "wall s", "CPU s", "events/CPU-s", "events/s wall", "peak RSS MB")]
    labels = {"ktrace": "ktrace record → Kafka", "kubectl": "kubectl --watch -o json → file"}
    for name, label in labels.items():
        f = result[name]
        rows.append((label, f["events"], f["versions"], f["wall_s"], f["cpu_s"], f["events_per_cpu_s"],
                     f["events_per_s"], f["peak_rss_mb"]))
    r = result["ratio_ktrace_to_kubectl"]
    rows.append(("ratio ktrace/kubectl", r["events"], "", "", r["cpu_s"], r["events_per_cpu_s"], "",
                 r["peak_rss_mb"]))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w)
                       for i, (v, w) in enumerate(zip(row, widths))) for row in rows]
    verdict = ("yes" if result["all_recorded"] else f"NO — {result['missing']} missing, e.g. "
               f"{result['missing_sample']}")
    return "\n".join([
        *lines, "",
        "The API server sets the pace (both consumers see events as fast as it sends them), so",
        "events/CPU-s — what one core would sustain — is the fair throughput figure; CPU s is",
        "user+sys from the moment each consumer was watching to the moment it had the last event.",
        f"Churn took {result['churn_s']}s; ktrace startup CPU (not counted above): "
        f"{result['ktrace']['startup_cpu_s']}s, kubectl's: {result['kubectl']['startup_cpu_s']}s;",
        f"CPU s per idle second: {result['idle_cpu_per_s']}. Both ran at nice {CONSUMER_NICE}.",
        f"Pods watches the API server closed as too slow (any client's): "
        f"{result['watches_dropped_by_apiserver']}; ktrace resumes from its last resourceVersion; "
        f"kubectl exits, and was restarted {result['kubectl_restarts']} times (each a relist: live "
        f"pods again as ADDED, the changes in between never seen).",
        f"ktrace recorded every (uid, resourceVersion) kubectl saw: {verdict}",
    ])


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.watch_compare",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=4000,
                        help="pod events to generate, roughly (default 4000: about 2 min on 2 cores)")
    parser.add_argument("--kafka", help="HOST:PORT of a broker (default $KTRACE_TEST_KAFKA, "
                                        "else one started for the run)")
    parser.add_argument("--work", type=Path, help="keep logs and kubectl's output here "
                                                  "(default: a temporary directory, removed)")
    return parser.parse_args(argv)


@contextmanager
def control_plane(work: Path, pods_at_once: int) -> Iterator[LocalControlPlane]:
    nodes = max(2, math.ceil(pods_at_once / 100))  # kwok nodes hold 110 pods
    plane = LocalControlPlane(work_dir=work / "k8s", nodes=nodes, stage_set="graceful",
                              # Logs each watch the API server drops as too slow.
                              apiserver_flags=["--vmodule=cache_watcher=1"])
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    work = (args.work or Path(tempfile.mkdtemp(prefix="ktrace-watch-compare-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        with ExitStack() as stack:
            bootstrap, origin = stack.enter_context(kafka_bootstrap(work / "kafka", args.kafka))
            # Surge and Terminating pods count too: room for twice a wave's size.
            plane = stack.enter_context(control_plane(work, 2 * WAVE * REPLICAS))
            prepare_namespace(plane)
            result = Run(plane, bootstrap, work, args.events).execute(stack)
    except (BenchError, ControlPlaneError, KafkaBrokerError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    result["kafka"] = origin
    print(table(result))
    print(json.dumps(result))
    return 0 if result["all_recorded"] else 1


if __name__ == "__main__":
    sys.exit(main())
