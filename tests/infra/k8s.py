"""A real Kubernetes control plane for tests, without containers.

etcd, kube-apiserver, kube-controller-manager and kube-scheduler run as local
processes (binaries from ``compose/k8s/build.sh``); kwok stands in for the
kubelets of fake Nodes and drives pods through Running, Ready and termination
with the stage files in ``compose/k8s/stages``. Binding, EndpointSlices, garbage
collection, deletion and watch semantics are the real thing.

    python -m tests.infra.k8s start --dir /tmp/k8s    # prints KUBECONFIG=..., runs until SIGTERM
"""

from __future__ import annotations

import argparse
import base64
import ctypes
import datetime
import ipaddress
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "compose" / "k8s" / "build.sh"
STAGE_DIR = REPO / "compose" / "k8s" / "stages"
STAGE_SETS: dict[str, tuple[str, ...]] = {
    "graceful": ("node.yaml", "pod-ready.yaml", "pod-stop-graceful.yaml", "pod-finish.yaml"),
    "race": ("node.yaml", "pod-ready.yaml", "pod-stop-race.yaml", "pod-finish.yaml"),
    # race, plus kubelet stand-ins for pods labelled kubelet.ktrace.test/script
    "kubelet": ("node.yaml", "pod-ready.yaml", "pod-stop-race.yaml", "pod-finish.yaml",
                "kubelet-pull.yaml", "kubelet-start.yaml"),
}
# kwok manages the Nodes carrying this label; removing it "loses" the node: its
# heartbeats and Lease renewals stop. A label rather than an annotation, because
# kwok only learns that a node left an annotation selector when it restarts.
FAKE_NODE_KEY = "kwok.x-k8s.io/node"
FAKE_NODE_VALUE = "fake"
NODE_LEASE_SECONDS = 8  # kwok renews every quarter: well inside the 10s node grace period
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")


class ControlPlaneError(RuntimeError):
    """A component failed to start, or a request to the cluster failed."""


def ensure_binaries() -> Path:
    """Build (or find cached) binaries with compose/k8s/build.sh; return the bin dir.

    A first build takes tens of minutes: its progress goes to stderr as it happens.
    """
    done = subprocess.run(["bash", str(BUILD_SCRIPT)], stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise ControlPlaneError(f"{BUILD_SCRIPT} failed with code {done.returncode}; see its output above")
    return Path(done.stdout.strip().splitlines()[-1])


class Cluster:
    """Helpers that work on any cluster reachable through an admin kubeconfig."""

    def __init__(self, *, kubeconfig: Path, kubectl_bin: Path) -> None:
        self.kubeconfig = kubeconfig
        self.kubectl_bin = kubectl_bin

    @property
    def server(self) -> str:
        return self.kubectl("config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")

    def kubectl(self, *args: str, input: str | None = None) -> str:
        """Run kubectl against this cluster; return stdout, raise with stderr on failure."""
        argv = [str(self.kubectl_bin), "--kubeconfig", str(self.kubeconfig), *args]
        done = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise ControlPlaneError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def token_for(self, service_account: str, namespace: str) -> str:
        """A bound token for the service account, from the TokenRequest API."""
        return self.kubectl("create", "token", service_account, "-n", namespace).strip()

    def add_node(self, name: str) -> None:
        """Create a fake Node that kwok manages (it turns Ready within a second or two)."""
        self.kubectl("create", "-f", "-", input=json.dumps(node_manifest(name)))

    def lose_node(self, name: str) -> None:
        """Stop kwok from managing the node: no heartbeat nor Lease renewal, as if it crashed."""
        self.kubectl("label", "node", name, f"{FAKE_NODE_KEY}-")

    def restore_node(self, name: str) -> None:
        """Undo lose_node: kwok heartbeats the node again and it turns Ready."""
        self.kubectl("label", "node", name, f"{FAKE_NODE_KEY}={FAKE_NODE_VALUE}")


def node_manifest(name: str) -> dict[str, Any]:
    fake = {FAKE_NODE_KEY: FAKE_NODE_VALUE}
    labels = {"type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **fake}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": fake},
    }


# The API server's identity towards kubelets (logs, exec, port-forward): a user of its own,
# which the real node binds to system:kubelet-api-admin, as kubeadm's clusters do.
KUBELET_CLIENT_USER = "kube-apiserver-kubelet-client"


