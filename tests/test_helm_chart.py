"""The Helm chart (compose/helm/ktrace), marker deploy: linted and rendered by a real helm
(compose/helm/install.sh builds it from the Go module proxy), its RBAC held to the
recorder's catalogue and to compose/kubernetes/rbac.yaml, its arguments parsed by the real
``ktrace record`` and ``ktrace replay``, applied with server-side dry-run to the test control
plane, and installed, upgraded and uninstalled on the real node with the locally built image.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ktrace.commands.replay import replay
from ktrace.commands.serve import serve
from replayer import db
from replayer.analyses.stuck import stuck
from replayer.replay import replay as replay_into
from recorder.kube.catalogue import CATALOGUE
from schemas.redaction import REFUSED_RESOURCES
from transports.kafka.settings import KafkaSettings
from transports.kafka.source import KafkaSource
from tests.deploy_files import (READ_VERBS, container, find, manifest, parse_args, parse_record_args,
                                rbac_grants, recorded_grants)
from tests.infra.fixtures_image import IMAGE, VERSION
from tests.infra.k8s import REPO, Cluster, LocalControlPlane, free_ports
from tests.infra.node import NODE_NAME, RealNode, pod_placement
from tests.infra.polling import eventually
from tests.node_workloads import DB_TIMEOUT, apply, crash_loop, image_never_pulled
from tests.replayer_data import load_recording, rows

CHART = REPO / "compose" / "helm" / "ktrace"
GRANTS = yaml.safe_load((CHART / "grants.yaml").read_text())
KAFKA_VALUES = {
    "sink": "kafka", "persistence": {"enabled": False},
    "kafka": {"bootstrap": "kafka-0.kafka:9093,kafka-1.kafka:9093", "topicPrefix": "prod",
              "securityProtocol": "SASL_SSL", "saslMechanism": "SCRAM-SHA-512", "saslUsername": "ktrace",
              "saslPasswordSecret": {"name": "ktrace-kafka", "key": "password"}, "tlsSecret": "ktrace-kafka-tls",
              "schemaRegistry": {"url": "https://registry.example/apis/ccompat/v7", "username": "ktrace",
                                 "passwordSecret": {"name": "ktrace-registry", "key": "password"}}},
    "follower": {"enabled": True},
}


# --- helm ---------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def helm() -> Path:
    done = subprocess.run(["bash", str(REPO / "compose" / "helm" / "install.sh")], stdout=subprocess.PIPE,
                          text=True, timeout=3600)
    assert done.returncode == 0, "compose/helm/install.sh failed; its output is above"
    return Path(done.stdout.strip().splitlines()[-1])


def run_helm(helm: Path, *args: str, values: dict[str, Any] | None = None,
             kubeconfig: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    """helm with the values given on stdin, in a home of its own beside its binary in the
    cache (no user configuration read, nothing left in the user's home)."""
    argv = [str(helm), *args, *(["-f", "-"] if values is not None else []),
            *(["--kubeconfig", str(kubeconfig)] if kubeconfig else [])]
    home = helm.parent.parent / "home"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "HELM_CACHE_HOME": str(home / "cache"),
           "HELM_CONFIG_HOME": str(home / "config"), "HELM_DATA_HOME": str(home / "data")}
    done = subprocess.run(argv, input=json.dumps(values or {}), capture_output=True, text=True, env=env,
                          timeout=600)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def render(helm: Path, values: dict[str, Any] | None = None, *, namespace: str = "ktrace") -> list[dict[str, Any]]:
    done = run_helm(helm, "template", "ktrace", str(CHART), "--namespace", namespace, values=values or {})
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def the(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (doc,) = find(docs, kind)
    return doc


TLS_FILES = ("--kafka-ssl-cafile=/etc/ktrace/kafka-tls/ca.crt", "--kafka-ssl-certfile=/etc/ktrace/kafka-tls/tls.crt",
             "--kafka-ssl-keyfile=/etc/ktrace/kafka-tls/tls.key")


def recorder_params(docs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The recorder's options as ``ktrace record`` parses them (its environment's plain values
    set); the TLS files' flags, which click checks exist, are left to the caller."""
    recorder = container(the(docs, "Deployment"), "recorder")
    env = {e["name"]: e["value"] for e in recorder["env"] if "value" in e}
    return parse_record_args([a for a in recorder["args"] if a not in TLS_FILES], env, monkeypatch)


# --- the chart's files and what helm renders ----------------------------------------------------


def test_grants_are_the_recorders_catalogue() -> None:
    """grants.yaml has one row per kind the recorder knows, with its groups, its default and
    the namespace it is always read in; nothing the recorder refuses (Secrets)."""
    assert {kind: (grant["groups"], grant["default"], grant.get("namespace")) for kind, grant in GRANTS.items()} == \
        {spec.resource: ([group for group, _ in spec.candidates], spec.default, spec.fixed_namespace)
         for spec in CATALOGUE}
    assert not set(GRANTS) & REFUSED_RESOURCES


@pytest.mark.deploy
def test_the_chart_lints(helm: Path) -> None:
    for values in ({}, KAFKA_VALUES):
        done = run_helm(helm, "lint", "--strict", str(CHART), values=values)
        assert "0 chart(s) failed" in done.stdout, done.stdout


@pytest.mark.deploy
def test_default_rbac_is_the_kustomize_rbac(helm: Path) -> None:
    """One truth: the chart grants what compose/kubernetes/rbac.yaml grants, which is what the
    recorder's catalogue reads by default; get/list/watch only, no Secrets, no wildcards."""
    docs = render(helm)
    grants = rbac_grants(docs)
    assert grants == rbac_grants(manifest("rbac.yaml"))
    assert {key: scope for key, (scope, _) in grants.items()} == recorded_grants()
    assert all(verbs == READ_VERBS for _, verbs in grants.values())
    account = the(docs, "ServiceAccount")["metadata"]
    for binding in find(docs, "ClusterRoleBinding") + find(docs, "RoleBinding"):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account["name"],
                                        "namespace": account["namespace"]}]


