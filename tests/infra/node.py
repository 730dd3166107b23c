"""The tests' real node: containerd, runc and one kubelet joined to the local control plane.

kwok stands in for the kubelets of the fake nodes; this node's containers really start, are
probed, get SIGTERM and die. It runs on the host as these machines allow (cgroup v1, root
without CAP_SYS_RESOURCE, no registry), and leaves the host as it found it:

- containerd and the kubelet share one private mount namespace (compose/node/run.sh) with
  a private /run and read-only stand-ins for the kernel settings they would change;
- every process of the node lives in cgroups of its own (``ktrace-node-<pid>`` in each v1
  hierarchy; pods under ``…/pods``): stopping kills what is left there and removes them;
- pods get addresses on a bridge of its own (no NAT, no iptables rules); the bridge is
  removed at stop, and the directories its tools need are made private and removed;
- images are imported from OCI archives made here (tests/infra/images.py): no registry;
- with ``shutdownGracePeriod`` set, a private system bus and a logind stand-in
  (tests/infra/logind.py) are the operating system the kubelet's node shutdown manager talks
  to; ``shut_down()`` is logind's PrepareForShutdown, as ``systemctl poweroff`` would send it;
- the kubelet serves its API on 127.0.0.1 only, to clients of the test CA it authenticates
  and has the API server authorize (webhook), as real clusters do: ``kubectl logs``, ``exec``,
  ``cp`` and ``port-forward`` reach it through the API server. A kubelet refuses a loopback
  node IP, so it runs with an external cloud provider and start() does that provider's part:
  it sets the node's InternalIP to 127.0.0.1 and removes the uninitialized taint.

The node is tainted ``ktrace.test/real-node=true:NoSchedule`` so the kwok tests' pods never
land on it; a test that wants it uses ``pod_placement()``.

    python -m tests.infra.node start --dir /tmp/k8s    # a control plane plus the real node
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.infra import images
from tests.infra.logind import Logind
from tests.infra.k8s import (
    KUBELET_CLIENT_USER,
    REPO,
    Component,
    ControlPlaneError,
    LocalControlPlane,
    _certificate,
    _private_pem,
    _write_pem,
    free_ports,
    wait_for,
    write_kubeconfig,
)

INSTALL_SCRIPT = REPO / "compose" / "node" / "install.sh"
RUN_SCRIPT = REPO / "compose" / "node" / "run.sh"
NODE_NAME = "real-node-0"
TAINT = {"key": "ktrace.test/real-node", "value": "true", "effect": "NoSchedule"}
# What a kubelet with an external cloud provider registers with, until that provider has
# set the node's addresses.
UNINITIALIZED_TAINT = "node.cloudprovider.kubernetes.io/uninitialized"
NODE_IP = "127.0.0.1"  # where the kubelet listens: the address the API server dials
BRIDGE = "ktrace-node0"
POD_SUBNET = "10.250.0.0/24"
CGROUP_MOUNTS = Path("/sys/fs/cgroup")
# Host directories the kubelet or the CNI tools write to whatever they are told: each gets a
# private tmpfs inside the node's mount namespace (made, then removed, if it did not exist).
# The kubelet writes its logind override to the third when logind's InhibitDelayMaxUSec is
# shorter than its shutdownGracePeriod (the stand-in's is not: a guard, never a route).
PRIVATE_DIRS = (Path("/var/log/containers"), Path("/var/lib/cni"), Path("/etc/systemd/logind.conf.d"))
# One real node per machine at a time (the bridge and its subnet are the machine's): a second
# test session waits for the first one's node to stop.
LOCK_FILE = Path("/tmp/ktrace-real-node.lock")


def pod_placement() -> dict[str, Any]:
    """The spec fields that put a pod on the real node (merge them into a pod spec)."""
    return {
        "nodeSelector": {"kubernetes.io/hostname": NODE_NAME},
        "tolerations": [{**TAINT, "operator": "Equal"}],
    }


def install() -> Path:
    """Install containerd, runc, the CNI plugins and the pause binary; return the node cache."""
    done = subprocess.run(["bash", str(INSTALL_SCRIPT)], stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise ControlPlaneError(f"{INSTALL_SCRIPT} failed with code {done.returncode}; see its output above")
    return Path(done.stdout.strip().splitlines()[-1])


class RealNode:
    """One kubelet and its containerd, joined to a LocalControlPlane as NODE_NAME."""

    def __init__(self, plane: LocalControlPlane, *, work_dir: Path, name: str = NODE_NAME,
                 kubelet_settings: Mapping[str, Any] | None = None) -> None:
        """KUBELET_SETTINGS: KubeletConfiguration fields over this node's defaults (a mapping
        value is merged into the default's: ``{"evictionHard": {"pid.available": "…"}}``
        keeps the other thresholds), e.g. ``maxPods``, ``featureGates``."""
        self.plane = plane
        self.name = name
        self.kubelet_settings = dict(kubelet_settings or {})
        self.work_dir = Path(work_dir).resolve()
        self.socket = self.work_dir / "containerd" / "containerd.sock"
        self.cert, self.key = self.work_dir / "node.crt", self.work_dir / "node.key"
        self.cgroup = f"ktrace-node-{os.getpid()}"
        self.kubelet_port, self.healthz_port = free_ports(2)
        self.created_dirs: list[Path] = []
        self.process: Component | None = None
        self.lock: Any = None
        grace = _seconds(str(self._kubelet_config()["shutdownGracePeriod"]))
        self.logind = Logind(self.work_dir / "logind", inhibit_delay_max=grace) if grace else None

    # --- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        cache = install()
        self.lock = LOCK_FILE.open("a")
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        for sub in ("logs", "containerd", "kubelet", "pod-logs", "cni/net.d", "cni/ipam", "images"):
            (self.work_dir / sub).mkdir(parents=True, exist_ok=True)
        try:
            self._make_cgroups()
            self._make_private_dirs()
            self._write_configs()
            if self.logind is not None:
                self.logind.start()  # before the kubelet: its shutdown manager connects once
            self.process = Component("real-node", self._argv(), self.work_dir / "logs" / "node.log",
                                     ready=lambda: True)
            self._start_in_cgroup()
            wait_for(self.process, "containerd", self.socket.exists, timeout=30)
            self._import(images.pause_image(cache / "bin" / "pause"))
            self._import(images.busybox_image())
            self._allow_api_server_to_kubelet()
            wait_for(self.process, f"node {self.name} registered", self._registered, timeout=60)
            self._initialize_as_cloud_provider()
            wait_for(self.process, f"node {self.name} Ready", self._ready, timeout=90)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the kubelet and containerd, then everything left in the node's cgroups."""
        if self.process is not None:
            self.process.stop(timeout=30)
        if self.logind is not None:
            self.logind.stop()
        self._kill_cgroup_processes()
        self._remove_cgroups()
        subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)
        for directory in reversed(self.created_dirs):
            try:
                directory.rmdir()
            except OSError:
                pass
        self.created_dirs.clear()
        if self.lock is not None:
            self.lock.close()  # releases the flock
            self.lock = None

    def shut_down(self) -> None:
        """The operating system asks for a shutdown (logind's PrepareForShutdown(true)): the
        kubelet stops its pods within its grace periods and refuses new ones. The node keeps
        running, shutting down, until stop()."""
        if self.logind is None:
            raise ControlPlaneError("no shutdownGracePeriod in the kubelet settings: no shutdown manager to tell")
        self.logind.shut_down()

    def import_archive(self, archive: Path) -> None:
        """Make the images of an OCI archive (tests/infra/images.py's, or `podman save
        --format oci-archive`) available to the node's containerd (pods use IfNotPresent or Never)."""
        done = subprocess.run(
            ["ctr", "--address", str(self.socket), "--namespace", "k8s.io", "images", "import", str(archive)],
            capture_output=True, text=True, timeout=300,
        )
        if done.returncode != 0:
            raise ControlPlaneError(f"importing {archive}: {done.stderr.strip()}")

    # --- pieces ------------------------------------------------------------------

    def _argv(self) -> list[str]:
        kubelet = [
            str(self.plane.bin_dir / "kubelet"),
            f"--config={self.work_dir / 'kubelet-config.yaml'}",
            f"--kubeconfig={self.work_dir / 'kubelet.kubeconfig'}",
            f"--hostname-override={self.name}",
            "--cloud-provider=external",  # the only way to a loopback InternalIP (class doc)
            f"--root-dir={self.work_dir / 'kubelet'}",
            f"--cert-dir={self.work_dir / 'kubelet-pki'}",
            "--v=1",
        ]
        return ["unshare", "--mount", "--propagation", "slave", "bash", str(RUN_SCRIPT),
                str(self.work_dir), str(self.work_dir / "containerd.toml"), "--", *kubelet]

    def _start_in_cgroup(self) -> None:
        assert self.process is not None
        procs = [self._cgroup_dir(m) / "cgroup.procs" for m in _v1_hierarchies()]

        def enter() -> None:  # in the child, before exec: everything it starts stays inside
            for path in procs:
                path.write_text(str(os.getpid()))
            os.setsid()
            signal.pthread_sigmask(signal.SIG_SETMASK, set())  # main() blocks them for sigwait

        env = {**os.environ, "KTRACE_NODE_PRIVATE_DIRS": ":".join(map(str, PRIVATE_DIRS))}
        if self.logind is not None:
            env["DBUS_SYSTEM_BUS_ADDRESS"] = self.logind.address
        with self.process.log.open("ab") as out:
            self.process.process = subprocess.Popen(
                self.process.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env=env, preexec_fn=enter,
            )

    def _import(self, image: images.Image) -> None:
        self.import_archive(image.write_archive(self.work_dir / "images" / (image.name.replace("/", "_") + ".tar")))

    def _allow_api_server_to_kubelet(self) -> None:
        """Bind the API server's kubelet client to the built-in role for the kubelet API
        (the kubelet asks the API server whether a request is allowed)."""
        manifest = self.plane.kubectl("create", "clusterrolebinding", "ktrace-test:kubelet-api-admin",
                                      "--clusterrole=system:kubelet-api-admin", f"--user={KUBELET_CLIENT_USER}",
                                      "--dry-run=client", "-o", "yaml")
        self.plane.kubectl("apply", "-f", "-", input=manifest)

    def _registered(self) -> bool:
        return bool(self.plane.api(f"/api/v1/nodes/{self.name}"))

    def _initialize_as_cloud_provider(self) -> None:
        """What a cloud controller manager does for a new node: set its addresses (the kubelet
        keeps them from then on) and remove the taint that kept pods off it meanwhile."""
        addresses = [{"type": "InternalIP", "address": NODE_IP}, {"type": "Hostname", "address": self.name}]
        self.plane.kubectl("patch", "node", self.name, "--subresource=status", "--type=merge",
                           "-p", json.dumps({"status": {"addresses": addresses}}))
        self.plane.kubectl("taint", "node", self.name, f"{UNINITIALIZED_TAINT}-")

    def _ready(self) -> bool:
        node = self.plane.api(f"/api/v1/nodes/{self.name}")
        return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])

    # --- configuration -----------------------------------------------------------

    def _write_configs(self) -> None:
        w = self.work_dir
        self._write_node_credentials()
        write_kubeconfig(w / "kubelet.kubeconfig", self.plane.server, self.plane.pki)
        config = yaml.safe_load((w / "kubelet.kubeconfig").read_text())
        config["users"][0]["user"] = {"client-certificate": str(self.cert), "client-key": str(self.key)}
        (w / "kubelet.kubeconfig").write_text(yaml.safe_dump(config))
        (w / "resolv.conf").write_text("nameserver 127.0.0.1\n")
        (w / "containerd.toml").write_text(self._containerd_config())
        (w / "cni" / "net.d" / "10-ktrace-node.conflist").write_text(json.dumps(self._cni_config(), indent=1))
        (w / "kubelet-config.yaml").write_text(yaml.safe_dump(self._kubelet_config()))

    def _write_node_credentials(self) -> None:
        """The kubelet's certificate, CN system:node:NAME, O system:nodes: as a client, one the
        Node authorizer accepts; as the kubelet's serving certificate, valid for 127.0.0.1."""
        pki = self.plane.pki
        ca_key = serialization.load_pem_private_key(pki.ca_key.read_bytes(), password=None)
        ca_cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:nodes"),
            x509.NameAttribute(NameOID.COMMON_NAME, f"system:node:{self.name}"),
        ])
        cert = _certificate(subject, ca_cert.subject, key.public_key(), ca_key, ca=False)  # type: ignore[arg-type]
        _write_pem(self.cert, cert.public_bytes(serialization.Encoding.PEM))
        _write_pem(self.key, _private_pem(key))

    def _containerd_config(self) -> str:
        w = self.work_dir
        return f"""version = 2
root = "{w / 'containerd' / 'root'}"
state = "{w / 'containerd' / 'state'}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "{self.socket}"
[ttrpc]
  address = "{w / 'containerd' / 'ttrpc.sock'}"
[debug]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "{w / 'containerd' / 'opt'}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{images.PAUSE_IMAGE}"
  # a sandbox's negative oom_score_adj needs CAP_SYS_RESOURCE, which root lacks here
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{w / 'cni' / 'net.d'}"
"""

    def _cni_config(self) -> dict[str, Any]:
        return {
            "cniVersion": "1.0.0",
            "name": "ktrace-node",
            "plugins": [{
                "type": "bridge",
                "bridge": BRIDGE,
                "isGateway": True,
                "ipMasq": False,  # no NAT: no iptables rule on the host
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    # .240 and above are the tests' own (tests/infra/service_network.py)
                    "ranges": [[{"subnet": POD_SUBNET, "rangeEnd": "10.250.0.239"}]],
                    "dataDir": str(self.work_dir / "cni" / "ipam"),
                },
            }],
        }

    def _kubelet_config(self) -> dict[str, Any]:
        config = self._default_kubelet_config()
        for key, value in self.kubelet_settings.items():
            default = config.get(key)
            config[key] = {**default, **value} if isinstance(default, dict) and isinstance(value, dict) else value
        return config

    def _default_kubelet_config(self) -> dict[str, Any]:
        w = self.work_dir
        return {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            # These machines mount cgroup v1: 1.35+ refuses it unless told, and 1.37 still may be.
            "failCgroupV1": False,
            "cgroupDriver": "cgroupfs",
            "cgroupRoot": f"/{self.cgroup}/pods",
            "containerRuntimeEndpoint": f"unix://{self.socket}",
            "address": NODE_IP,
            "port": self.kubelet_port,
            "readOnlyPort": 0,
            "tlsCertFile": str(self.cert),
            "tlsPrivateKeyFile": str(self.key),
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": self.healthz_port,
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": True},  # bearer tokens checked by the API server
                "x509": {"clientCAFile": str(self.plane.pki.ca_cert)},
            },
            "authorization": {"mode": "Webhook"},  # each request: a SubjectAccessReview
            "makeIPTablesUtilChains": False,  # the host's tables are not ours to change
            "registerWithTaints": [TAINT],
            "failSwapOn": False,
            "resolvConf": str(w / "resolv.conf"),
            "clusterDNS": ["10.96.0.10"],  # no DNS runs, and none is needed: it keeps the
            "clusterDomain": "cluster.local",  # kubelet from warning on every pod it starts
            "podLogsDir": str(w / "pod-logs"),
            "volumePluginDir": str(w / "volume-plugins"),
            # Thresholds far below what the host has: only a test's own pod is evicted, for
            # its own limits (emptyDir sizeLimit, ephemeral-storage), never for the host's use.
            "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%",
                             "imagefs.available": "1%", "nodefs.inodesFree": "1%"},
            "evictionPressureTransitionPeriod": "5s",
            "volumeStatsAggPeriod": "5s",  # an emptyDir past its sizeLimit is seen within seconds
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "nodeStatusUpdateFrequency": "5s",
            "syncFrequency": "10s",
            "serializeImagePulls": False,
            "maxPods": 60,
            "shutdownGracePeriod": "0s",
        }

    # --- host state: cgroups and directories -------------------------------------

    def _cgroup_dir(self, mount: Path) -> Path:
        return mount / self.cgroup

    def _make_cgroups(self) -> None:
        for mount in _v1_hierarchies():
            for directory in (self._cgroup_dir(mount), self._cgroup_dir(mount) / "pods"):
                directory.mkdir(exist_ok=True)
                if mount.name == "cpuset":  # a cpuset cgroup takes no task until these are set
                    for item in ("cpuset.cpus", "cpuset.mems"):
                        (directory / item).write_text((directory.parent / item).read_text())

    def _kill_cgroup_processes(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pids = {pid for m in _v1_hierarchies() for pid in _procs_under(self._cgroup_dir(m))}
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        raise ControlPlaneError(f"processes of the real node outlived it in /{self.cgroup}")

    def _remove_cgroups(self) -> None:
        for mount in _all_hierarchies():
            top = self._cgroup_dir(mount)
            if not top.is_dir():
                continue
            for directory in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
                _rmdir_retrying(directory)
            _rmdir_retrying(top)

    def _make_private_dirs(self) -> None:
        for directory in PRIVATE_DIRS:
            missing = [p for p in (directory, *directory.parents) if not p.exists()]
            for path in reversed(missing):
                path.mkdir()
                self.created_dirs.append(path)


def _seconds(go_duration: str) -> float:
    """A Go duration as KubeletConfiguration writes it ("0s", "20s", "1m30s"), in seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", go_duration)
    if not parts or "".join(n + u for n, u in parts) != go_duration:
        raise ValueError(f"not a Go duration: {go_duration!r}")
    return sum(float(n) * units[u] for n, u in parts)


def _v1_hierarchies() -> list[Path]:
    return [m for m, kind in _cgroup_mounts() if kind == "cgroup"]


def _all_hierarchies() -> list[Path]:
    return [m for m, _ in _cgroup_mounts()]


def _cgroup_mounts() -> list[tuple[Path, str]]:
    mounts = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        _, point, kind, *_ = line.split()
        if kind in ("cgroup", "cgroup2") and point.startswith(str(CGROUP_MOUNTS)):
            mounts.append((Path(point), kind))
    return mounts


def _procs_under(top: Path) -> set[int]:
    if not top.is_dir():
        return set()
    found = set()
    for procs in top.rglob("cgroup.procs"):
        try:
            found.update(int(p) for p in procs.read_text().split())
        except OSError:
            pass
    return found


def _rmdir_retrying(directory: Path) -> None:
    for _ in range(50):  # a cgroup whose last task just died can be busy for a moment
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)
    raise ControlPlaneError(f"cannot remove cgroup {directory}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.infra.node", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("start", help="a control plane and the real node, up until SIGTERM/SIGINT")
    start.add_argument("--dir", type=Path, required=True, help="work dir: pki, etcd data, logs, kubeconfig")
    args = parser.parse_args(argv)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    plane = LocalControlPlane(work_dir=args.dir, nodes=1, stage_set="graceful")
    plane.start()
    node = RealNode(plane, work_dir=args.dir / "node")
    try:
        node.start()
        print(f"KUBECONFIG={plane.kubeconfig}", flush=True)
        print(f"# node {node.name}: logs in {node.work_dir / 'logs'}", flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        node.stop()
        plane.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
