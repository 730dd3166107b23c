"""Workloads for the real node (tests/infra/node.py): what each scenario runs, declared once
for the live tests (tests/test_node.py) and the recordings (tests/data/node/capture.py).

Every container runs the busybox test image; what a real application would do is a shell
script: an HTTP server that exits on SIGTERM, a process that ignores it (``sleep`` as PID 1
has no handler, so the kernel drops the signal), one that writes its reason to
/dev/termination-log before failing, one that allocates past its memory limit.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.infra.images import BUSYBOX_IMAGE
from tests.infra.k8s import ControlPlaneError, LocalControlPlane
from tests.infra.node import NODE_NAME, TAINT, pod_placement

Manifest = dict[str, Any]

# An HTTP server that stops at once on SIGTERM, as a well-behaved web application does; it
# answers with its pod's name, so a client can tell which backend served it.
HTTP_SERVER = (
    "mkdir -p /tmp/www && hostname > /tmp/www/index.html && "
    "httpd -f -p 8080 -h /tmp/www & trap 'kill $!; exit 0' TERM; wait"
)
DB_TIMEOUT = "dial tcp 10.96.0.42:5432: connect: connection timed out"


def container(name: str, script: str, **fields: Any) -> Manifest:
    return {"name": name, "image": BUSYBOX_IMAGE, "imagePullPolicy": "IfNotPresent",
            "command": ["sh", "-c", script], **fields}


def pod(name: str, namespace: str, *containers: Manifest, grace: int = 5, **spec: Any) -> Manifest:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {"containers": list(containers), "terminationGracePeriodSeconds": grace,
                 **pod_placement(), **spec},
    }


def web_deployment(name: str, namespace: str, *, prestop_seconds: int = 0, replicas: int = 2) -> Manifest:
    """A web Deployment that rolls one pod at a time; its readiness probe is a real GET."""
    web = container("web", HTTP_SERVER, ports=[{"containerPort": 8080}],
                    readinessProbe={"httpGet": {"path": "/", "port": 8080}, "periodSeconds": 1})
    if prestop_seconds:
        web["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", str(prestop_seconds)]}}}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [web], "terminationGracePeriodSeconds": 30, **pod_placement()},
            },
        },
    }


def service(name: str, namespace: str) -> Manifest:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]}}


def stubborn(namespace: str, grace: int = 3) -> Manifest:
    """Ignores SIGTERM: the kubelet kills it at the grace deadline (exit 137)."""
    return pod("stubborn", namespace, container("app", "exec sleep 3600"), grace=grace)


def oom(namespace: str) -> Manifest:
    """64 MiB held in a shell variable under a 24 MiB limit: OOMKilled, restarted."""
    hog = container("hog", "x=$(head -c 67108864 /dev/zero | tr '\\0' x); exec sleep 3600",
                    resources={"limits": {"memory": "24Mi"}, "requests": {"memory": "24Mi"}})
    return pod("hog", namespace, hog)


def crash_loop(namespace: str) -> Manifest:
    """Fails with its reason in /dev/termination-log, as a real application may."""
    script = f"echo '{DB_TIMEOUT}' > /dev/termination-log; exit 1"
    return pod("crasher", namespace, container("app", script))


def init_crash_loop(namespace: str) -> Manifest:
    script = f"echo '{DB_TIMEOUT}' > /dev/termination-log; exit 1"
    return pod("initcrash", namespace, container("app", "exec sleep 3600"),
               initContainers=[container("wait-for-db", script)])


def init_command_missing(namespace: str) -> Manifest:
    init = {"name": "migrate", "image": BUSYBOX_IMAGE, "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/db-migrate", "--up"]}
    return pod("initcmd", namespace, container("app", "exec sleep 3600"), initContainers=[init])


def image_absent(namespace: str) -> Manifest:
    """Not in containerd and no registry reachable: the kubelet's real pull failure."""
    app = {"name": "app", "image": "ktrace.test/absent:1", "imagePullPolicy": "IfNotPresent"}
    return pod("absent", namespace, app)