@pytest.mark.deploy
def test_namespaces_narrow_namespaced_kinds_to_roles(helm: Path) -> None:
    docs = render(helm, {"kinds": ["pods", "events", "nodes", "leases"], "namespaces": ["shop", "pay"]})
    assert rbac_grants(find(docs, "ClusterRole")) == {("", "nodes"): (None, READ_VERBS)}
    roles = {role["metadata"]["namespace"]: rbac_grants([role]) for role in find(docs, "Role")}
    namespaced = {("", "pods"), ("", "events"), ("events.k8s.io", "events")}
    assert {ns: set(grants) for ns, grants in roles.items()} == {
        "shop": namespaced, "pay": namespaced, "kube-node-lease": {("coordination.k8s.io", "leases")}}
    assert sorted((b["metadata"]["namespace"], b["roleRef"]["name"]) for b in find(docs, "RoleBinding")) == \
        sorted((ns, "ktrace") for ns in roles)


@pytest.mark.deploy
def test_a_listed_fixed_namespace_gets_one_role_with_both_grants(helm: Path) -> None:
    docs = render(helm, {"kinds": ["pods", "leases"], "namespaces": ["shop", "kube-node-lease"]})
    roles = [(role["metadata"]["namespace"], role["metadata"]["name"]) for role in find(docs, "Role")]
    assert sorted(roles) == [("kube-node-lease", "ktrace"), ("shop", "ktrace")]
    lease_role = next(r for r in find(docs, "Role") if r["metadata"]["namespace"] == "kube-node-lease")
    assert set(rbac_grants([lease_role])) == {("", "pods"), ("coordination.k8s.io", "leases")}
    assert sorted(b["metadata"]["namespace"] for b in find(docs, "RoleBinding")) == ["kube-node-lease", "shop"]


@pytest.mark.deploy
def test_an_unknown_kind_is_one_clear_error(helm: Path) -> None:
    done = run_helm(helm, "template", "ktrace", str(CHART), values={"kinds": ["pods", "secrets"]}, check=False)
    assert done.returncode == 1
    assert 'kinds: "secrets" is not a kind ktrace records (one of: cronjobs, daemonsets,' in done.stderr


