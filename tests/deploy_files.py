"""The deployment files under compose/ as the deploy tests read them (manifests, RBAC grants,
the recorder's container settings parsed by the real ``ktrace record``), and kubectl with any
kubeconfig: shared by the single and the sharded recorder's tests."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from ktrace.cli import cli
from ktrace.commands.record import record
from recorder.kube.catalogue import CATALOGUE
from tests.infra.k8s import Cluster

REPO = Path(__file__).resolve().parents[1]
COMPOSE = REPO / "compose"
MANIFESTS = COMPOSE / "kubernetes"
MANIFEST_FILES = ("namespace.yaml", "rbac.yaml", "recorder.yaml", "sidecar.yaml")
NAMESPACE = "ktrace"
SERVICE_ACCOUNT = "ktrace-recorder"
SA_USER = f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"
READ_VERBS = {"get", "list", "watch"}
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


# --- reading the files -------------------------------------------------------------------


def manifest(name: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((MANIFESTS / name).read_text()) if doc]


def find(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [doc for doc in docs if doc["kind"] == kind]


def recorded_grants() -> dict[tuple[str, str], str | None]:
    """(apiGroup, resource) → the namespace it is recorded in (None: cluster-wide), for
    every group the recorder may read a default kind from (Events: two)."""
    return {(group, spec.resource): spec.fixed_namespace
            for spec in CATALOGUE if spec.default for group, _ in spec.candidates}


def rbac_grants(docs: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[str | None, set[str]]]:
    """(apiGroup, resource) → (scope, verbs) as the ClusterRoles and Roles grant them."""
    grants: dict[tuple[str, str], tuple[str | None, set[str]]] = {}
    for role in find(docs, "ClusterRole") + find(docs, "Role"):
        scope = role["metadata"].get("namespace")
        for rule in role["rules"]:
            assert set(rule) == {"apiGroups", "resources", "verbs"}, f"unexpected rule keys {rule}"
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    assert (group, resource) not in grants, f"{group}/{resource} granted twice"
                    grants[group, resource] = (scope, set(rule["verbs"]))
    return grants


def expand(args: list[str], env: dict[str, str]) -> list[str]:
    """Kubernetes' $(VAR) expansion of container args."""
    return [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], arg) for arg in args]


def compose_defaults(args: list[str]) -> list[str]:
    """Compose's ${VAR:-default} interpolation with nothing set."""
    return [re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", arg) for arg in args]


def parse_args(command: click.Command, args: list[str]) -> dict[str, Any]:
    """The options a ktrace command would run with, parsed by the real command with the
    ktrace group's context settings (without them click keeps the command's help option as
    a bare --help for the rest of the session, and docs/cli.md's check then fails)."""
    with command.make_context(command.name, list(args), **cli.context_settings) as ctx:
        return dict(ctx.params)


def parse_record_args(args: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The options ``ktrace record`` would run with: the real command parses them."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return parse_args(record, args)


def container(deployment: dict[str, Any], name: str) -> dict[str, Any]:
    spec = deployment["spec"]["template"]["spec"]
    return next(c for c in spec["containers"] + spec.get("initContainers", []) if c["name"] == name)


def recorder_deployments() -> list[tuple[dict[str, Any], dict[str, str]]]:
    """Each recorder Deployment with the ConfigMap environment of its recorder container."""
    found = []
    for name in ("recorder.yaml", "sidecar.yaml"):
        docs = manifest(name)
        maps = {m["metadata"]["name"]: m["data"] for m in find(docs, "ConfigMap")}
        for deployment in find(docs, "Deployment"):
            sources = container(deployment, "recorder").get("envFrom", [])
            env = {k: v for s in sources for k, v in maps[s["configMapRef"]["name"]].items()}
            found.append((deployment, env))
    return found


def kubectl(cluster: Cluster, kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """kubectl with any kubeconfig; the caller judges the exit status."""
    argv = [str(cluster.kubectl_bin), "--kubeconfig", str(kubeconfig), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)