def image_never_pulled(namespace: str) -> Manifest:
    app = {"name": "app", "image": "ktrace.test/absent:1", "imagePullPolicy": "Never"}
    return pod("neverpull", namespace, app)


def config_key_missing(namespace: str) -> list[Manifest]:
    settings = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": namespace}, "data": {"mode": "fast"}}
    env = [{"name": "DB_URL", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "db-url"}}}]
    return [settings, pod("configless", namespace, container("app", "exec sleep 3600", env=env))]


def probes_failing(namespace: str) -> list[Manifest]:
    never_ready = container("app", "exec sleep 3600",
                            readinessProbe={"exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 2})
    dies = container("app", "exec sleep 3600",
                     livenessProbe={"exec": {"command": ["cat", "/tmp/alive"]}, "periodSeconds": 2,
                                    "failureThreshold": 2})
    return [pod("unready", namespace, never_ready), pod("unlive", namespace, dies)]


def jobs_failing(namespace: str) -> list[Manifest]:
    def job(name: str, script: str, **spec: Any) -> Manifest:
        template = {"spec": {"containers": [container("work", script)], "restartPolicy": "Never",
                             "terminationGracePeriodSeconds": 5, **pod_placement()}}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
                "spec": {"template": template, **spec}}

    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}
    return [
        job("backoff", "echo 'schema version 7 not supported' > /dev/termination-log; exit 3", backoffLimit=1),
        job("policy", "exit 42", backoffLimit=6, podFailurePolicy=policy),
    ]


def ephemeral_storage_filler(namespace: str) -> Manifest:
    """Writes 8 MiB into an emptyDir limited to 1 MiB: the kubelet evicts the pod."""
    filler = container("app", "dd if=/dev/zero of=/data/fill bs=1M count=8; exec sleep 3600",
                       volumeMounts=[{"name": "data", "mountPath": "/data"}])
    return pod("filler", namespace, filler, volumes=[{"name": "data", "emptyDir": {"sizeLimit": "1Mi"}}])


def runtime_class_missing(namespace: str) -> list[Manifest]:
    runtime_class = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                     "metadata": {"name": f"{namespace}-gvisor"}, "handler": "runsc"}
    return [runtime_class, pod("sandboxed", namespace, container("app", "exec sleep 3600"),
                               runtimeClassName=f"{namespace}-gvisor")]


def storage_class_missing(namespace: str) -> list[Manifest]:
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "data", "namespace": namespace},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast-ssd",
                      "resources": {"requests": {"storage": "1Gi"}}}}
    user = pod("db", namespace, container("db", "exec sleep 3600",
                                          volumeMounts=[{"name": "data", "mountPath": "/data"}]),
               volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    return [claim, user]


# A container that is Ready while /tmp/ready exists: only where VERSION is not 2, so a
# rolling update to VERSION=2 brings a pod that never passes its readiness probe.
# (the image has no /tmp of its own)
READY_UNLESS_V2 = '[ "$VERSION" = 2 ] || { mkdir -p /tmp && touch /tmp/ready; }; exec sleep 3600'
READY_FILE_PROBE = {"exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 1}


def deployment(name: str, namespace: str, *containers: Manifest, replicas: int = 1,
               labels: dict[str, str] | None = None) -> Manifest:
    labels = {"app": name, **(labels or {})}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": list(containers),
                                           "terminationGracePeriodSeconds": 2, **pod_placement()}}}}


def services_without_ready_endpoints(namespace: str) -> list[Manifest]:
    """Service ``unready``: its one pod never passes its readiness probe; Service ``typo``:
    its selector says app=wbe, which no pod has; Service ``web`` beside them, healthy."""
    never_ready = container("app", "exec sleep 3600", readinessProbe=READY_FILE_PROBE)
    typo = service("typo", namespace)
    typo["spec"]["selector"] = {"app": "wbe"}
    return [deployment("unready", namespace, never_ready), service("unready", namespace),
            web_deployment("web", namespace, replicas=1), service("web", namespace), typo]


def statefulset(namespace: str) -> Manifest:
    """StatefulSet ``db`` (2 pods, ordered, rolling updates): Ready until set to VERSION=2."""
    db = container("db", READY_UNLESS_V2, readinessProbe=READY_FILE_PROBE)
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": namespace},
            "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"containers": [db], "terminationGracePeriodSeconds": 2,
                                           **pod_placement()}}}}


