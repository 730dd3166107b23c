"""The deployment files under compose/: the Kubernetes manifests pass the real API server's
checks, the RBAC grants exactly what the recorder reads (never Secrets), and the recorder
run with nothing but a token of that ServiceAccount records every default kind.

The unit tests read the files and the recorder's own catalogue and CLI, so manifests,
Dockerfile and compose file cannot drift from the code; the ``k8s`` ones use the real
control plane (tests/infra/k8s.py).
"""

from __future__ import annotations

import base64
import json
import re
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from recorder.kube.catalogue import CATALOGUE, DEFAULT_KINDS
from schemas.redaction import REFUSED_RESOURCES
from recorder.metrics import HealthServer, Metrics
from transports.locallog.source import LocalLogSource
from tests.infra.k8s import Cluster, LocalControlPlane
from tests.infra.polling import eventually
from tests.deploy_files import (COMPOSE, MANIFEST_FILES, MANIFESTS, NAMESPACE, READ_VERBS, SA_USER,
                                SERVICE_ACCOUNT, WRITE_VERBS, compose_defaults, container, expand,
                                find, kubectl, manifest, parse_record_args, rbac_grants,
                                recorded_grants, recorder_deployments)


DEPLOYMENTS = recorder_deployments()
DEPLOYMENT_IDS = [d["metadata"]["name"] for d, _ in DEPLOYMENTS]


# --- unit: the files agree with the code -----------------------------------------------------


def test_rbac_grants_read_access_to_exactly_the_recorded_kinds() -> None:
    grants = rbac_grants(manifest("rbac.yaml"))
    assert {key: scope for key, (scope, _) in grants.items()} == recorded_grants()
    assert all(verbs == READ_VERBS for _, verbs in grants.values())
    assert not {resource for _, resource in grants} & REFUSED_RESOURCES
    assert "*" not in {part for key in grants for part in key}


def test_rbac_binds_the_service_account_the_deployments_run_as() -> None:
    docs = manifest("rbac.yaml")
    (account,) = find(docs, "ServiceAccount")
    assert (account["metadata"]["name"], account["metadata"]["namespace"]) == (SERVICE_ACCOUNT, NAMESPACE)
    roles = {(r["kind"], r["metadata"]["name"]) for r in find(docs, "ClusterRole") + find(docs, "Role")}
    for binding in find(docs, "ClusterRoleBinding") + find(docs, "RoleBinding"):
        assert (binding["roleRef"]["kind"], binding["roleRef"]["name"]) in roles
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}]
    assert {(b["roleRef"]["kind"], b["roleRef"]["name"])
            for b in find(docs, "ClusterRoleBinding") + find(docs, "RoleBinding")} == roles
    for deployment, _ in DEPLOYMENTS:
        assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == SERVICE_ACCOUNT