@dataclass(frozen=True)
class Pki:
    """One CA; one admin certificate that serves the API and authenticates every client but
    the API server itself towards kubelets, which has a certificate of its own."""

    ca_cert: Path
    ca_key: Path
    cert: Path
    key: Path
    sa_key: Path
    sa_pub: Path
    kubelet_client_cert: Path
    kubelet_client_key: Path


def write_pki(directory: Path) -> Pki:
    """Create the PKI once per work dir, so a kubeconfig stays valid across restarts."""
    pki = Pki(*(directory / n for n in ("ca.crt", "ca.key", "admin.crt", "admin.key", "sa.key", "sa.pub",
                                        "kubelet-client.crt", "kubelet-client.key")))
    if pki.kubelet_client_key.exists():
        return pki
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, admin_key, sa_key, kubelet_client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(4))
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ktrace-test-ca")])
    ca = _certificate(ca_name, ca_name, ca_key.public_key(), ca_key, ca=True)
    admin_name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
            x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes-admin"),
        ]
    )
    admin = _certificate(admin_name, ca_name, admin_key.public_key(), ca_key, ca=False)
    kubelet_client_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, KUBELET_CLIENT_USER)])
    kubelet_client = _certificate(kubelet_client_name, ca_name, kubelet_client_key.public_key(), ca_key, ca=False)
    for path, cert in ((pki.ca_cert, ca), (pki.cert, admin), (pki.kubelet_client_cert, kubelet_client)):
        _write_pem(path, cert.public_bytes(serialization.Encoding.PEM))
    for path, key in ((pki.ca_key, ca_key), (pki.key, admin_key), (pki.sa_key, sa_key),
                      (pki.kubelet_client_key, kubelet_client_key)):
        _write_pem(path, _private_pem(key))
    public = sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    _write_pem(pki.sa_pub, public)
    return pki


def _certificate(
    subject: x509.Name, issuer: x509.Name, public_key: Any, signer: ec.EllipticCurvePrivateKey, *, ca: bool
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        usage = x509.KeyUsage(True, False, False, False, False, True, True, False, False)
        builder = builder.add_extension(usage, critical=True)
    else:
        names = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"]
        sans = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        eku = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage(eku), critical=False)
    return builder.sign(signer, hashes.SHA256())


def _private_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _write_pem(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    path.chmod(0o600)


def write_kubeconfig(path: Path, server: str, pki: Pki) -> None:
    """An admin kubeconfig with the credentials inlined, so it can be copied elsewhere."""

    def b64(p: Path) -> str:
        return base64.b64encode(p.read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "ktrace", "cluster": {"server": server, "certificate-authority-data": b64(pki.ca_cert)}}
        ],
        "users": [
            {
                "name": "admin",
                "user": {"client-certificate-data": b64(pki.cert), "client-key-data": b64(pki.key)},
            }
        ],
        "contexts": [{"name": "ktrace", "context": {"cluster": "ktrace", "user": "admin"}}],
        "current-context": "ktrace",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)


def free_ports(count: int) -> list[int]:
    """Distinct free loopback ports (all held open while choosing, so none repeats)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _die_with_parent() -> None:
    """Runs in the child: get SIGTERM if the test process dies, so no component outlives it."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass
class Component:
    """One control-plane process, with its log file and a readiness probe."""

    name: str
    argv: list[str]
    log: Path
    ready: Callable[[], bool]
    env: dict[str, str] | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
                preexec_fn=_die_with_parent,
            )

    def stop(self, timeout: float = 15) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def check_alive(self) -> None:
        if self.process is None:
            raise ControlPlaneError(f"{self.name} was not started")
        code = self.process.poll()
        if code is not None:
            raise ControlPlaneError(f"{self.name} exited with code {code}; its log ends:\n{self.tail()}")

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def wait_for(component: Component, what: str, probe: Callable[[], bool], timeout: float) -> None:
    """Poll probe until true; fail early, with the log's tail, if the component exits."""
    deadline = time.monotonic() + timeout
    while True:
        component.check_alive()
        if _safely(probe):
            return
        if time.monotonic() > deadline:
            raise ControlPlaneError(
                f"{what} not ready after {timeout:.0f}s; {component.name} log ends:\n{component.tail()}"
            )
        time.sleep(0.2)


def _safely(probe: Callable[[], bool]) -> bool:
    try:
        return probe()
    except (OSError, ControlPlaneError, ValueError):  # URLError is an OSError
        return False