def statefulset_update_held(plane: LocalControlPlane, namespace: str) -> None:
    """StatefulSet ``db`` Ready, then updated to a revision that never gets Ready: the
    controller replaces db-1 and waits for it; db-0 keeps the old revision."""
    apply(plane, statefulset(namespace))
    plane.kubectl("rollout", "status", "sts/db", "-n", namespace, "--timeout=120s")
    plane.kubectl("set", "env", "sts/db", "-n", namespace, "VERSION=2")


# The host port the DaemonSet's pods ask for and a pod on the real node already holds (the
# real node has no portmap plugin: nothing is bound on the host, the scheduler counts it).
HOST_PORT = 18081


def daemonset_port_taken(namespace: str) -> list[Manifest]:
    """DaemonSet ``agent`` on every node, the real one included (it tolerates its taint), each
    pod asking for HOST_PORT; pod ``holder`` holds that port on the real node first: the
    agent's pod there stays Pending, the kwok node's runs."""
    port = [{"containerPort": 8081, "hostPort": HOST_PORT}]
    holder = pod("holder", namespace, container("app", "exec sleep 3600", ports=port), grace=2)
    agent = container("agent", "exec sleep 3600", ports=port)
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet",
                 "metadata": {"name": "agent", "namespace": namespace},
                 "spec": {"selector": {"matchLabels": {"app": "agent"}},
                          "template": {"metadata": {"labels": {"app": "agent"}},
                                       "spec": {"containers": [agent], "terminationGracePeriodSeconds": 2,
                                                "tolerations": [{**TAINT, "operator": "Equal"}]}}}}
    return [holder, daemonset]


def budgets_by_expression(namespace: str) -> list[Manifest]:
    """Deployment ``api`` (2 pods, tier=backend) under two budgets ktrace must match without
    matchLabels: ``backend`` by a matchExpressions In, ``everything`` by an empty selector
    (policy/v1: every pod of the namespace)."""
    api = deployment("api", namespace, container("api", "exec sleep 3600"), replicas=2,
                     labels={"tier": "backend"})

    def budget(name: str, selector: Manifest, **spec: Any) -> Manifest:
        return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"selector": selector, **spec}}

    by_expression = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["backend", "cache"]}]}
    return [api, budget("backend", by_expression, maxUnavailable=1), budget("everything", {}, minAvailable=2)]



def critical_pod_preempting(plane: LocalControlPlane, namespace: str) -> None:
    """Pod ``victim`` takes most of the real node's CPU (1500m of its 2 cores); then pod
    ``critical`` (priorityClassName system-node-critical), bound to the node by spec.nodeName
    so no scheduler weighs it, asks for 1 CPU: the kubelet's admission finds no room, and
    for a critical pod it preempts others instead of rejecting it (pkg/kubelet/preemption):
    the victim ends Failed, reason Preempting."""
    def sleeper(name: str, cpu: str, **spec: Any) -> Manifest:
        app = container("app", "exec sleep 3600", resources={"requests": {"cpu": cpu}})
        return pod(name, namespace, app, grace=2, **spec)

    apply(plane, sleeper("victim", "1500m"))
    plane.kubectl("wait", "--for=condition=Ready", "pod/victim", "-n", namespace, "--timeout=60s")
    apply(plane, sleeper("critical", "1", nodeName=NODE_NAME, priorityClassName="system-node-critical"))
    plane.kubectl("wait", "--for=jsonpath={.status.reason}=Preempting", "pod/victim", "-n", namespace,
                  "--timeout=60s")

def apply(plane: LocalControlPlane, *objects: Manifest) -> None:
    plane.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))


