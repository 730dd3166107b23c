"""The sharded recorder manifests (compose/kubernetes/sharded/, docs/scale-out.md): the shards
split the default kinds between them, each shard's ServiceAccount may read exactly its kinds,
each Deployment is the single recorder's with only what a shard changes, and the API server
accepts them (marker k8s)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from recorder.kube.catalogue import BY_RESOURCE, DEFAULT_KINDS, parse_kinds
from schemas.redaction import REFUSED_RESOURCES
from tests.infra.k8s import Cluster
from tests.deploy_files import (MANIFESTS, NAMESPACE, READ_VERBS, container, expand, find, kubectl,
                                manifest, parse_record_args, rbac_grants, recorded_grants)

SHARDED = MANIFESTS / "sharded"


def sharded(name: str) -> list[dict[str, Any]]:
    return manifest(f"sharded/{name}")


def shard_deployments() -> list[tuple[dict[str, Any], dict[str, str]]]:
    docs = sharded("recorder.yaml")
    (configmap,) = find(docs, "ConfigMap")
    return [(d, configmap["data"]) for d in find(docs, "Deployment")]


SHARDS = shard_deployments()
SHARD_IDS = [d["metadata"]["name"] for d, _ in SHARDS]


def kinds_of(deployment: dict[str, Any], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    params = parse_record_args(expand(container(deployment, "recorder")["args"], env), env, monkeypatch)
    return parse_kinds(params["kinds"])


def grants_of(account: str) -> dict[tuple[str, str], str | None]:
    """(apiGroup, resource) → scope the roles bound to ``account`` grant (read verbs only)."""
    docs = sharded("rbac.yaml")
    bound = {b["roleRef"]["name"] for b in find(docs, "ClusterRoleBinding") + find(docs, "RoleBinding")
             if b["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]}
    roles = [r for r in find(docs, "ClusterRole") + find(docs, "Role") if r["metadata"]["name"] in bound]
    grants = rbac_grants(roles)
    assert all(verbs == READ_VERBS for _, verbs in grants.values())
    return {key: scope for key, (scope, _) in grants.items()}


def test_every_default_kind_is_in_exactly_one_shard(monkeypatch: pytest.MonkeyPatch) -> None:
    shards = [kinds_of(d, env, monkeypatch) for d, env in SHARDS]
    assert sorted(k for kinds in shards for k in kinds) == sorted(DEFAULT_KINDS)
    assert all(shards)


@pytest.mark.parametrize(("deployment", "env"), SHARDS, ids=SHARD_IDS)
def test_each_shard_may_read_exactly_the_kinds_it_records(
        deployment: dict[str, Any], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    wanted = {(group, resource): BY_RESOURCE[resource].fixed_namespace
              for resource in kinds_of(deployment, env, monkeypatch)
              for group, _ in BY_RESOURCE[resource].candidates}
    assert grants_of(account) == wanted


def test_the_shards_together_are_granted_what_the_single_recorder_is() -> None:
    grants = rbac_grants(sharded("rbac.yaml"))
    assert {key: scope for key, (scope, _) in grants.items()} == recorded_grants()
    assert not {resource for _, resource in grants} & REFUSED_RESOURCES
    assert "*" not in {part for key in grants for part in key}


def as_single_recorder(deployment: dict[str, Any]) -> dict[str, Any]:
    """A shard's Deployment with what makes it a shard taken back out."""
    single = copy.deepcopy(deployment)
    name = single["metadata"]["name"]
    single["metadata"]["name"] = "ktrace-recorder"
    spec = single["spec"]
    for labels in (single["metadata"]["labels"], spec["selector"]["matchLabels"],
                   spec["template"]["metadata"]["labels"]):
        assert labels.pop("app.kubernetes.io/instance") == name
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    spec["strategy"] = {"type": "Recreate"}
    pod = spec["template"]["spec"]
    assert pod["serviceAccountName"] == name
    pod["serviceAccountName"] = "ktrace-recorder"
    recorder = container(single, "recorder")
    recorder["args"] = [a for a in recorder["args"] if not a.startswith("--kinds=")]
    return single


@pytest.mark.parametrize(("deployment", "env"), SHARDS, ids=SHARD_IDS)
def test_a_shard_is_the_single_recorder_with_its_kinds_account_and_rolling_update(
        deployment: dict[str, Any], env: dict[str, str]) -> None:
    (single,) = find(manifest("recorder.yaml"), "Deployment")
    assert as_single_recorder(deployment) == single
    (configmap,) = find(manifest("recorder.yaml"), "ConfigMap")
    assert env == configmap["data"]  # the same topics and cluster name as one recorder


def test_shards_select_their_own_pods() -> None:
    selectors = [json.dumps(d["spec"]["selector"], sort_keys=True) for d, _ in SHARDS]
    assert len(set(selectors)) == len(selectors)


@pytest.mark.k8s
def test_sharded_manifests_pass_server_side_dry_run(k8s_cluster: Cluster, tmp_path: Path) -> None:
    # another module's teardown may still be deleting it ("not found" is fine)
    kubectl(k8s_cluster, k8s_cluster.kubeconfig, "wait", "--for=delete", f"namespace/{NAMESPACE}", "--timeout=90s")
    k8s_cluster.kubectl("apply", "-f", str(MANIFESTS / "namespace.yaml"))
    try:
        done = kubectl(k8s_cluster, k8s_cluster.kubeconfig, "apply", "--dry-run=server", "-k", str(SHARDED),
                       "-o", "json")
        assert done.returncode == 0, done.stderr
        assert "Warning" not in done.stderr, done.stderr  # e.g. PodSecurity "restricted" violations
        applied = json.loads(done.stdout)["items"]
        docs = sharded("rbac.yaml") + sharded("recorder.yaml")
        assert sorted((o["kind"], o["metadata"]["name"]) for o in applied) == \
            sorted((d["kind"], d["metadata"]["name"]) for d in docs)
    finally:
        k8s_cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")


def test_the_kustomization_lists_the_sharded_files() -> None:
    kustomization = yaml.safe_load((SHARDED / "kustomization.yaml").read_text())
    assert kustomization["resources"] == ["rbac.yaml", "recorder.yaml"]
