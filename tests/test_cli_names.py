"""Names as kubectl takes them (one alias table for every command), KIND/NAME targets, and
--cluster: a database loaded from two recordings answers for each cluster as a database
holding that recording alone would."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from ktrace.commands.replay import demo_recording
from recorder.kube.catalogue import parse_kinds
from schemas.kinds import KINDS, ObjectRef, UnknownKind, kind_name
from tests.k8s_source import source_file

PUBLIC = ["tests/data/public/terminating-finalizer-1.json", "tests/data/public/crash-loop-1.json",
          "tests/data/public/unschedulable-cpu-1.json"]


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def as_json(*args: str):
    return json.loads(run(*args, "-o", "json"))


@pytest.fixture(scope="module")
def dbs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The demo recording (cluster ``capture``) and three public specimens imported as
    cluster ``public``: each alone, and both in one database."""
    folder = tmp_path_factory.mktemp("names")
    paths = {name: str(folder / f"{name}.duckdb") for name in ("demo", "public", "both")}
    for db in (paths["demo"], paths["both"]):
        run("replay", demo_recording(), "--db", db)
    for db in (paths["public"], paths["both"]):
        run("import", *PUBLIC, "--cluster", "public", "--db", db)
    return paths


@pytest.mark.parametrize("spelling,kind", [
    ("pods", "Pod"), ("pod", "Pod"), ("po", "Pod"), ("Pod", "Pod"), ("PODS", "Pod"),
    ("deploy", "Deployment"), ("deployment", "Deployment"), ("deployments.apps", "Deployment"),
    ("rs", "ReplicaSet"), ("svc", "Service"), ("ep", "Endpoints"),
    ("endpointslices", "EndpointSlice"), ("no", "Node"), ("nodes", "Node"), ("ns", "Namespace"),
    ("pvc", "PersistentVolumeClaim"), ("pv", "PersistentVolume"), ("sts", "StatefulSet"),
    ("ds", "DaemonSet"), ("job", "Job"), ("ev", "Event"), ("events", "Event")])
def test_every_kubectl_spelling_names_its_kind(spelling: str, kind: str):
    assert kind_name(spelling).kind == kind


def test_no_spelling_names_two_kinds():
    names = [n for k in KINDS for n in k.names]
    assert len(names) == len(set(names))


#: kinds whose API server registry package is not named after the kind
REGISTRY_PACKAGE = {"Endpoints": "endpoint"}
SHORT_NAMES = re.compile(r"ShortNames\(\) \[\]string \{\s*return \[\]string\{([^}]*)\}")


def test_short_names_are_the_api_servers():
    """The short names are exactly those the API server declares (each registry's
    ShortNames()): an evidence id's prefix is the first of them, else the resource
    (replayer/analyses/record_ids.py), so a kind without one — Job, Lease, EndpointSlice,
    VolumeAttachment — keeps `jobs:`, `volumeattachments:`, as kubectl has nothing shorter."""
    registry = source_file("pkg/registry")
    if not registry.is_dir():
        pytest.skip(f"no Kubernetes source at {registry}: compose/k8s/build.sh fills the Go module cache")
    declared = {}
    for k in KINDS:
        (package,) = registry.glob(f"*/{REGISTRY_PACKAGE.get(k.kind, k.kind.lower())}")
        lists = [m for f in sorted(package.rglob("*.go")) if not f.name.endswith("_test.go")
                 for m in SHORT_NAMES.findall(f.read_text(encoding="utf-8"))]
        declared[k.kind] = tuple(re.findall(r'"([^"]+)"', lists[0])) if lists else ()
    assert declared == {k.kind: k.short for k in KINDS}
    assert {k.kind for k in KINDS if not k.short} >= {"Job", "Lease", "EndpointSlice", "VolumeAttachment"}


def test_a_bare_name_is_a_pod_and_a_bad_kind_one_error():
    assert ObjectRef.parse("web-1").kind.kind == "Pod"
    assert ObjectRef.parse("po/web-1") == ObjectRef.parse("pod/web-1") == ObjectRef.parse("web-1")
    with pytest.raises(UnknownKind, match="unknown kind 'widget'"):
        ObjectRef.parse("widget/x")


def test_record_kinds_take_kubectl_names_and_still_refuse_secrets():
    assert parse_kinds(("po,deploy", "Event", "no")) == ["pods", "deployments", "events", "nodes"]
    with pytest.raises(Exception, match="never recorded"):
        parse_kinds(("secret",))


def test_timeline_takes_a_pod_as_name_pod_slash_and_po_slash(dbs):
    pod = as_json("query", "SELECT pod FROM races ORDER BY pod LIMIT 1", "--db", dbs["demo"])[0]["pod"]
    outputs = {run("timeline", target, "--db", dbs["demo"])
               for target in (pod, f"pod/{pod}", f"po/{pod}", f"Pod/{pod}")}
    assert len(outputs) == 1 and pod in outputs.pop()