def rollout(plane: LocalControlPlane, namespace: str, prestop_seconds: int,
            when_ready: Callable[[], None] = lambda: None) -> None:
    """The web Deployment behind its Service, Ready (then when_ready runs), then rolled by an
    env change."""
    apply(plane, service("web", namespace), web_deployment("web", namespace, prestop_seconds=prestop_seconds))
    plane.kubectl("rollout", "status", "deploy/web", "-n", namespace, "--timeout=120s")
    when_ready()
    time.sleep(2)  # a steady state before the rollout, as in production
    plane.kubectl("set", "env", "deploy/web", "-n", namespace, "VERSION=2")
    plane.kubectl("rollout", "status", "deploy/web", "-n", namespace, "--timeout=180s")


# The nodes a drained Deployment may run on: the real node, then the spare node the drain
# moves its pods to (kwok's, labelled only once the drain may proceed).
DRAIN_TARGET = "ktrace.test/drain-target"
# The pods a drain evicts (kubectl drain --pod-selector): this namespace's only, whatever
# else other tests left on the shared node.
DRAINED = "ktrace.test/drained"


def drained_web(namespace: str) -> list[Manifest]:
    """The web Deployment on the nodes labelled DRAIN_TARGET, and a PodDisruptionBudget that
    needs both its pods: no eviction is allowed until it is relaxed."""
    web = web_deployment("web", namespace)
    web["spec"]["template"]["metadata"]["labels"][DRAINED] = namespace
    web["spec"]["template"]["spec"]["nodeSelector"] = {DRAIN_TARGET: "true"}
    web["spec"]["template"]["spec"]["tolerations"] = [{**TAINT, "operator": "Equal"}]
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
              "metadata": {"name": "web", "namespace": namespace},
              "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}
    return [web, budget]


@dataclass
class Drain:
    blocked_at: float  # epoch seconds: the first drain gave up, the node cordoned, pods on it
    refused: str  # what kubectl drain said then
    passed_at: float  # the second drain evicted both pods


