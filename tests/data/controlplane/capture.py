"""Record what the control plane alone writes (issue 25's catalogue rows that need no
kubelet) with ``ktrace record`` on the tests' real control plane (tests/infra/k8s.py).

    .venv/bin/python tests/data/controlplane/capture.py OUT_DIR [recycle|binding]

kube-apiserver, kube-controller-manager and kube-scheduler are the real ones; kwok stands in
for the kubelets of kwok-node-0..2 (all in zone ``zone-a``); node ``silent-node`` has no
kubelet at all. ``ktrace record`` (default kinds) records into OUT_DIR/recording while,
each in its namespace:

  nodes     silent-node, created with no kubelet: the node controller's NodeStatusNeverUpdated;
            pods bound to it by name (``stranded`` waits, ``leaving`` is deleted: nothing
            confirms either)
  sched     a gated pod; a low-priority pod preempted by a high-priority one on kwok-node-0
  volumes   pods the volume plugins refuse: an RWOP claim in use, an iSCSI disk in use, a PV
            in another zone, a CSI driver whose CSIStorageCapacity is too small, a claim whose
            PV was removed; claims the PV controller cannot bind (no class, a too-small PV, a
            second claim on a bound PV); a Delete-policy PV no plugin can delete
  ephemeral a generic ephemeral volume whose claim a ResourceQuota forbids
  jobs      a Job created suspended, then resumed
  sts       a StatefulSet whose pods a ResourceQuota forbids
  webhook   a Deployment whose pods a validating webhook (webhook.py, HTTPS on 127.0.0.1,
            stopped by PID) denies
  frozen    a namespace deleted while the same webhook denies deleting its ConfigMaps

then waits past ``ktrace stuck``'s 60 s threshold. Writes OUT_DIR/versions.txt.

``recycle`` records, on a control plane of its own, into OUT_DIR/recycle: a Recycle-policy
volume released while a ResourceQuota in namespace default (pods: 0) forbids the PV
controller's recycler pod.

``binding`` records, on a control plane of its own whose kube-controller-manager runs without
its PV controller (persistentvolume-binder-controller), into OUT_DIR/binding: a pod whose
binding (pods/binding CREATE) the webhook denies, and a pod using a claim whose status says
Bound to a PV that does not exist (written by hand, as the PV controller writes a binding;
with the controller running it would mark the claim Lost within milliseconds).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.data.replayer.capture import Scenario, deployment, pod, recorder  # noqa: E402
from tests.infra.k8s import LocalControlPlane, free_ports  # noqa: E402

ZONE = "topology.kubernetes.io/zone"
WEBHOOK = Path(__file__).with_name("webhook.py")
CSI_DRIVER = "capacity.csi.ktrace.test"


def pv(name: str, storage_class: str, *, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",),
       policy: str = "Retain", labels: dict | None = None, source: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": storage_class,
                     "persistentVolumeReclaimPolicy": policy,
                     **(source or {"hostPath": {"path": f"/tmp/{name}"}})}}


def claim(name: str, ns: str, storage_class: str, *, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",),
          volume: str | None = None, annotations: dict | None = None) -> dict:
    spec: dict = {"accessModes": list(modes), "storageClassName": storage_class,
                  "resources": {"requests": {"storage": size}}}
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "annotations": annotations or {}}, "spec": spec}


def with_volume(manifest: dict, volume: dict, *, node: str | None = "kwok-node-0") -> dict:
    """The pod with one volume `data`; node None lets the scheduler pick any node."""
    manifest["spec"]["volumes"] = [{"name": "data", **volume}]
    if node is None:
        manifest["spec"].pop("nodeSelector")
    return manifest


def uses(claim_name: str) -> dict:
    return {"persistentVolumeClaim": {"claimName": claim_name}}


def quota(ns: str, **hard: str) -> dict:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "none", "namespace": ns},
            "spec": {"hard": hard}}


class Play(Scenario):
    def bound(self, ns: str, *claims: str) -> None:
        for name in claims:
            self.k("wait", "--for=jsonpath={.status.phase}=Bound", f"pvc/{name}", "-n", ns, "--timeout=60s")

    def ready(self, ns: str, *pods: str) -> None:
        self.k("wait", "--for=condition=Ready", *(f"pod/{p}" for p in pods), "-n", ns, "--timeout=60s")

    def silent_node(self) -> None:
        """A Node no kubelet ever updates (tainted, so no pod lands on it)."""
        self.apply({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": "silent-node", "labels": {"kubernetes.io/hostname": "silent-node"}},
                    "spec": {"taints": [{"key": "example.com/no-kubelet", "effect": "NoSchedule"}]}})

    def stranded_pods(self) -> None:
        """Pods bound to silent-node by spec.nodeName (as a DaemonSet binds its pods)."""
        ns = "nodes"
        self.namespace(ns)
        bound = [pod(name, ns) for name in ("stranded", "leaving")]
        for manifest in bound:
            manifest["spec"].pop("nodeSelector")
            manifest["spec"]["nodeName"] = "silent-node"
        self.apply(*bound)
        time.sleep(2)
        self.k("delete", "pod", "leaving", "-n", ns, "--wait=false")

    def scheduling(self) -> None:
        ns = "sched"
        self.namespace(ns)
        gated = pod("gated", ns)
        gated["spec"]["schedulingGates"] = [{"name": "example.com/approval"}]
        self.apply(gated, *({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": name}, "value": value}
                            for name, value in (("low", 100), ("high", 1000))))
        self.apply(self.priority(pod("victim", ns), "low"))
        self.ready(ns, "victim")
        time.sleep(2)
        self.apply(self.priority(pod("preemptor", ns), "high"))
        self.ready(ns, "preemptor")

    @staticmethod
    def priority(manifest: dict, priority_class: str) -> dict:
        """Each asks for 24 of kwok-node-0's 32 CPUs: two cannot share it."""
        manifest["spec"]["priorityClassName"] = priority_class
        manifest["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "24"}}
        return manifest

    def volumes(self) -> None:
        ns = "volumes"
        self.namespace(ns)
        # Scheduling: each pod's volume is refused by one plugin.
        self.apply(
            pv("rwop-pv", "manual", modes=("ReadWriteOncePod",)),
            claim("single", ns, "manual", modes=("ReadWriteOncePod",), volume="rwop-pv"),
            pv("zone-b-pv", "manual", labels={ZONE: "zone-b"}),
            claim("zoned", ns, "manual", volume="zone-b-pv"),
            {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": CSI_DRIVER},
             "spec": {"storageCapacity": True, "attachRequired": False}},
            {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "capacity"},
             "provisioner": CSI_DRIVER, "volumeBindingMode": "WaitForFirstConsumer"},
            {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
             "metadata": {"name": "zone-a", "namespace": ns}, "storageClassName": "capacity",
             "capacity": "100Mi", "nodeTopology": {"matchLabels": {ZONE: "zone-a"}}},
            claim("big", ns, "capacity"))
        self.bound(ns, "single", "zoned")
        iscsi = {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2026-12.test.ktrace:disk", "lun": 0}}
        self.apply(with_volume(pod("rwop-first", ns), uses("single")),
                   with_volume(pod("disk-first", ns, node="kwok-node-1"), iscsi))
        self.ready(ns, "rwop-first", "disk-first")
        self.apply(with_volume(pod("rwop-second", ns), uses("single"), node=None),
                   with_volume(pod("disk-second", ns, node="kwok-node-1"), iscsi),
                   with_volume(pod("zoned", ns), uses("zoned"), node=None),
                   with_volume(pod("needs-space", ns), uses("big"), node=None))
        # The PV controller: claims it cannot bind, a volume it cannot delete or lose.
        self.apply(
            claim("no-class", ns, ""),
            pv("small-pv", "manual", size="100Mi"),
            claim("too-big", ns, "manual", volume="small-pv"),
            pv("shared-pv", "manual"),
            claim("first", ns, "manual", volume="shared-pv"),
            pv("nfs-pv", "manual", policy="Delete", source={"nfs": {"server": "10.0.0.2", "path": "/exports"}}),
            claim("scratch", ns, "manual", volume="nfs-pv"),
            pv("lost-pv", "manual"),
            claim("lost", ns, "manual", volume="lost-pv"))
        self.bound(ns, "first", "scratch", "lost")
        # A second claim that says it is bound to shared-pv (as a restore of a backup writes
        # it): the PV's claimRef names `first`.
        self.apply(claim("second", ns, "manual", volume="shared-pv",
                         annotations={"pv.kubernetes.io/bind-completed": "yes"}))
        self.k("delete", "pvc", "scratch", "-n", ns, "--wait=false")
        # lost-pv removed while bound: pv-protection holds it until its finalizer is dropped.
        self.k("delete", "pv", "lost-pv", "--wait=false")
        self.k("patch", "pv", "lost-pv", "--type=merge", "-p", json.dumps({"metadata": {"finalizers": None}}))
        self.k("wait", "--for=jsonpath={.status.phase}=Lost", "pvc/lost", "-n", ns, "--timeout=60s")
        self.apply(with_volume(pod("uses-lost", ns), uses("lost"), node=None))

    def ephemeral(self) -> None:
        ns = "ephemeral"
        self.namespace(ns)
        self.apply(quota(ns, persistentvolumeclaims="0"))
        self.k("wait", "--for=jsonpath={.status.hard.persistentvolumeclaims}=0", "resourcequota/none", "-n", ns,
               "--timeout=30s")
        template = {"spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "capacity",
                             "resources": {"requests": {"storage": "1Mi"}}}}
        self.apply(with_volume(pod("scratch", ns), {"ephemeral": {"volumeClaimTemplate": template}}, node=None))

    def job_resumed(self) -> None:
        ns = "jobs"
        self.namespace(ns)
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "later", "namespace": ns},
               "spec": {"suspend": True,
                        "template": {"spec": pod("later", ns)["spec"] | {"restartPolicy": "Never"}}}}
        self.apply(job)
        time.sleep(5)
        self.k("patch", "job", "later", "-n", ns, "--type=merge", "-p", json.dumps({"spec": {"suspend": False}}))

    def statefulset_quota(self) -> None:
        ns = "sts"
        self.namespace(ns)
        self.apply(quota(ns, pods="0"))
        self.k("wait", "--for=jsonpath={.status.hard.pods}=0", "resourcequota/none", "-n", ns, "--timeout=30s")
        template = deployment("db", ns, 1)["spec"]["template"]
        self.apply({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": ns},
                    "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                             "template": template}})

    def webhook(self, port: int) -> None:
        """Pods created in `webhook` and ConfigMaps deleted in `frozen` are denied."""
        for ns in ("webhook", "frozen"):
            self.namespace(ns)
        self.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "frozen"}})
        self.deny("freeze", port, ("deny-pods.freeze.ktrace.test", "webhook", "pods", "CREATE"),
                  ("deny-deletes.freeze.ktrace.test", "frozen", "configmaps", "DELETE"))
        self.apply(deployment("web", "webhook", 1))
        self.k("delete", "namespace", "frozen", "--wait=false")

    def deny(self, name: str, port: int, *rules: tuple[str, str, str, str]) -> None:
        """A ValidatingWebhookConfiguration sending each (webhook, namespace, resource,
        operation) to webhook.py on PORT, which denies it."""
        ca = base64.b64encode(self.plane.pki.ca_cert.read_bytes()).decode()
        self.apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                    "metadata": {"name": name},
                    "webhooks": [{"name": webhook, "admissionReviewVersions": ["v1"], "sideEffects": "None",
                                  "failurePolicy": "Fail", "timeoutSeconds": 5,
                                  "clientConfig": {"url": f"https://127.0.0.1:{port}/deny", "caBundle": ca},
                                  "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                                  "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": [resource],
                                             "operations": [operation]}]}
                                 for webhook, ns, resource, operation in rules]})
        time.sleep(3)  # the API server's webhook informer