def test_timeline_of_a_deployment_in_two_namespaces_is_ambiguous_without_n(dbs, monkeypatch,
                                                                             tmp_path):
    """The demo runs deploy/web in namespaces graceful and race: without -n (and without a
    kubeconfig) that is an error naming both; -A merges them because it was asked to."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    for command in ("timeline", "explain"):
        result = CliRunner().invoke(cli, [command, "deploy/web", "--db", dbs["demo"]])
        assert (result.exit_code, result.stdout) == (1, "")
        assert result.stderr == ("Error: Deployment 'web' is in 2 namespaces (graceful, race): "
                                 "pass -n NAMESPACE, or -A for all of them\n")
    rows = as_json("timeline", "deploy/web", "-A", "--db", dbs["demo"])
    namespaces = {r["namespace"] for r in rows}
    assert namespaces == {"graceful", "race"}
    narrowed = as_json("timeline", "deploy/web", "-n", sorted(namespaces)[0], "--db", dbs["demo"])
    assert narrowed and {r["namespace"] for r in narrowed} == {sorted(namespaces)[0]}
    assert {r["pod"] for r in narrowed} < {r["pod"] for r in rows}


def test_the_current_contexts_namespace_chooses_among_the_recordings(dbs, monkeypatch, tmp_path):
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: shop\n"
                          "contexts:\n- name: shop\n  context: {cluster: c, user: u, "
                          "namespace: race}\nclusters: []\nusers: []\n")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    result = CliRunner().invoke(cli, ["timeline", "deploy/web", "--db", dbs["demo"], "-o", "json"])
    assert result.exit_code == 0
    assert {r["namespace"] for r in json.loads(result.stdout)} == {"race"}
    assert result.stderr == ("note: Deployment 'web' is in namespaces graceful, race: showing "
                             "race, the namespace of kubeconfig context shop (-n to choose)\n")
    # a name in one namespace is that object, whatever the context says
    assert as_json("explain", "pod/held", "--db", dbs["demo"])[0]["namespace"] == "hold"


def test_state_takes_the_kind_as_kubectl_names_it(dbs):
    at = ("--at", "2026-12-07T14:38:00Z", "--db", dbs["demo"])
    outputs = {run("state", "--kind", kind, *at) for kind in ("pods", "pod", "po", "Pod")}
    assert len(outputs) == 1
    assert {r["kind"] for r in as_json("state", "--kind", "deploy", *at)} == {"Deployment"}


def test_minus_A_is_accepted_and_contradicting_minus_n_is_a_usage_error(dbs):
    assert run("stuck", "-A", "--db", dbs["demo"]) == run("stuck", "--db", dbs["demo"])
    result = CliRunner().invoke(cli, ["stuck", "-A", "-n", "hold", "--db", dbs["demo"]])
    assert result.exit_code == 2 and "contradict" in result.output


def _stuck_for(rows) -> dict[str, float]:
    return {r["uid"]: r["stuck_for_s"] for r in rows}


def test_each_cluster_is_judged_at_the_end_of_its_own_data(dbs):
    """The public specimens end in 2024, the demo in 2026: one database holding both must
    not age the specimens' pods by two years, with or without --cluster."""
    alone = {**_stuck_for(as_json("stuck", "--db", dbs["demo"])),
             **_stuck_for(as_json("stuck", "--db", dbs["public"]))}
    both = as_json("stuck", "--db", dbs["both"])
    assert {r["cluster"] for r in both} == {"capture", "public"}
    assert _stuck_for(both) == pytest.approx(alone)
    public = as_json("stuck", "--cluster", "public", "--db", dbs["both"])
    assert public and {r["cluster"] for r in public} == {"public"}
    assert _stuck_for(public) == pytest.approx(_stuck_for(as_json("stuck", "--db", dbs["public"])))


@pytest.mark.parametrize("command", [["gaps"], ["races"], ["timeline", "deploy/web", "-A"],
                                     ["explain", "pod/held"],
                                     ["state", "--at", "2026-12-07T14:38:00Z"]])
def test_cluster_filters_every_analysis(dbs, command: list[str]):
    """Each analysis on cluster ``capture`` of the two-cluster database answers as the demo
    database alone does; on a cluster the database does not hold, it finds nothing."""
    assert (run(*command, "--cluster", "capture", "--db", dbs["both"])
            == run(*command, "--db", dbs["demo"]))
    result = CliRunner().invoke(cli, [*command, "--cluster", "nowhere", "--db", dbs["both"],
                                      "-o", "json"])
    assert (result.exit_code == 1 and "cluster nowhere" in result.output) or (
        result.exit_code == 0 and not any(json.loads(result.output) if command[0] != "races"
                                          else json.loads(result.output).values()))


def test_the_report_draws_one_cluster_s_pods(dbs, tmp_path):
    counts = {}
    for cluster in ("capture", "public"):
        result = CliRunner().invoke(cli, ["report", "--cluster", cluster, "--db", dbs["both"],
                                          "--html", str(tmp_path / f"{cluster}.html")])
        assert result.exit_code == 0, result.output
        counts[cluster] = int(result.stderr.rsplit("(", 1)[1].split()[0])
    alone = {c: len(as_json("query", "SELECT DISTINCT uid FROM pod_transitions", "--db", db))
             for c, db in (("capture", dbs["demo"]), ("public", dbs["public"]))}
    assert counts == alone