def drain_blocked_then_allowed(plane: LocalControlPlane, namespace: str, spare_node: str,
                               blocked_s: int = 12) -> Drain:
    """A graceful drain of the real node through the Eviction API (kubectl drain), blocked by
    the web Deployment's PodDisruptionBudget (minAvailable 2 of 2), then allowed once spare
    capacity is labelled and the budget relaxed to minAvailable 1. The node is uncordoned and
    both labels removed at the end, as found. The first drain retries for ``blocked_s``."""
    def wait_budget(field: str, value: int) -> None:
        plane.kubectl("wait", f"--for=jsonpath={{.status.{field}}}={value}", "pdb/web", "-n", namespace,
                      "--timeout=60s")

    def drain(timeout: str) -> None:
        plane.kubectl("drain", NODE_NAME, "--ignore-daemonsets", "--pod-selector", f"{DRAINED}={namespace}",
                      f"--timeout={timeout}")

    plane.kubectl("label", "node", NODE_NAME, f"{DRAIN_TARGET}=true")
    try:
        apply(plane, *drained_web(namespace))
        plane.kubectl("rollout", "status", "deploy/web", "-n", namespace, "--timeout=120s")
        wait_budget("currentHealthy", 2)
        try:
            drain(f"{blocked_s}s")
            raise AssertionError("the drain passed although the budget allows no disruption")
        except ControlPlaneError as refused:
            blocked = Drain(time.time(), str(refused), 0.0)
        time.sleep(3)  # the blocked drain as an incident would see it
        plane.kubectl("label", "node", spare_node, f"{DRAIN_TARGET}=true")
        plane.kubectl("patch", "pdb", "web", "-n", namespace, "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
        wait_budget("disruptionsAllowed", 1)
        drain("100s")  # within kubectl()'s 120 s
        blocked.passed_at = time.time()
        time.sleep(3)
        return blocked
    finally:
        plane.kubectl("uncordon", NODE_NAME)
        plane.kubectl("label", "node", NODE_NAME, spare_node, f"{DRAIN_TARGET}-")


# --- the kubelet's own verdicts (tests/data/node/catalogue) ------------------------------
# Pods bound by spec.nodeName skip the scheduler: only the kubelet's admission
# (pkg/kubelet/lifecycle/predicate.go, handlers.go) judges them.

# An extended resource the real node advertises one of (patched into its status, as an
# operator advertises a dongle): asking for two is the kubelet's OutOf<resource>.
DONGLE = "ktrace.test/dongle"
# A NoExecute taint the kubelet's admission checks (it ignores NoSchedule ones).
QUARANTINE = {"key": "ktrace.test/quarantine", "value": "true", "effect": "NoExecute"}


def bound(name: str, namespace: str, *containers: Manifest, **spec: Any) -> Manifest:
    """A pod bound to the real node by spec.nodeName, tolerating its NoSchedule taint."""
    manifest = pod(name, namespace, *containers, grace=2, nodeName=NODE_NAME, **spec)
    if "nodeSelector" not in spec:  # the placement's: the kubelet alone judges this pod
        del manifest["spec"]["nodeSelector"]
    return manifest


def sleeper(name: str = "app", **fields: Any) -> Manifest:
    return container(name, "exec sleep 3600", **fields)


def advertise_dongle(plane: LocalControlPlane) -> None:
    """The node's status.capacity gets one DONGLE; the kubelet copies it to allocatable."""
    pointer, jsonpath = DONGLE.replace("/", "~1"), DONGLE.replace(".", "\\.")
    patch = json.dumps([{"op": "add", "path": f"/status/capacity/{pointer}", "value": "1"}])
    plane.kubectl("patch", "node", NODE_NAME, "--subresource=status", "--type=json", "-p", patch)
    plane.kubectl("wait", f"--for=jsonpath={{.status.allocatable.{jsonpath}}}=1", f"node/{NODE_NAME}",
                  "--timeout=60s")


def admission_rejections(namespace: str) -> list[Manifest]:
    """Pods the kubelet refuses, one per admission check a node like this one fails:
    ``affinity`` (a nodeSelector label the node lacks), ``portclash`` (host port HOST_PORT+1,
    held by ``porter``), ``oslabel`` (pod label kubernetes.io/os=windows), ``osfield``
    (spec.os windows), ``dongle`` (2 of the one DONGLE), ``disk`` (100 Ti of ephemeral
    storage), ``apparmor`` (a RuntimeDefault profile on a host without AppArmor),
    ``strictgroups`` (supplementalGroupsPolicy Strict, which containerd 1.6 does not report)."""
    windows = {"kubernetes.io/os": "windows"}
    oslabel = bound("oslabel", namespace, sleeper())
    oslabel["metadata"]["labels"].update(windows)
    return [
        bound("affinity", namespace, sleeper(), nodeSelector={"ktrace.test/disk": "ssd"}),
        bound("portclash", namespace, sleeper(ports=[{"containerPort": 8082, "hostPort": HOST_PORT + 1}])),
        oslabel,
        bound("osfield", namespace, sleeper(), os={"name": "windows"}),
        bound("dongle", namespace, sleeper(resources={"requests": {DONGLE: "2"}, "limits": {DONGLE: "2"}})),
        bound("disk", namespace, sleeper(resources={"requests": {"ephemeral-storage": "100Ti"}})),
        bound("apparmor", namespace, sleeper(), securityContext={"appArmorProfile": {"type": "RuntimeDefault"}}),
        bound("strictgroups", namespace, sleeper(), securityContext={"supplementalGroupsPolicy": "Strict"}),
    ]


def port_holder(namespace: str) -> Manifest:
    return bound("porter", namespace, sleeper(ports=[{"containerPort": 8082, "hostPort": HOST_PORT + 1}]))


def quarantined(plane: LocalControlPlane, namespace: str) -> None:
    """The node tainted QUARANTINE, pod ``untolerated`` bound to it: the kubelet refuses it
    (TaintToleration) — and the taint-eviction controller deletes it; the taint removed."""
    taint = "{key}={value}:{effect}".format(**QUARANTINE)
    plane.kubectl("taint", "node", NODE_NAME, taint)
    try:
        time.sleep(3)  # the kubelet's node informer has the taint
        apply(plane, bound("untolerated", namespace, sleeper()))
        time.sleep(5)
    finally:
        plane.kubectl("taint", "node", NODE_NAME, f"{taint}-")


def kubelet_stalls(namespace: str) -> list[Manifest]:
    """Pods that start and do not get far: ``poststart`` (its postStart hook fails: the
    kubelet kills the container), ``slowhook`` (its postStart hook runs for an hour: the pod
    stays ContainerCreating), ``secretless`` (a Secret volume that does not exist), ``gated``
    (a readinessGates condition no controller sets)."""
    failing_hook = {"postStart": {"exec": {"command": [
        "sh", "-c", "echo 'config service 10.96.0.7:8500 refused the connection' >&2; exit 7"]}}}
    slow_hook = {"postStart": {"exec": {"command": ["sleep", "3600"]}}}
    creds = [{"name": "creds", "mountPath": "/creds"}]
    return [
        pod("poststart", namespace, sleeper(lifecycle=failing_hook), grace=2),
        pod("slowhook", namespace, sleeper(lifecycle=slow_hook), grace=2),
        pod("secretless", namespace, sleeper(volumeMounts=creds), grace=2,
            volumes=[{"name": "creds", "secret": {"secretName": "db-creds"}}]),
        pod("gated", namespace, sleeper(), grace=2,
            readinessGates=[{"conditionType": "ktrace.test/load-balancer-ready"}]),
    ]


def daemonset_rejected(namespace: str) -> Manifest:
    """DaemonSet ``winagent`` for the real node whose pods carry the label
    kubernetes.io/os=windows: the scheduler places them (it reads no pod label), the
    kubelet refuses them (PodOSSelectorNodeLabelDoesNotMatch), the controller kills and
    recreates them (FailedDaemonPod)."""
    labels = {"app": "winagent", "kubernetes.io/os": "windows"}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "winagent", "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": "winagent"}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [sleeper("agent")], "terminationGracePeriodSeconds": 2,
                                           **pod_placement()}}}}