def http_json(
    url: str, *, context: ssl.SSLContext | None = None, body: Any = None, method: str = "GET"
) -> Any:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as e:
        raise ControlPlaneError(f"{method} {url}: HTTP {e.code} {e.read()[:500]!r}") from e


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class LocalControlPlane(Cluster):
    """etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kwok, local processes.

    Everything lives in work_dir: pki/, etcd/, logs/<component>.log, kubeconfig. bin_dir
    defaults to what compose/k8s/build.sh builds. stage_set picks kwok's pod-stop stage:
    "graceful" (containers exit 3s after deletion) or "race" (at once); a pod's annotation
    pod-stop.stage.kwok.x-k8s.io/delay overrides either; "kubelet" is "race" plus the
    kubelet stand-ins of compose/k8s/stages/kubelet-*.yaml. The EndpointSlice batch period
    defaults to 2s so that the rollout race (containers stop before the endpoint turns
    not-ready) can be reproduced. scheduler_profiles, when given, are the scheduler's
    KubeSchedulerConfiguration profiles (e.g. one with a plugin disabled) instead of its default.
    """

    def __init__(
        self,
        *,
        work_dir: Path,
        bin_dir: Path | None = None,
        nodes: int = 2,
        stage_set: str = "graceful",
        endpointslice_updates_batch_period: str = "2s",
        controller_manager_flags: Sequence[str] = (),
        apiserver_flags: Sequence[str] = (),
        scheduler_profiles: Sequence[dict[str, Any]] = (),
    ) -> None:
        if stage_set not in STAGE_SETS:
            raise ValueError(f"stage_set must be one of {sorted(STAGE_SETS)}, not {stage_set!r}")
        self.work_dir = Path(work_dir).resolve()
        self.bin_dir = Path(bin_dir) if bin_dir else ensure_binaries()
        super().__init__(kubeconfig=self.work_dir / "kubeconfig", kubectl_bin=self.bin_dir / "kubectl")
        self.node_names = [f"kwok-node-{i}" for i in range(nodes)]
        self.stage_files = [STAGE_DIR / f for f in STAGE_SETS[stage_set]]
        self.endpointslice_updates_batch_period = endpointslice_updates_batch_period
        self.controller_manager_flags = list(controller_manager_flags)
        self.apiserver_flags = list(apiserver_flags)
        self.scheduler_profiles = list(scheduler_profiles)
        self.pki = write_pki(self.work_dir / "pki")
        self.etcd_port, self.peer_port, self.api_port, self.kcm_port, self.sched_port = free_ports(5)
        self.components = {c.name: c for c in self._components()}

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    # --- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        """Start every component, create the fake Nodes and wait until pods can run."""
        write_kubeconfig(self.kubeconfig, self.server, self.pki)
        try:
            for name in ("etcd", "kube-apiserver"):
                self.start_component(name)
            for name in ("kube-controller-manager", "kube-scheduler", "kwok"):
                self.components[name].start()
            for name in self.node_names:
                self._create_node(name)
            for name in ("kube-controller-manager", "kube-scheduler"):
                self._wait_ready(self.components[name])
            wait_for(self.components["kwok"], "fake Nodes", self._nodes_ready, timeout=60)
            kcm = self.components["kube-controller-manager"]
            wait_for(kcm, "default ServiceAccount", self._default_sa, timeout=60)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Terminate every component, last started first."""
        for name in reversed(COMPONENTS):
            self.components[name].stop()

    def start_component(self, name: str) -> None:
        """(Re)start one component and wait until it is healthy."""
        component = self.components[name]
        component.start()
        self._wait_ready(component)

    def stop_component(self, name: str) -> None:
        """Stop one component, e.g. "kube-apiserver" for an outage; data in work_dir is kept."""
        self.components[name].stop()

    def restart_component(self, name: str) -> None:
        """Stop and start one component; kube-apiserver comes back with an empty watch cache."""
        self.stop_component(name)
        self.start_component(name)

    def add_stages(self, *files: Path) -> None:
        """Restart kwok with these stage files too (stages rendered for pods that exist)."""
        self.stage_files += files
        self.components["kwok"].argv = self._kwok_argv()
        self.restart_component("kwok")

    def compact_etcd(self) -> int:
        """Compact etcd's history at its current revision, as kube-apiserver's compactor does.

        Like that compactor, record the revision under compact_rev_key first: kube-apiserver
        watches the key and drops its cached LIST snapshots older than it (within 15s). Reads
        of older revisions from etcd then fail with 410 Gone. Watches are served from the
        watch cache, which keeps its own history (at least 75s) whatever etcd holds: to make
        an old resourceVersion fail there too, restart kube-apiserver. Returns the revision.
        """
        key = _b64("compact_rev_key")
        revision = int(self._etcd("range", {"key": key})["header"]["revision"])
        self._etcd("put", {"key": key, "value": _b64(str(revision))})
        self._etcd("compaction", {"revision": revision, "physical": True})
        return revision

    def write_storage(self, key: str, obj: dict[str, Any]) -> None:
        """Write OBJ as JSON under KEY (e.g. /registry/<group>/<resource>/<name>) straight into
        etcd, past the API server's validation, as a restored backup or another writer of the
        store would. kube-apiserver decodes JSON from storage as well as protobuf, and its
        watch on etcd delivers the object to its caches and controllers."""
        self._etcd("put", {"key": _b64(key), "value": _b64(json.dumps(obj))})

    def _etcd(self, call: str, body: dict[str, Any]) -> Any:
        """One call to etcd's gRPC gateway (JSON over HTTP; there is no etcdctl here)."""
        return http_json(f"{self.etcd_url}/v3/kv/{call}", body=body, method="POST")

    def api(self, path: str, *, method: str = "GET", body: Any = None) -> Any:
        """One JSON request to kube-apiserver with the admin certificate."""
        return http_json(f"{self.server}{path}", context=self._admin_tls(), body=body, method=method)

    # --- components ------------------------------------------------------------

    def _components(self) -> list[Component]:
        logs = self.work_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        specs = (
            ("etcd", self._etcd_argv(), self._etcd_healthy),
            ("kube-apiserver", self._apiserver_argv(), self._apiserver_ready),
            ("kube-controller-manager", self._controller_manager_argv(), self._healthz(self.kcm_port)),
            ("kube-scheduler", self._scheduler_argv(), self._healthz(self.sched_port)),
            ("kwok", self._kwok_argv(), lambda: True),
        )
        # kwok also loads ~/.kwok/kwok.yaml when it exists: point its work dir here instead.
        kwok_env = {**os.environ, "KWOK_WORKDIR": str(self.work_dir / "kwok")}
        return [
            Component(name, argv, logs / f"{name}.log", ready, env=kwok_env if name == "kwok" else None)
            for name, argv, ready in specs
        ]

    def _etcd_argv(self) -> list[str]:
        peer = f"http://127.0.0.1:{self.peer_port}"
        return [
            str(self.bin_dir / "etcd"),
            "--name=ktrace",
            f"--data-dir={self.work_dir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=ktrace={peer}",
            "--unsafe-no-fsync",  # a throwaway test store: speed over durability
        ]

    def _apiserver_argv(self) -> list[str]:
        pki = self.pki
        return [
            str(self.bin_dir / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}",
            # Compaction is the tests' call (compact_etcd). Not 0: that also drops the watch on
            # compact_rev_key through which the API server learns of a compaction.
            "--etcd-compaction-interval=8760h",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            "--endpoint-reconciler-type=none",  # Endpoints refuse loopback addresses
            f"--secure-port={self.api_port}",
            f"--cert-dir={self.work_dir / 'pki'}",
            f"--tls-cert-file={pki.cert}",
            f"--tls-private-key-file={pki.key}",
            f"--client-ca-file={pki.ca_cert}",
            f"--service-account-key-file={pki.sa_pub}",
            f"--service-account-signing-key-file={pki.sa_key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=10.96.0.0/16",
            "--authorization-mode=Node,RBAC",
            # To kubelets as real clusters reach them: by the address the node reports (its
            # name resolves nowhere), their serving certificate checked against the CA.
            "--kubelet-preferred-address-types=InternalIP",
            f"--kubelet-certificate-authority={pki.ca_cert}",
            f"--kubelet-client-certificate={pki.kubelet_client_cert}",
            f"--kubelet-client-key={pki.kubelet_client_key}",
            # Close watches at shutdown rather than wait for clients (kube-apiserver's default
            # keeps a restart with controllers connected hanging until killed).
            "--shutdown-watch-termination-grace-period=2s",
            *self.apiserver_flags,
        ]

    def _controller_manager_argv(self) -> list[str]:
        pki = self.pki
        return [
            str(self.bin_dir / "kube-controller-manager"),
            *self._client_flags(self.kcm_port),
            "--controllers=*",
            "--use-service-account-credentials",
            f"--root-ca-file={pki.ca_cert}",
            f"--service-account-private-key-file={pki.sa_key}",
            f"--cluster-signing-cert-file={pki.ca_cert}",
            f"--cluster-signing-key-file={pki.ca_key}",
            "--node-monitor-grace-period=10s",
            f"--endpointslice-updates-batch-period={self.endpointslice_updates_batch_period}",
            *self.controller_manager_flags,
        ]

    def _scheduler_argv(self) -> list[str]:
        argv = [str(self.bin_dir / "kube-scheduler"), *self._client_flags(self.sched_port)]
        if self.scheduler_profiles:
            argv.append(f"--config={self._scheduler_config()}")
        return argv

    def _scheduler_config(self) -> Path:
        """A KubeSchedulerConfiguration of scheduler_profiles. Given --config, the scheduler
        ignores --kubeconfig (a deprecated flag): the file names it."""
        path = self.work_dir / "scheduler-config.json"
        path.write_text(json.dumps({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(self.kubeconfig)}, "profiles": self.scheduler_profiles}))
        return path

    def _client_flags(self, port: int) -> list[str]:
        # No --authentication-kubeconfig: only /healthz (always allowed) is used on the secure port.
        return [
            f"--kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            "--leader-elect=false",
        ]

    def _kwok_argv(self) -> list[str]:
        return [
            str(self.bin_dir / "kwok"),
            f"--kubeconfig={self.kubeconfig}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-label-selector={FAKE_NODE_KEY}={FAKE_NODE_VALUE}",
            f"--node-lease-duration-seconds={NODE_LEASE_SECONDS}",
            "--node-ip=10.240.0.1",
            "--cidr=10.244.0.0/16",
            *(f"--config={f}" for f in self.stage_files),
        ]

    # --- readiness -------------------------------------------------------------

    def _wait_ready(self, component: Component) -> None:
        wait_for(component, component.name, component.ready, timeout=90)

    def _admin_tls(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        context.load_cert_chain(str(self.pki.cert), str(self.pki.key))
        return context

    def _etcd_healthy(self) -> bool:
        return http_json(f"{self.etcd_url}/health").get("health") == "true"

    def _apiserver_ready(self) -> bool:
        url = f"{self.server}/readyz"
        with urllib.request.urlopen(url, context=self._admin_tls(), timeout=5) as response:
            return response.status == 200

    @staticmethod
    def _healthz(port: int) -> Callable[[], bool]:
        def probe() -> bool:
            # Self-signed serving certificate; /healthz needs no credentials.
            context = ssl._create_unverified_context()
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/healthz", context=context, timeout=5) as r:
                return r.status == 200

        return probe

    def _create_node(self, name: str) -> None:
        try:
            self.api("/api/v1/nodes", method="POST", body=node_manifest(name))
        except ControlPlaneError as e:
            if "HTTP 409" not in str(e):  # already there from an earlier start in this work dir
                raise

    def _nodes_ready(self) -> bool:
        items = self.api("/api/v1/nodes?labelSelector=type%3Dkwok")["items"]
        ready = {n["metadata"]["name"] for n in items if _condition(n, "Ready") == "True"}
        return ready >= set(self.node_names)

    def _default_sa(self) -> bool:
        return bool(self.api("/api/v1/namespaces/default/serviceaccounts/default"))


def _condition(obj: dict[str, Any], kind: str) -> str | None:
    for condition in obj.get("status", {}).get("conditions", []):
        if condition["type"] == kind:
            return condition["status"]
    return None


def external_cluster(kubeconfig: Path) -> Cluster:
    """A cluster someone else runs; kubectl from PATH, else the one compose/k8s/build.sh makes."""
    found = shutil.which("kubectl")
    kubectl = Path(found) if found else ensure_binaries() / "kubectl"
    return Cluster(kubeconfig=kubeconfig, kubectl_bin=kubectl)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.infra.k8s", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("start", help="start a control plane and keep it up until SIGTERM/SIGINT")
    start.add_argument("--dir", type=Path, required=True, help="work dir: pki, etcd data, logs, kubeconfig")
    start.add_argument("--nodes", type=int, default=2)
    start.add_argument("--stage-set", choices=sorted(STAGE_SETS), default="graceful")
    args = parser.parse_args(argv)

    # Block the signals before starting, so one that arrives mid-start is not lost.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    began = time.monotonic()
    plane = LocalControlPlane(work_dir=args.dir, nodes=args.nodes, stage_set=args.stage_set)
    plane.start()
    try:
        took = time.monotonic() - began
        print(f"# control plane up in {took:.1f}s; logs in {plane.work_dir / 'logs'}", flush=True)
        print(f"KUBECONFIG={plane.kubeconfig}", flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        plane.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
