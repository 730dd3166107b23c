"""A client's view of Services on the real node: kube-proxy and an HTTP prober in a network
namespace of the tests' own, so kube-proxy's rules are real and never the host's.

The namespace is held by a ``sleep`` started under ``unshare --net`` (no mount under
/run/netns to clean up) and joined to the node's pod bridge by a veth pair, so the pods are
reached directly on their own subnet. The API server listens on the host's loopback only:
a relay pair carries kube-proxy's connection across (tests/infra/relay.py). kube-proxy runs
in iptables mode with its production sync periods, and its conntrack sysctls left alone
(they are the host's). Stopping ends every process by PID; the namespace, its rules and the
veth go with its last process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.infra.k8s import REPO, Component, ControlPlaneError, LocalControlPlane, wait_for
from tests.infra.node import BRIDGE, NODE_NAME, POD_SUBNET

HOST_LINK = "ktrace-svc0"
ADDRESS = "10.250.0.250/24"  # above the node's pod range (tests/infra/node.py)
GATEWAY = "10.250.0.1"
API_PORT_INSIDE = 6443


class ServiceNetwork:
    """kube-proxy for the real node's Services, and requests sent through them."""

    def __init__(self, plane: LocalControlPlane, work_dir: Path) -> None:
        self.plane = plane
        self.work_dir = Path(work_dir).resolve()
        self.holder: Component | None = None
        self.components: list[Component] = []

    def start(self) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        try:
            self.holder = self._component("netns", ["unshare", "--net", "sleep", "infinity"], inside=False)
            self._link()
            self._relay()
            self._kube_proxy()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for component in reversed(self.components):
            component.stop()
        self.components.clear()
        subprocess.run(["ip", "link", "delete", HOST_LINK], capture_output=True)
        self.holder = None

    def probe(self, url: str, out: Path) -> Component:
        """Start sending GETs to url from inside the namespace; stop() the result to end it."""
        prober = self._component("prober", [sys.executable, "-m", "tests.infra.prober", url, str(out)])
        wait_for(prober, "the prober's first request", out.exists, timeout=10)
        return prober

    def rules_for(self, cluster_ip: str) -> bool:
        """Whether kube-proxy has programmed the Service at cluster_ip."""
        rules = self._inside(["iptables-save", "-t", "nat"])
        return cluster_ip in rules

    # --- pieces ------------------------------------------------------------------

    def _component(self, name: str, argv: list[str], *, inside: bool = True) -> Component:
        if inside:
            assert self.holder is not None and self.holder.process is not None
            argv = ["nsenter", f"--net=/proc/{self.holder.process.pid}/ns/net", "--", *argv]
        component = Component(name, argv, self.work_dir / f"{name}.log", ready=lambda: True,
                              env={"PYTHONPATH": str(REPO), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        component.start()
        self.components.append(component)
        return component

    def _inside(self, argv: list[str]) -> str:
        assert self.holder is not None and self.holder.process is not None
        done = subprocess.run(["nsenter", f"--net=/proc/{self.holder.process.pid}/ns/net", "--", *argv],
                              capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise ControlPlaneError(f"{' '.join(argv)} in the service namespace: {done.stderr.strip()}")
        return done.stdout

    def _link(self) -> None:
        assert self.holder is not None and self.holder.process is not None
        pid = str(self.holder.process.pid)
        if subprocess.run(["ip", "link", "show", BRIDGE], capture_output=True).returncode != 0:
            # No pod has made the node's bridge yet: the CNI plugin takes an existing one as its
            # own, and the node deletes it when it stops.
            subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True, capture_output=True)
        for argv in (["ip", "link", "add", HOST_LINK, "type", "veth", "peer", "name", "eth0", "netns", pid],
                     ["ip", "link", "set", HOST_LINK, "master", BRIDGE, "up"]):
            done = subprocess.run(argv, capture_output=True, text=True)
            if done.returncode != 0:
                raise ControlPlaneError(f"{' '.join(argv)}: {done.stderr.strip()}")
        for argv in (["ip", "link", "set", "lo", "up"], ["ip", "addr", "add", ADDRESS, "dev", "eth0"],
                     ["ip", "link", "set", "eth0", "up"], ["ip", "route", "add", "default", "via", GATEWAY]):
            self._inside(argv)

    def _relay(self) -> None:
        socket = self.work_dir / "api.sock"
        socket.unlink(missing_ok=True)
        api_port = self.plane.server.rsplit(":", 1)[1]
        outside = self._component("relay-host", [sys.executable, "-m", "tests.infra.relay",
                                                 f"unix:{socket}", f"tcp:127.0.0.1:{api_port}"], inside=False)
        wait_for(outside, "the host relay", socket.exists, timeout=10)
        inside = self._component("relay-netns", [sys.executable, "-m", "tests.infra.relay",
                                                 f"tcp:127.0.0.1:{API_PORT_INSIDE}", f"unix:{socket}"])
        wait_for(inside, "the namespace relay", lambda: "listening" in inside.log.read_text(), timeout=10)

    def _kube_proxy(self) -> None:
        kubeconfig = yaml.safe_load(self.plane.kubeconfig.read_text())
        kubeconfig["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{API_PORT_INSIDE}"
        (self.work_dir / "kube-proxy.kubeconfig").write_text(yaml.safe_dump(kubeconfig))
        config = {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration",
            "clientConnection": {"kubeconfig": str(self.work_dir / "kube-proxy.kubeconfig")},
            "mode": "iptables", "hostnameOverride": NODE_NAME, "clusterCIDR": POD_SUBNET,
            # Zero leaves the host-wide conntrack settings as they are.
            "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
        }
        (self.work_dir / "kube-proxy.yaml").write_text(json.dumps(config))
        proxy = self._component("kube-proxy", [str(self.plane.bin_dir / "kube-proxy"),
                                               f"--config={self.work_dir / 'kube-proxy.yaml'}", "--v=2"])
        wait_for(proxy, "kube-proxy's first sync",
                 lambda: "KUBE-SERVICES" in self._inside(["iptables-save", "-t", "nat"]), timeout=60)