def indexed_jobs_failing(namespace: str) -> list[Manifest]:
    """Indexed Jobs: ``shards`` (3 indexes, backoffLimitPerIndex 1; index 1 always fails:
    FailedIndexes once the others complete) and ``strict`` (4 indexes, backoffLimitPerIndex
    0, maxFailedIndexes 1; indexes 1 and 2 fail: MaxFailedIndexesExceeded)."""
    def job(name: str, failing: str, message: str, **spec: Any) -> Manifest:
        script = (f'case "$JOB_COMPLETION_INDEX" in {failing}) echo "{message}" > /dev/termination-log; '
                  "exit 2;; esac; exit 0")
        template = {"spec": {"containers": [container("work", script)], "restartPolicy": "Never",
                             "terminationGracePeriodSeconds": 2, **pod_placement()}}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
                "spec": {"completionMode": "Indexed", "template": template, **spec}}

    return [
        job("shards", "1", "shard 1: checksum mismatch", completions=3, parallelism=3, backoffLimitPerIndex=1),
        job("strict", "1|2", "shard rejected: schema 7", completions=4, parallelism=4, backoffLimitPerIndex=0,
            maxFailedIndexes=1),
    ]


# --- what a kubelet configured for it decides (tests/data/node/pressure), a block volume
# it cannot map (tests/data/node/block) --------------------------------------------------

def ephemeral_storage_limits(namespace: str) -> list[Manifest]:
    """Pods past their ephemeral-storage limits (writes to the container's own file system,
    which counts against them): ``podlimit`` (one container, limit 8Mi, writes 32 MiB: past
    the pod's total of its containers' limits) and ``ctrlimit`` (``app`` limit 64Mi writes
    nothing, ``logger`` limit 8Mi writes 32 MiB: the pod's total of 72Mi holds, the
    container's own limit does not). The kubelet evicts each with its own message."""
    def writer(name: str, limit: str, mebibytes: int) -> Manifest:
        script = f"dd if=/dev/zero of=/spill bs=1M count={mebibytes}; exec sleep 3600"
        return container(name, script, resources={"limits": {"ephemeral-storage": limit}})

    return [
        bound("podlimit", namespace, writer("app", "8Mi", 32)),
        bound("ctrlimit", namespace, writer("app", "64Mi", 0), writer("logger", "8Mi", 32)),
    ]