@pytest.mark.deploy
def test_local_log_recorder_runs_ktrace_record_on_its_claim(helm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = render(helm, {"cluster": "prod-eu", "kinds": ["pods", "events"], "namespaces": ["shop"],
                         "localLog": {"retentionSize": "5G", "retentionAge": "7d"}})
    params = recorder_params(docs, monkeypatch)
    assert (params["out"], params["state_dir"], params["bootstrap"]) == ("/var/lib/ktrace/log",
                                                                         "/var/lib/ktrace/state", None)
    assert (params["cluster"], params["kinds"], params["namespaces"]) == ("prod-eu", ("pods,events",), ("shop",))
    assert (params["retention_size"], params["retention_age"]) == (5 * 2**30, 7 * 86400)
    deployment = the(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    claim = the(docs, "PersistentVolumeClaim")
    assert pod["volumes"][0] == {"name": "data", "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}  # one writer of the claim at a time


@pytest.mark.deploy
def test_kafka_recorder_and_follower_read_the_same_settings(helm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = render(helm, KAFKA_VALUES)
    assert not find(docs, "PersistentVolumeClaim")
    recorder = container(the(docs, "Deployment"), "recorder")
    env = {e["name"]: e.get("value") or e["valueFrom"] for e in recorder["env"]}
    assert env["KTRACE_KAFKA_SASL_PASSWORD"] == {"secretKeyRef": {"name": "ktrace-kafka", "key": "password"}}
    assert env["KTRACE_SCHEMA_REGISTRY_PASSWORD"] == {"secretKeyRef": {"name": "ktrace-registry", "key": "password"}}
    params = recorder_params(docs, monkeypatch)
    kafka = KAFKA_VALUES["kafka"]
    assert (params["bootstrap"], params["topic_prefix"], params["kafka_security_protocol"],
            params["kafka_sasl_mechanism"], params["kafka_sasl_username"]) == (
        kafka["bootstrap"], "prod", "SASL_SSL", "SCRAM-SHA-512", "ktrace")
    assert params["schema_registry"] == kafka["schemaRegistry"]["url"]
    assert set(TLS_FILES) <= set(recorder["args"])  # the tlsSecret's mount
    assert {"name": "kafka-tls", "mountPath": "/etc/ktrace/kafka-tls", "readOnly": True} in recorder["volumeMounts"]
    assert the(docs, "Deployment")["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    follower = container(the(docs, "Deployment"), "follower")
    assert follower["command"][-1] == "ktrace" and 'exec ktrace "$@"' in follower["command"][2]
    assert follower["args"][0] == "replay"
    follows = parse_args(replay, [a for a in follower["args"][1:] if a not in TLS_FILES])
    assert (follows["bootstrap"], follows["topic_prefix"], follows["follow"], follows["db_path"]) == \
        (kafka["bootstrap"], "prod", True, "/var/lib/ktrace/db/ktrace.duckdb")
    assert (follows["metrics_port"], follows["metrics_host"]) == (9464, "0.0.0.0")  # scraped on the pod's IP
    assert follower["ports"] == [{"name": "follow-metrics", "containerPort": 9464, "protocol": "TCP"}]
    assert follower["env"] == recorder["env"]


@pytest.mark.deploy
def test_the_pod_is_restricted_probed_and_scraped(helm: Path) -> None:
    docs = render(helm, {"follower": {"enabled": True, "serve": {"enabled": True}}})
    pod = the(docs, "Deployment")["spec"]["template"]
    spec = pod["spec"]
    assert spec["securityContext"] == {"runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10001,
                                       "fsGroup": 10001, "seccompProfile": {"type": "RuntimeDefault"}}
    assert "hostNetwork" not in spec
    assert [each["name"] for each in spec["containers"]] == ["recorder", "follower", "serve"]
    for each in spec["containers"]:
        assert each["securityContext"] == {"allowPrivilegeEscalation": False, "privileged": False,
                                           "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}
        assert {"requests", "limits"} <= set(each["resources"])
    recorder = container(the(docs, "Deployment"), "recorder")
    assert (recorder["livenessProbe"]["httpGet"], recorder["readinessProbe"]["httpGet"]) == (
        {"path": "/healthz", "port": "http-metrics"}, {"path": "/readyz", "port": "http-metrics"})
    assert pod["metadata"]["annotations"] == {"prometheus.io/scrape": "true", "prometheus.io/port": "8080",
                                              "prometheus.io/path": "/metrics"}
    live = container(the(docs, "Deployment"), "serve")
    served = parse_args(serve, live["args"][1:])
    assert (served["host"], served["port"]) == ("127.0.0.1", 8321)  # the pod's loopback only
    assert {"name": "data", "mountPath": "/var/lib/ktrace", "readOnly": True} in live["volumeMounts"]
    monitor = the(render(helm, {"metrics": {"serviceMonitor": {"enabled": True}}, "follower": {"enabled": True}}),
                  "ServiceMonitor")
    service = the(docs, "Service")
    assert monitor["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == [p["name"] for p in service["spec"]["ports"]] == \
        ["http-metrics", "follow-metrics"]


# --- the control plane: server-side dry-run -------------------------------------------------------


@pytest.fixture
def restricted_namespace(k8s_cluster: Cluster) -> Iterator[str]:
    """A fresh namespace enforcing Pod Security "restricted", as docs/deploy.md tells users to make."""
    name = f"ktrace-{uuid.uuid4().hex[:8]}"
    labels = {f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "warn", "audit")}
    k8s_cluster.kubectl("apply", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}))
    yield name
    k8s_cluster.kubectl("delete", "namespace", name, "--wait=false")


@pytest.mark.deploy
@pytest.mark.k8s
@pytest.mark.parametrize("values", [{}, KAFKA_VALUES], ids=["local-log", "kafka-with-follower"])
def test_the_rendered_chart_passes_server_side_dry_run(helm: Path, k8s_cluster: Cluster, restricted_namespace: str,
                                                       values: dict[str, Any]) -> None:
    rendered = run_helm(helm, "template", "ktrace", str(CHART), "--namespace", restricted_namespace,
                        values=values).stdout
    done = subprocess.run([str(k8s_cluster.kubectl_bin), "--kubeconfig", str(k8s_cluster.kubeconfig), "apply",
                           "--dry-run=server", "-f", "-", "-o", "name"], input=rendered, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr  # e.g. a Pod Security "restricted" violation
    expected = {f"{d['kind'].lower()}.{d['apiVersion'].split('/')[0]}/{d['metadata']['name']}"
                if "/" in d["apiVersion"] else f"{d['kind'].lower()}/{d['metadata']['name']}"
                for d in yaml.safe_load_all(rendered) if d}
    assert set(done.stdout.split()) == expected


@pytest.mark.k8s
def test_grants_say_which_kinds_are_namespaced_as_the_api_server_does(k8s_cluster: Cluster) -> None:
    def served(group: str) -> dict[str, bool]:
        path = f"/apis/{group}/v1" if group else "/api/v1"
        return {r["name"]: r["namespaced"] for r in json.loads(k8s_cluster.kubectl("get", "--raw", path))["resources"]}

    for kind, grant in GRANTS.items():
        assert {served(group)[kind] for group in grant["groups"]} == {grant["namespaced"]}, kind


# --- the real node: install, record, upgrade, uninstall --------------------------------------------

RELEASE = "ktrace"


@pytest.fixture
def node_volume(node_cluster: tuple[LocalControlPlane, RealNode], tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A PersistentVolume on the real node backed by a host directory (the test cluster has no
    storage provisioner), of a storage class name of its own that the chart's claim asks for.
    Retain: what the recorder wrote stays there after `helm uninstall` deletes the claim."""
    plane, _ = node_cluster
    directory = tmp_path / "volume"
    directory.mkdir()
    directory.chmod(0o777)  # a hostPath volume ignores fsGroup: uid 10001 must write here
    name = f"ktrace-test-{uuid.uuid4().hex[:8]}"
    on_the_node = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE_NAME]}]}]}
    plane.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
        "spec": {"storageClassName": name, "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": str(directory), "type": "Directory"},
                 "nodeAffinity": {"required": on_the_node}}}))
    yield name, directory
    plane.kubectl("delete", "pv", name, "--wait=false")


def node_values(plane: LocalControlPlane, storage_class: str, watched: str) -> dict[str, Any]:
    """The values for the test cluster (docs/deploy.md): the image imported into the node, the
    pod on the tainted real node and its network (no kube-proxy: the API server's Service
    cannot be reached, its address is given), the claim bound to the node's volume."""
    metrics_port, follower_port, serve_port = free_ports(3)  # the host's network: ports free on this machine
    return {**on_the_node(plane, watched), "metrics": {"port": metrics_port},
            "persistence": {"storageClass": storage_class, "size": "1Gi"},
            "follower": {"enabled": True, "metrics": {"port": follower_port},
                         "serve": {"enabled": True, "port": serve_port}}}


def on_the_node(plane: LocalControlPlane, watched: str) -> dict[str, Any]:
    """What every release on the test node needs: the imported image, the node, the API server."""
    repository, tag = IMAGE.rsplit(":", 1)
    return {"image": {"repository": repository, "tag": tag, "pullPolicy": "Never"},
            "cluster": "helm-test", "namespaces": [watched],
            "hostNetwork": True, "apiServer": {"host": "127.0.0.1", "port": str(plane.api_port)},
            **pod_placement()}


def recorder_pods(plane: LocalControlPlane, namespace: str) -> list[dict[str, Any]]:
    return json.loads(plane.kubectl("get", "pods", "-n", namespace, "-l", f"app.kubernetes.io/instance={RELEASE}",
                                    "-o", "json"))["items"]


def release_objects(plane: LocalControlPlane) -> set[str]:
    """Every object of any listable kind, namespaced or cluster-scoped, labelled as the release's."""
    kinds = plane.kubectl("api-resources", "--verbs=list", "-o", "name").split()
    return set(plane.kubectl("get", ",".join(kinds), "-A", "-l", f"app.kubernetes.io/instance={RELEASE}",
                             "-o", "name", "--ignore-not-found").split())


def page_text(url: str) -> str:
    """The page's HTML, or "" while nothing answers or it has nothing to draw yet (503)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.read().decode()
    except (urllib.error.URLError, ConnectionError):
        return ""


def stuck_findings(con: Any) -> list[dict[str, Any]]:
    judged = stuck(con)
    return [dict(zip(judged.rows[0], row)) for row in judged.rows[1]]


def container_state(plane: LocalControlPlane, namespace: str, pod: str) -> dict[str, Any]:
    status = json.loads(plane.kubectl("get", "pod", pod, "-n", namespace, "-o", "json"))["status"]
    return status.get("containerStatuses", [{}])[0]


@pytest.mark.deploy
@pytest.mark.node
def test_installed_on_the_real_node_it_records_rolls_and_leaves_nothing(
        helm: Path, image_archive: Path, node_cluster: tuple[LocalControlPlane, RealNode], node_namespace: str,
        node_volume: tuple[str, Path], tmp_path: Path) -> None:
    plane, node = node_cluster
    node.import_archive(image_archive)
    storage_class, volume = node_volume
    namespace = f"ktrace-{uuid.uuid4().hex[:8]}"
    values = node_values(plane, storage_class, node_namespace)
    helm_on = {"kubeconfig": plane.kubeconfig}
    try:
        run_helm(helm, "install", RELEASE, str(CHART), "-n", namespace, "--create-namespace", "--wait",
                 "--timeout=180s", values=values, **helm_on)
        made = {f"{d['kind']}/{d['metadata'].get('namespace', '')}/{d['metadata']['name']}"
                for d in yaml.safe_load_all(run_helm(helm, "get", "manifest", RELEASE, "-n", namespace,
                                                     **helm_on).stdout) if d}
        (first,) = recorder_pods(plane, namespace)
        assert (first["spec"]["nodeName"], first["status"]["phase"]) == (NODE_NAME, "Running")

        apply(plane, crash_loop(node_namespace))
        eventually(lambda: container_state(plane, node_namespace, "crasher").get("restartCount", 0) >= 2,
                   "the crasher restarted twice", timeout=120)
        # The follower keeps its database current and serve draws it: on the host's network
        # here, its loopback is the machine's.
        live_page = f"http://127.0.0.1:{values['follower']['serve']['port']}/"
        eventually(lambda: "crasher" in page_text(live_page), "the live page showing the crasher", timeout=120)
        scraped = f"http://127.0.0.1:{values['follower']['metrics']['port']}/metrics"
        labels = {"cluster": '"helm-test"', "namespace": f'"{node_namespace}"', "kind": '"Pod"',
                  "cause": '"crash_loop"'}
        eventually(lambda: [line for line in page_text(scraped).splitlines()
                            if line.startswith("ktrace_stuck_objects{") and line.endswith(" 1.0")
                            and all(f"{k}={v}" in line for k, v in labels.items())],
                   "the follower's metrics: the crasher stuck in a crash loop", timeout=60)
        run_helm(helm, "upgrade", RELEASE, str(CHART), "-n", namespace, "--wait", "--timeout=180s",
                 values={**values, "logLevel": "DEBUG"}, **helm_on)
        (second,) = eventually(lambda: [p for p in recorder_pods(plane, namespace)
                                        if p["metadata"]["uid"] != first["metadata"]["uid"]] or None,
                               "the upgraded recorder pod")
        assert second["spec"]["containers"][0]["env"][0] == {"name": "KTRACE_LOG_LEVEL", "value": "DEBUG"}
        apply(plane, image_never_pulled(node_namespace))
        eventually(lambda: container_state(plane, node_namespace, "neverpull").get("state", {})
                   .get("waiting", {}).get("reason") == "ErrImageNeverPull", "neverpull's ErrImageNeverPull")
        time.sleep(3)  # the kubelet's Events about it reach the recorder
        # Out through the API server and the kubelet, as on any cluster (docs/deploy.md):
        # its logs, and the recording copied from the running pod.
        pod = f"pod/{second['metadata']['name']}"
        logged = plane.kubectl("logs", "-n", namespace, pod, "-c", "recorder")
        assert any(json.loads(line).get("level") == "DEBUG" for line in logged.splitlines()), logged[-2000:]
        copied = tmp_path / "copied-log"
        plane.kubectl("cp", "-n", namespace, "-c", "recorder", f"{second['metadata']['name']}:/var/lib/ktrace/log",
                      str(copied))
        (local_port,) = free_ports(1)
        forward = subprocess.Popen([str(plane.kubectl_bin), "--kubeconfig", str(plane.kubeconfig), "port-forward",
                                    "-n", namespace, pod, f"{local_port}:{values['follower']['serve']['port']}"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            eventually(lambda: "neverpull" in page_text(f"http://127.0.0.1:{local_port}/"),
                       "the live page through kubectl port-forward, showing neverpull", timeout=60)
        finally:
            forward.terminate()
            forward.wait(timeout=10)

        run_helm(helm, "uninstall", RELEASE, "-n", namespace, "--wait", "--cascade=foreground", "--timeout=120s",
                 **helm_on)
        assert eventually(lambda: not release_objects(plane) and not recorder_pods(plane, namespace),
                          "every object of the release gone", timeout=90)
        for made_object in made:
            kind, ns, name = made_object.split("/")
            gone = plane.kubectl("get", kind, name, *(["-n", ns] if ns else []), "--ignore-not-found", "-o", "name")
            assert gone == "", made_object
    finally:
        run_helm(helm, "uninstall", RELEASE, "-n", namespace, "--ignore-not-found", check=False, **helm_on)
        plane.kubectl("delete", "namespace", namespace, "--wait=false", "--ignore-not-found")
    assert sorted(m.split("/")[0] for m in made) == [
        "ClusterRole", "ClusterRoleBinding", "Deployment", "PersistentVolumeClaim", "Role", "Role",
        "RoleBinding", "RoleBinding", "Service", "ServiceAccount"]

    # The copy taken with kubectl cp while the recorder ran, replayed on "the laptop".
    con = load_recording(str(tmp_path / "copied.duckdb"), str(copied))
    assert rows(con, "SELECT count(*) FROM load_problems") == [(0,)]
    assert rows(con, "SELECT DISTINCT cluster FROM raw_events") == [("helm-test",)]
    found = {(f["namespace"], f["name"]): f["causes"][0] for f in stuck_findings(con)}
    assert found[node_namespace, "crasher"]["cause"] == "crash_loop"
    assert DB_TIMEOUT in found[node_namespace, "crasher"]["detail"]
    assert found[node_namespace, "neverpull"]["cause"] == "image_pull"
    assert found[node_namespace, "neverpull"]["detail"].startswith("never_pull")

    # The whole recording, read from the volume after uninstall (the second session ended too).
    con = load_recording(str(tmp_path / "r.duckdb"), str(volume / "log"))
    assert rows(con, "SELECT count(*) FROM load_problems") == [(0,)]
    # Two sessions, each ended cleanly; the seconds of the Recreate between them are the one
    # unseen stretch, a session_gap of the whole recording.
    assert rows(con, "SELECT count(DISTINCT session) FROM raw_events") == [(2,)]
    assert rows(con, "SELECT type, topic, namespace, start_at < end_at FROM gaps WHERE category = 'unseen'") == [
        ("session_gap", None, None, True)]


@pytest.mark.deploy
@pytest.mark.node
@pytest.mark.kafka
def test_with_kafka_an_upgrade_rolls_the_recorder_without_an_unseen_stretch(
        helm: Path, image_archive: Path, node_cluster: tuple[LocalControlPlane, RealNode], node_namespace: str,
        kafka_bootstrap: str, unique_topic_prefix: str, tmp_path: Path) -> None:
    plane, node = node_cluster
    node.import_archive(image_archive)
    namespace = f"ktrace-{uuid.uuid4().hex[:8]}"
    first_port, second_port = free_ports(2)
    values = {**on_the_node(plane, node_namespace), "sink": "kafka", "persistence": {"enabled": False},
              "kafka": {"bootstrap": kafka_bootstrap, "topicPrefix": unique_topic_prefix},
              "metrics": {"port": first_port}}
    helm_on = {"kubeconfig": plane.kubeconfig}
    try:
        run_helm(helm, "install", RELEASE, str(CHART), "-n", namespace, "--create-namespace", "--wait",
                 "--timeout=180s", values=values, **helm_on)
        (first,) = recorder_pods(plane, namespace)
        apply(plane, crash_loop(node_namespace))
        eventually(lambda: container_state(plane, node_namespace, "crasher").get("restartCount", 0) >= 1,
                   "the crasher restarted", timeout=120)
        # The new pod runs beside the old one until it is ready (maxSurge 1, maxUnavailable 0):
        # on one host network the two cannot hold one port, so the upgrade moves it. Off the
        # host's network (any real cluster) nothing needs to change.
        run_helm(helm, "upgrade", RELEASE, str(CHART), "-n", namespace, "--wait", "--timeout=180s",
                 values={**values, "metrics": {"port": second_port}}, **helm_on)
        old_uid = first["metadata"]["uid"]
        eventually(lambda: old_uid not in {p["metadata"]["uid"] for p in recorder_pods(plane, namespace)},
                   "the old recorder pod gone", timeout=120)
        apply(plane, image_never_pulled(node_namespace))
        eventually(lambda: container_state(plane, node_namespace, "neverpull").get("state", {})
                   .get("waiting", {}).get("reason") == "ErrImageNeverPull", "neverpull's ErrImageNeverPull")
        time.sleep(3)  # the kubelet's Events about it reach the recorder
        run_helm(helm, "uninstall", RELEASE, "-n", namespace, "--wait", "--timeout=120s", **helm_on)
    finally:
        run_helm(helm, "uninstall", RELEASE, "-n", namespace, "--ignore-not-found", check=False, **helm_on)
        plane.kubectl("delete", "namespace", namespace, "--wait=false", "--ignore-not-found")

    con = db.open_db(str(tmp_path / "k.duckdb"))
    source = KafkaSource(KafkaSettings(bootstrap=kafka_bootstrap))
    try:
        replay_into(source, con, source_name=kafka_bootstrap, prefix=unique_topic_prefix)
    finally:
        source.close()
    # Two sessions that overlapped: the new one listed and turned ready before the old one
    # ended — what both saw is loaded once, the rest reported as duplicates (docs/scale-out.md)
    # — so nothing went unseen between them. The crasher was recorded by the first pod, the
    # pod made after the old one was gone by the second only.
    first_session, second_session = [s for (s,) in rows(
        con, "SELECT session FROM raw_events GROUP BY session ORDER BY min(received_at)")]

    def sessions_of(pod: str) -> set[str]:
        return {s for (s,) in rows(con, "SELECT DISTINCT session FROM raw_events WHERE kind = 'Pod' "
                                        "AND namespace = ? AND name = ?", node_namespace, pod)}

    assert first_session in sessions_of("crasher")
    assert sessions_of("neverpull") == {second_session}
    found = {(f["namespace"], f["name"]): f["causes"][0]["cause"] for f in stuck_findings(con)}
    assert found[node_namespace, "neverpull"] == "image_pull"
    assert rows(con, "SELECT DISTINCT problem FROM load_problems") == [("duplicate",)]
    assert rows(con, "SELECT type, topic, namespace FROM gaps WHERE category = 'unseen'") == []