@pytest.mark.parametrize(("deployment", "env"), DEPLOYMENTS, ids=DEPLOYMENT_IDS)
def test_deployment_settings_are_options_ktrace_record_accepts(
        deployment: dict[str, Any], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = container(deployment, "recorder")
    params = parse_record_args(expand(recorder["args"], env), env, monkeypatch)
    assert params["bootstrap"] == env["KTRACE_KAFKA"]  # the ConfigMap's names are ktrace's
    assert params["topic_prefix"] == env["KTRACE_TOPIC_PREFIX"]
    assert params["cluster"] == env["KTRACE_CLUSTER"]
    mounts = {m["name"]: m["mountPath"] for m in recorder["volumeMounts"]}
    assert params["state_dir"] == mounts["state"]
    ports = {p["name"]: p["containerPort"] for p in recorder["ports"]}
    assert params["metrics_port"] == ports["http-metrics"]
    assert params["log_format"] == "json"


@pytest.mark.parametrize(("deployment", "env"), DEPLOYMENTS, ids=DEPLOYMENT_IDS)
def test_deployment_is_hardened(deployment: dict[str, Any], env: dict[str, str]) -> None:
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 1 and deployment["spec"]["strategy"]["type"] == "Recreate"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["terminationGracePeriodSeconds"] >= 45  # <= 5 s to stop watches + 15 s flush, with room
    for each in pod["containers"] + pod.get("initContainers", []):
        context = each["securityContext"]
        assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False
        assert context["capabilities"] == {"drop": ["ALL"]}
        assert {"requests", "limits"} <= set(each["resources"])
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes["state"]


@pytest.mark.parametrize(("deployment", "env"), DEPLOYMENTS, ids=DEPLOYMENT_IDS)
def test_probes_ask_the_recorders_health_endpoints(deployment: dict[str, Any], env: dict[str, str]) -> None:
    recorder = container(deployment, "recorder")
    probes = {kind: recorder[kind]["httpGet"] for kind in ("livenessProbe", "readinessProbe")}
    assert {p["port"] for p in probes.values()} == {"http-metrics"}
    assert (probes["livenessProbe"]["path"], probes["readinessProbe"]["path"]) == ("/healthz", "/readyz")
    server = HealthServer(Metrics(), port=0, host="127.0.0.1", alive=lambda: True, ready=lambda: False).start()
    try:
        statuses = {path: http_status(f"http://127.0.0.1:{server.port}{path}")
                    for path in ("/healthz", "/readyz", "/metrics")}
    finally:
        server.stop()
    assert statuses == {"/healthz": 200, "/readyz": 503, "/metrics": 200}


def test_compose_recorder_runs_ktrace_record_against_the_kafka_service(monkeypatch: pytest.MonkeyPatch) -> None:
    services = yaml.safe_load((COMPOSE / "docker-compose.yml").read_text())["services"]
    assert "kafka" in services
    service = services["recorder"]
    assert service["build"] == {"context": "..", "dockerfile": "compose/Dockerfile"}
    assert service["depends_on"]["kafka"]["condition"] == "service_healthy"
    env = {k: compose_defaults([v])[0] for k, v in service["environment"].items()}
    params = parse_record_args(compose_defaults(service["command"]), env, monkeypatch)
    assert params["bootstrap"] == "localhost:9092" and service["network_mode"] == "host"
    registry_port = services["registry"]["ports"][0].split(":")[0]  # the host side, as the recorder's
    assert params["schema_registry"] == f"http://localhost:{registry_port}/apis/ccompat/v7"
    mounts = {m.split(":")[1]: m.split(":")[0] for m in compose_defaults(service["volumes"])}
    assert params["kubeconfig"] in mounts and mounts[params["state_dir"]] == "ktrace-state"


def test_dockerfile_runs_ktrace_record_as_a_non_root_user(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (COMPOSE / "Dockerfile").read_text().splitlines()

    def last(instruction: str) -> str:
        return [line for line in lines if line.startswith(instruction + " ")][-1].split(" ", 1)[1]

    assert last("ARG") == "PYTHON_IMAGE=python:3.12-slim" and last("FROM") == "${PYTHON_IMAGE}"
    assert json.loads(last("ENTRYPOINT")) == ["ktrace", "record"]
    assert last("USER").split(":")[0] != "0" and last("USER").split(":")[0].isdigit()
    params = parse_record_args(json.loads(last("CMD")), {}, monkeypatch)
    assert (params["state_dir"], params["metrics_port"]) == (last("WORKDIR"), int(last("EXPOSE")))


# --- helpers for the control plane -------------------------------------------------------------


def http_status(url: str, token: str | None = None, context: ssl.SSLContext | None = None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), context=context, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def apply(cluster: Cluster, *names: str) -> None:
    for name in names:
        cluster.kubectl("apply", "-f", str(MANIFESTS / name))


def token_kubeconfig(cluster: Cluster, path: Path) -> tuple[Path, str]:
    """A kubeconfig holding only a TokenRequest token of the recorder's ServiceAccount."""
    token = cluster.token_for(SERVICE_ACCOUNT, NAMESPACE)
    admin = json.loads(cluster.kubectl("config", "view", "--minify", "--raw", "--flatten", "-o", "json"))
    server = admin["clusters"][0]["cluster"]
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "recorder",
        "clusters": [{"name": "c", "cluster": {k: server[k] for k in ("server", "certificate-authority-data")}}],
        "users": [{"name": "recorder", "user": {"token": token}}],
        "contexts": [{"name": "recorder", "context": {"cluster": "c", "user": "recorder"}}],
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path, token


def remove_deployment_objects(cluster: Cluster) -> None:
    for name in ("sidecar.yaml", "recorder.yaml", "rbac.yaml"):
        cluster.kubectl("delete", "-f", str(MANIFESTS / name), "--ignore-not-found", "--wait=false")
    cluster.kubectl("delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=false")


@pytest.fixture(scope="module")
def installed_rbac(k8s_cluster: Cluster) -> Iterator[Cluster]:
    """The namespace and RBAC manifests applied for real; removed after the module (so with
    KTRACE_TEST_KUBECONFIG, use a throwaway cluster, not one running ktrace)."""
    apply(k8s_cluster, "namespace.yaml", "rbac.yaml")
    try:
        yield k8s_cluster
    finally:
        remove_deployment_objects(k8s_cluster)


@pytest.fixture(scope="module")
def recorder_token(installed_rbac: Cluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return token_kubeconfig(installed_rbac, tmp_path_factory.mktemp("token") / "kubeconfig")


# --- k8s: the API server's verdict -----------------------------------------------------------------


@pytest.mark.k8s
@pytest.mark.parametrize("target", [*MANIFEST_FILES, "kustomization"])
def test_manifest_passes_server_side_dry_run(installed_rbac: Cluster, target: str) -> None:
    source = ["-k", str(MANIFESTS)] if target == "kustomization" else ["-f", str(MANIFESTS / target)]
    done = kubectl(installed_rbac, installed_rbac.kubeconfig, "apply", "--dry-run=server", *source, "-o", "json")
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr  # e.g. PodSecurity "restricted" violations
    applied = json.loads(done.stdout)
    applied = applied["items"] if applied["kind"] == "List" else [applied]
    docs = [d for name in (MANIFEST_FILES[:3] if target == "kustomization" else [target]) for d in manifest(name)]
    assert sorted((o["kind"], o["metadata"]["name"]) for o in applied) == \
        sorted((d["kind"], d["metadata"]["name"]) for d in docs)


@pytest.mark.k8s
def test_recorder_pod_is_admitted_under_restricted_pod_security(installed_rbac: Cluster) -> None:
    apply(installed_rbac, "recorder.yaml")
    try:
        def pods() -> list[dict[str, Any]] | None:
            found = json.loads(installed_rbac.kubectl(
                "get", "pods", "-n", NAMESPACE, "-l", "app.kubernetes.io/component=recorder", "-o", "json"))
            return found["items"] or None

        (pod,) = eventually(pods, "the recorder Deployment's pod")
        assert pod["spec"]["serviceAccountName"] == SERVICE_ACCOUNT
    finally:
        installed_rbac.kubectl("delete", "-f", str(MANIFESTS / "recorder.yaml"), "--wait=false")


def can_i(cluster: Cluster, kubeconfig: Path, verb: str, resource: str, scope: str | None,
          subresource: str = "") -> bool:
    where = ["-n", scope] if scope else ["-A"]
    done = kubectl(cluster, kubeconfig, "auth", "can-i", verb, resource, *where, f"--subresource={subresource}")
    assert done.stdout.strip() in ("yes", "no"), done.stderr
    return done.stdout.strip() == "yes"


def allowed(cluster: Cluster, kubeconfig: Path, checks: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The checks `kubectl auth can-i` answers yes to (asked in parallel: ~70 kubectl runs)."""
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda check: can_i(cluster, kubeconfig, *check), checks))
    return [check for check, yes in zip(checks, answers) if yes]


@pytest.mark.k8s
def test_service_account_may_read_the_recorded_kinds(installed_rbac: Cluster,
                                                     recorder_token: tuple[Path, str]) -> None:
    kubeconfig, _ = recorder_token
    checks = [(verb, f"{resource}.{group}".rstrip("."), scope)
              for (group, resource), scope in recorded_grants().items() for verb in sorted(READ_VERBS)]
    assert allowed(installed_rbac, kubeconfig, checks) == checks
    # Leases only where nodes renew them: kube-system's leader-election Leases stay hidden.
    assert not can_i(installed_rbac, kubeconfig, "list", "leases.coordination.k8s.io", "kube-system")


@pytest.mark.k8s
def test_service_account_may_not_read_secrets_or_write(installed_rbac: Cluster,
                                                       recorder_token: tuple[Path, str]) -> None:
    kubeconfig, _ = recorder_token
    checks = [(verb, "secrets", scope) for verb in sorted(READ_VERBS) for scope in (None, NAMESPACE, "kube-system")]
    checks += [(verb, f"{resource}.{group}".rstrip("."), scope)
               for (group, resource), scope in recorded_grants().items() for verb in WRITE_VERBS]
    checks += [("get", "pods", None, "log"), ("create", "pods", None, "exec"), ("create", "pods", None, "eviction"),
               ("create", "serviceaccounts", NAMESPACE, "token"), ("list", "configmaps", None)]
    assert allowed(installed_rbac, kubeconfig, checks) == []


@pytest.mark.k8s
def test_raw_get_of_secrets_with_the_token_is_forbidden(installed_rbac: Cluster,
                                                        recorder_token: tuple[Path, str]) -> None:
    kubeconfig, token = recorder_token
    server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]
    context = ssl.create_default_context(cadata=base64.b64decode(server["certificate-authority-data"]).decode())
    status = {path: http_status(server["server"] + path, token, context)
              for path in ("/api/v1/secrets", "/api/v1/namespaces/kube-system/secrets",
                           f"/api/v1/namespaces/{NAMESPACE}/secrets", "/api/v1/pods?limit=1")}
    assert status == {"/api/v1/secrets": 403, "/api/v1/namespaces/kube-system/secrets": 403,
                      f"/api/v1/namespaces/{NAMESPACE}/secrets": 403, "/api/v1/pods?limit=1": 200}


# --- k8s: the recorder with nothing but that ServiceAccount -------------------------------------------

# Audit what the recorder's ServiceAccount asks the API server; nothing else.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
    "rules": [{"level": "Metadata", "users": [SA_USER]}, {"level": "None"}],
}

# One object of every default kind, so each one's first list has something to record.
WORKLOAD = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: probe}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: probe}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: probe}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: busybox}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: probe}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: once, image: busybox}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: probe}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: probe}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: manual}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: probe-pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  hostPath: {path: /tmp/probe-pv}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: probe-claim, namespace: probe}
spec:
  storageClassName: manual
  volumeName: probe-pv
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: probe-attachment}
spec:
  attacher: probe.example.com
  nodeName: kwok-node-0
  source: {persistentVolumeName: probe-pv}
"""


@pytest.fixture(scope="module")
def audited_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalControlPlane]:
    """A control plane of its own whose API server writes an audit log of the recorder's
    requests: the only first-hand record of what it asked for. Namespace, RBAC and one
    object of every recorded kind are in place."""
    work = tmp_path_factory.mktemp("k8s-audited")
    policy = work / "audit-policy.yaml"
    policy.write_text(yaml.safe_dump(AUDIT_POLICY))
    plane = LocalControlPlane(work_dir=work, nodes=1, apiserver_flags=[
        f"--audit-policy-file={policy}", f"--audit-log-path={audit_log(work)}"])
    plane.start()
    try:
        apply(plane, "namespace.yaml", "rbac.yaml")
        plane.kubectl("create", "namespace", "probe")
        plane.kubectl("wait", "--for=create", "serviceaccount/default", "-n", "probe", "--timeout=60s")
        plane.kubectl("apply", "-f", "-", input=WORKLOAD)
        eventually(lambda: workload_running(plane), "pods, an EndpointSlice and Events in namespace probe")
        yield plane
    finally:
        plane.stop()


def workload_running(plane: LocalControlPlane) -> bool:
    def count(*args: str) -> int:
        return len(json.loads(plane.kubectl("get", *args, "-n", "probe", "-o", "json"))["items"])

    return count("pods") >= 4 and count("endpointslices") >= 1 and count("events") >= 1


def audit_log(work_dir: Path) -> Path:
    return work_dir / "logs" / "audit.log"


def audit_entries(plane: LocalControlPlane) -> list[dict[str, Any]]:
    entries = [json.loads(line) for line in audit_log(plane.work_dir).read_text().splitlines() if line]
    return [e for e in entries if e["user"]["username"] == SA_USER]


def record_types(out: Path) -> Counter[tuple[str, str]]:
    """(resource, record type) → count, as the replayer reads the local log back."""
    source = LocalLogSource(str(out))
    counts: Counter[tuple[str, str]] = Counter()
    for delivery in source.read(source.topics("ktrace")):
        assert delivery.record is not None, delivery.error
        counts[delivery.record["resource"], delivery.record["type"]] += 1
    return counts


@pytest.mark.k8s
def test_recorder_with_only_its_rbac_records_every_kind_and_never_asks_for_secrets(
        audited_plane: LocalControlPlane, tmp_path: Path) -> None:
    kubeconfig, _ = token_kubeconfig(audited_plane, tmp_path / "kubeconfig")
    out = tmp_path / "log"
    argv = [sys.executable, "-c", "from ktrace.cli import main; main()", "--log-level", "info",
            "record", "--kubeconfig", str(kubeconfig), "--out", str(out), "--duration", "6"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    # a status 403 stands alone; a random session id or a count may hold the digits 403
    assert not re.search(r"\b403\b", output) and "forbidden" not in output.lower(), output

    counts = record_types(out)
    missing = [(kind, step) for kind in DEFAULT_KINDS for step in ("LISTED", "SYNCED") if not counts[kind, step]]
    assert missing == []

    entries = audit_entries(audited_plane)
    asked = {(e.get("objectRef", {}).get("apiGroup", ""), e.get("objectRef", {}).get("resource"), e["verb"])
             for e in entries}
    assert [e["requestURI"] for e in entries if "secrets" in e["requestURI"]] == []
    assert {verb for *_, verb in asked} <= READ_VERBS
    assert [e["requestURI"] for e in entries if e.get("responseStatus", {}).get("code") == 403] == []
    # Every default kind was listed and watched through its preferred group (Events:
    # events.k8s.io, which this server serves).
    preferred = {(spec.candidates[0][0], spec.resource) for spec in CATALOGUE if spec.default}
    assert {(g, r) for g, r, verb in asked if verb == "list"} >= preferred
    assert {(g, r) for g, r, verb in asked if verb == "watch"} >= preferred