def pid_hog(namespace: str, processes: int) -> Manifest:
    """``forker``: PROCESSES sleeping children, past the node's pid.available threshold."""
    script = f"i=0; while [ $i -lt {processes} ]; do sleep 3600 & i=$((i+1)); done; wait"
    return bound("forker", namespace, container("app", script))


def restart_all_rule(namespace: str) -> list[Manifest]:
    """Pods whose container asks to restart all containers on exit code 42 (the node feature
    RestartAllContainersOnContainerExits, which this node's kubelet does not declare):
    ``restartall`` bound by spec.nodeName (the kubelet's PodFeatureUnsupported) and
    ``restartall-scheduled`` placed on the real node by the scheduler, which finds no node."""
    rules = {"restartPolicy": "Never",
             "restartPolicyRules": [{"action": "RestartAllContainers",
                                     "exitCodes": {"operator": "In", "values": [42]}}]}
    return [
        bound("restartall", namespace, sleeper(**rules)),
        pod("restartall-scheduled", namespace, sleeper(**rules), grace=2),
    ]


def pods_filling(namespace: str, count: int) -> list[Manifest]:
    """COUNT bound sleepers ``filler-0`` … and then ``overflow``: one more than a node of
    maxPods COUNT takes (the kubelet's OutOfpods)."""
    return [*(bound(f"filler-{i}", namespace, sleeper()) for i in range(count)),
            bound("overflow", namespace, sleeper())]


# A block device path that does not exist on the node.
MISSING_DEVICE = "/dev/ktrace-missing-disk"


def block_volume_missing(namespace: str) -> list[Manifest]:
    """A local PersistentVolume of volumeMode Block whose device (MISSING_DEVICE) does not
    exist on the real node, its claim (bound by name) and pod ``rawdisk`` using it as a
    volumeDevice: the kubelet cannot map it (FailedMapVolume) before it makes any loop
    device or bind mount, and the pod stays ContainerCreating."""
    on_node = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE_NAME]}]}]}}
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"{namespace}-disk"},
              "spec": {"capacity": {"storage": "1Gi"}, "volumeMode": "Block", "accessModes": ["ReadWriteOnce"],
                       "storageClassName": "", "persistentVolumeReclaimPolicy": "Retain",
                       "local": {"path": MISSING_DEVICE}, "nodeAffinity": on_node,
                       "claimRef": {"namespace": namespace, "name": "disk"}}}
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "disk", "namespace": namespace},
             "spec": {"volumeMode": "Block", "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                      "volumeName": f"{namespace}-disk", "resources": {"requests": {"storage": "1Gi"}}}}
    user = pod("rawdisk", namespace, sleeper(volumeDevices=[{"name": "disk", "devicePath": "/dev/xvda"}]), grace=2,
               volumes=[{"name": "disk", "persistentVolumeClaim": {"claimName": "disk"}}])
    return [volume, claim, user]


def pod_level_memory_hog(namespace: str, mebibytes: int) -> Manifest:
    """``hog``: 64Mi of memory requested for the whole pod (pod-level ``spec.resources``,
    PodLevelResources), none by its container, which holds MEBIBYTES: dd's one block, kept
    while the pipe's reader never reads."""
    script = f"dd if=/dev/zero bs={mebibytes}M count=1 | sleep 3600"
    return bound("hog", namespace, container("app", script), resources={"requests": {"memory": "64Mi"}})


# A shell that exits at once on SIGTERM, as a well-behaved application does.
EXITS_ON_SIGTERM = "trap 'exit 0' TERM; while true; do sleep 1; done"


def shutdown_bystanders(namespace: str) -> list[Manifest]:
    """Running on the real node when it shuts down, each with a 30 s grace period of its own:
    the one-replica Deployment ``web`` (its HTTP server exits on SIGTERM), pod ``stubborn``
    (ignores SIGTERM) and pod ``critical`` (priorityClassName system-node-critical; exits on
    SIGTERM), which the kubelet stops after the others, in its own grace period."""
    return [
        web_deployment("web", namespace, replicas=1),
        pod("stubborn", namespace, sleeper(), grace=30),
        pod("critical", namespace, container("app", EXITS_ON_SIGTERM), grace=30,
            priorityClassName="system-node-critical"),
    ]