def recycle(play: Play) -> None:
    ns = "recycle"
    play.namespace(ns)
    play.apply(quota("default", pods="0"))
    play.k("wait", "--for=jsonpath={.status.hard.pods}=0", "resourcequota/none", "-n", "default", "--timeout=30s")
    play.apply(pv("recycled-pv", "manual", policy="Recycle"), claim("data", ns, "manual", volume="recycled-pv"))
    play.bound(ns, "data")
    play.k("delete", "pvc", "data", "-n", ns, "--wait=false")
    time.sleep(20)


def binding(play: Play, port: int) -> None:
    """A pod whose binding a webhook denies; a pod whose claim is Bound to a PV that does not
    exist (the PV controller, which would mark the claim Lost, does not run)."""
    play.namespace("binding")
    play.deny("deny-binding", port, ("deny-binding.freeze.ktrace.test", "binding", "pods/binding", "CREATE"))
    play.apply(pod("refused", "binding"))
    bound_to_ghost(play)
    time.sleep(75)  # past stuck's 60 s


def bound_to_ghost(play: Play) -> None:
    """Claim ghost/orphan written Bound to ghost-pv, which does not exist (run without the PV
    controller, which would mark it Lost), and pod ghost/uses-orphan using it."""
    play.namespace("ghost")
    orphan = claim("orphan", "ghost", "manual", volume="ghost-pv",
                   annotations={"pv.kubernetes.io/bind-completed": "yes"})
    play.apply(orphan)
    # what the PV controller writes when it binds a claim
    play.k("patch", "pvc", "orphan", "-n", "ghost", "--subresource=status", "--type=merge",
           "-p", json.dumps({"status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                                        "capacity": {"storage": "1Gi"}}}))
    play.apply(with_volume(pod("uses-orphan", "ghost"), uses("orphan")))


def versions(plane: LocalControlPlane) -> str:
    def first_line(*argv: str) -> str:
        return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0]
    b = plane.bin_dir
    return "\n".join([
        f"kube-apiserver {first_line(str(b / 'kube-apiserver'), '--version')}",
        f"kube-controller-manager {first_line(str(b / 'kube-controller-manager'), '--version')}",
        f"kube-scheduler {first_line(str(b / 'kube-scheduler'), '--version')}",
        first_line(str(b / "etcd"), "--version"),
        f"kwok {first_line(str(b / 'kwok'), '--version')}", ""])


def main_recycle(out: Path) -> None:
    plane = LocalControlPlane(work_dir=out / "plane", nodes=1, stage_set="race")
    plane.start()
    (out / "versions.txt").write_text(versions(plane))
    with recording(plane, out):
        recycle(Play(plane))


@contextmanager
def recording(plane: LocalControlPlane, out: Path) -> Iterator[None]:
    """``ktrace record`` into OUT/recording on the started PLANE (given 3 s to list first);
    afterwards stopped by PID and the plane stopped."""
    rec = None
    try:
        rec = recorder(plane, out / "recording")
        time.sleep(3)
        yield
    finally:
        if rec is not None:
            rec.terminate()
            rec.wait(timeout=30)
        plane.stop()


@contextmanager
def server_and_recorder(plane: LocalControlPlane, out: Path, server: Path = WEBHOOK) -> Iterator[int]:
    """SERVER (webhook.py, or another script taking PORT CERT KEY) on a free port (yielded)
    while ``recording``; afterwards it is stopped by PID too."""
    (port,) = free_ports(1)
    served = subprocess.Popen([sys.executable, str(server), str(port), str(plane.pki.cert), str(plane.pki.key)],
                              stderr=open(out / f"{server.stem}.log", "ab"))
    try:
        with recording(plane, out):
            yield port
    finally:
        served.terminate()
        served.wait(timeout=10)


def main_binding(out: Path) -> None:
    plane = LocalControlPlane(work_dir=out / "plane", nodes=1, stage_set="race",
                              controller_manager_flags=["--controllers=-persistentvolume-binder-controller"])
    plane.start()
    (out / "versions.txt").write_text(versions(plane))
    with server_and_recorder(plane, out) as port:
        binding(Play(plane), port)


def main(out: Path) -> None:
    plane = LocalControlPlane(work_dir=out / "plane", nodes=3, stage_set="race",
                              controller_manager_flags=["--node-startup-grace-period=20s"])
    plane.start()
    (out / "versions.txt").write_text(versions(plane))
    for node in plane.node_names:
        plane.kubectl("label", "node", node, f"{ZONE}=zone-a")
    with server_and_recorder(plane, out) as port:
        play = Play(plane)
        play.silent_node()
        play.scheduling()
        play.volumes()
        play.ephemeral()
        play.job_resumed()
        play.statefulset_quota()
        play.webhook(port)
        play.stranded_pods()
        time.sleep(75)  # past stuck's 60 s; silent-node past its 20 s startup grace

if __name__ == "__main__":
    if sys.argv[2:] == ["recycle"]:
        main_recycle(Path(sys.argv[1]).resolve() / "recycle")
    elif sys.argv[2:] == ["binding"]:
        main_binding(Path(sys.argv[1]).resolve() / "binding")
    else:
        main(Path(sys.argv[1]).resolve())
