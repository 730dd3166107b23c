"""`ktrace get` lists what the database holds as kubectl would have shown it at that moment,
and `ktrace info` what the database holds at all."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta

import pytest
import yaml
from click.testing import CliRunner

from ktrace.cli import cli
from ktrace.commands.replay import demo_recording
from replayer.analyses.get import pod_status
from schemas.formats import duration

END = "2026-12-07T14:38:30Z"
#: public specimens and what `kubectl get pods` showed for them (EXPECTED.md, the pastes)
SPECIMENS = {
    "crash-loop-1": ("default", "crashloop", "0/1", "CrashLoopBackOff", 1),
    "crash-loop-3": ("ns-apps", "nsapp-fa868e46640f566de09528-0", "0/1", "CrashLoopBackOff", 617),
    "crash-loop-oom-1": ("tts-team", "jumpserver-reader-589945c95c-d2nzg", "1/1", "Running", 21),
    # (a describe was pasted: kubectl's printer counts an initializing pod's init restarts)
    "init-crash-1": ("default", "unnamed-rtf-app-pod", None, "Init:CrashLoopBackOff", 16),
    "init-container-config-1": ("default", "sample-mychart-6bfc89db65-j9g9z", None,
                                "Init:CreateContainerConfigError", 0),
    "run-container-error-1": ("default", "foo", "0/1", "RunContainerError", 1),
    "terminating-finalizer-1": ("bigdata-qa", "ham-36937-20230502-1-h6tn7", None, "Terminating", 0),
}


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def rows(*args: str) -> list[dict]:
    """The rows of a `get` (its csv: -o json prints kubectl's objects) or an `info`."""
    if args[0] != "get":
        return json.loads(run(*args, "-o", "json"))
    return [{k: int(v) if v.isdigit() else v for k, v in row.items()}
            for row in csv.DictReader(io.StringIO(run(*args, "-o", "csv")))]


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("get") / "public.duckdb")
    run("import", *[f"tests/data/public/{f}.json" for f in SPECIMENS], "--db", path)
    return path


def test_get_pods_lists_the_pods_that_exist_at_the_moment(demo_db):
    for at in ("2026-12-07T14:35:45Z", END):  # during the graceful rollout; the end
        pods = rows("get", "pods", "-A", "--at", at, "--db", demo_db)
        existing = rows("state", "--kind", "Pod", "--at", at, "--db", demo_db)
        assert sorted((p["namespace"], p["name"]) for p in pods) == sorted(
            (s["namespace"], s["name"]) for s in existing)
    by_name = {p["name"]: p for p in rows("get", "po", "--db", demo_db)}
    # held's container exited 0 (Completed) and its phase is Succeeded: kubectl shows a
    # terminal pod's reason, not Terminating, though its deletion waits for the finalizer
    assert by_name["held"]["status"] == "Completed" and by_name["held"]["ready"] == "0/1"
    assert by_name["busy"]["status"] == "Terminating"
    assert by_name["victim"]["node"] == "kwok-node-2"
    running = [p for p in by_name.values() if p["name"].startswith("web-")]
    assert running and all(p["status"] == "Running" and p["ready"] == "1/1" for p in running)


@pytest.mark.parametrize("specimen", sorted(SPECIMENS))
def test_get_pods_shows_what_kubectl_showed_for_a_public_specimen(public, specimen):
    namespace, name, ready, status, restarts = SPECIMENS[specimen]
    (pod,) = rows("get", "pods", name, "-n", namespace, "--db", public)
    assert (pod["status"], pod["restarts"]) == (status, restarts)
    assert ready is None or pod["ready"] == ready


def test_label_and_field_selectors_narrow_as_kubectl_does(demo_db):
    labelled = rows("query", "SELECT name FROM state_at(TIMESTAMP '2026-12-07 14:38:30') "
                    "WHERE kind = 'Pod' AND labels['app'] = 'web'", "--db", demo_db)
    web = rows("get", "pods", "-l", "app=web", "--db", demo_db)
    assert sorted(p["name"] for p in web) == sorted(r["name"] for r in labelled)
    assert rows("get", "pods", "-l", "app in (web),!nothing", "--db", demo_db) == web
    everyone = {p["name"] for p in rows("get", "pods", "--db", demo_db)}
    others = {p["name"] for p in rows("get", "pods", "-l", "app notin (web)", "--db", demo_db)}
    assert others and others == everyone - {p["name"] for p in web}
    on_node = rows("get", "pods", "--field-selector", "spec.nodeName=kwok-node-2", "--db", demo_db)
    assert [p["name"] for p in on_node] == ["victim"]
    not_race = rows("get", "pods", "--field-selector", "metadata.namespace!=race", "-l", "app=web",
                    "--db", demo_db)
    assert not_race and {p["namespace"] for p in not_race} == {"graceful"}


@pytest.mark.parametrize("args, message", [
    (["-l", "app=("], "cannot parse label selector"),
    (["--field-selector", "spec.bogus=1"], "field 'spec.bogus' cannot be selected here"),
])
def test_a_bad_selector_is_one_error_line(demo_db, args, message):
    result = CliRunner().invoke(cli, ["get", "pods", *args, "--db", demo_db])
    assert result.exit_code == 1 and message in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_get_other_kinds(demo_db):
    assert {d["name"]: d["ready"] for d in rows("get", "deploy", "-n", "race", "--db", demo_db)} == {
        "web": "2/2"}
    nodes = {n["name"]: n["status"] for n in rows("get", "no", "--db", demo_db)}
    assert nodes["kwok-node-0"] == "Ready" and nodes["kwok-node-2"] != "Ready"
    assert {n["name"]: n["status"] for n in rows("get", "ns", "--db", demo_db)}["doomed"] == \
        "Terminating"
    events = rows("get", "ev", "--field-selector", "reason=NodeNotReady", "--db", demo_db)
    assert events and {e["reason"] for e in events} == {"NodeNotReady"}
    assert run("get", "deploy/web", "-n", "race", "--db", demo_db, "-o", "name") == "deployment/web\n"


def test_info_shows_the_clusters_sessions_kinds_and_unseen_stretches(demo_db, public,
                                                                     tmp_path):
    both = str(tmp_path / "both.duckdb")
    run("replay", demo_recording(), "--db", both)
    run("import", "tests/data/public/crash-loop-1.json", "--cluster", "public", "--db", both)
    info = rows("info", "--db", both)
    assert [c["cluster"] for c in info["info_clusters"]] == ["capture", "public"]
    capture = info["info_clusters"][0]
    assert (capture["first_received_at"], capture["last_received_at"]) == (
        "2026-12-07T14:35:16.755640Z", "2026-12-07T14:38:30.445944Z")
    assert {s["cluster"] for s in info["info_sessions"]} == {"capture", "public"}
    pods = [k for k in info["info_kinds"] if k["kind"] == "Pod"][0]
    assert pods["at_end"] == len(rows("get", "pods", "--db", both))
    assert {u["type"] for u in info["info_unseen"]} >= {"gap_marker"}
    assert [c["cluster"] for c in rows("info", "--cluster", "public", "--db", both)[
        "info_clusters"]] == ["public"]


def test_several_kinds_print_one_table_each_as_kubectl_does(demo_db):
    out = run("get", "pods,deploy", "-n", "race", "--no-headers", "--db", demo_db)
    tables = out.split("\n\n")
    assert len(tables) == 2
    assert all(line.startswith("web") for line in out.splitlines() if line)
    assert [line.split()[0] for line in tables[1].splitlines()] == ["web"]
    assert "NAME" not in out
    assert run("get", "pod/held", "deploy/web", "-n", "race", "--db", demo_db, "-o", "name") \
        == "deployment/web\n"  # held is in namespace hold


def test_namespace_column_only_when_the_table_spans_namespaces(demo_db):
    """As kubectl: -n, or named objects, print no NAMESPACE column; the default (every
    namespace) and -A do; -o csv keeps the column either way."""
    assert run("get", "pods", "--db", demo_db).split()[0] == "NAMESPACE"
    assert run("get", "pods", "-n", "race", "--db", demo_db).split()[0] == "NAME"
    assert run("get", "pod/held", "--db", demo_db).split()[0] == "NAME"
    assert run("get", "pod/held", "-A", "--db", demo_db).split()[0] == "NAMESPACE"
    assert run("get", "pods", "-n", "race", "-o", "csv", "--db", demo_db).startswith(
        "namespace,")


def test_show_labels_and_label_columns_as_kubectl_prints_them(demo_db):
    lines = run("get", "pods", "-n", "race", "-L", "app,missing", "--show-labels",
                "--db", demo_db).splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "NODE",
                                "AGE", "APP", "MISSING", "LABELS"]
    assert lines[1].endswith("  web           app=web,pod-template-hash=c8dc546c7")  # the rolled ReplicaSet's


@pytest.mark.parametrize("path", [".metadata.name", "{.metadata.creationTimestamp}",
                                  ".status.podIP"])
def test_sort_by_takes_a_jsonpath_into_the_objects(demo_db, path):
    pods = rows("get", "pods", "--sort-by", path, "--db", demo_db)
    key = {".metadata.name": lambda p: p["name"],
           "{.metadata.creationTimestamp}": lambda p: p["created_at"],
           ".status.podIP": lambda p: p["ip"] if p["ip"] else ""}[path]
    assert [key(p) for p in pods] == sorted(key(p) for p in pods)
    assert len(pods) == len(rows("get", "pods", "--db", demo_db))


def test_yaml_and_json_print_the_objects_as_they_were(demo_db):
    (event_id,) = json.loads(run("query", "SELECT max(event_id) AS id FROM raw_events WHERE "
                                 "kind = 'Deployment' AND namespace = 'race' AND name = 'web'",
                                 "--db", demo_db, "-o", "json"))[0].values()
    stored = json.loads(run("evidence", str(event_id), "--db", demo_db, "-o", "json"))["object"]
    assert yaml.safe_load(run("get", "deploy/web", "-n", "race", "-o", "yaml", "--db", demo_db)) \
        == stored
    listed = json.loads(run("get", "deploy", "-n", "race", "-o", "json", "--db", demo_db))
    assert listed == {"apiVersion": "v1", "kind": "List", "items": [stored],
                      "metadata": {"resourceVersion": ""}}


def test_a_kind_the_recording_does_not_hold_says_so(demo_db):
    result = CliRunner().invoke(cli, ["get", "cronjobs", "--db", demo_db])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("Error: the recording holds no CronJob at all (the recorder did "
                             "not watch that kind): `ktrace info` lists the kinds it holds\n")


def test_a_name_in_two_namespaces_needs_n(demo_db, monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    result = CliRunner().invoke(cli, ["get", "deploy", "web", "--db", demo_db])
    assert result.exit_code == 1 and result.stderr == (
        "Error: Deployment 'web' is in 2 namespaces (graceful, race): pass -n NAMESPACE, or -A "
        "for all of them\n")
    assert {d["namespace"] for d in rows("get", "deploy", "web", "-A", "--db", demo_db)} == {
        "graceful", "race"}


def _container(state: str, *, init: bool = False, sidecar: bool = False, ready: bool = False,
               reason: str | None = None, exit_code: int | None = None,
               restarts: int = 0, last_stop: str | None = None) -> dict:
    return {"init": init, "sidecar": sidecar, "ready": ready, "state": state, "reason": reason,
            "exit_code": exit_code, "signal": None, "restart_count": restarts,
            "last_finished_at": last_stop and datetime.fromisoformat(last_stop)}


def _pod(*containers: dict, initialized: bool = False, pod_ready: bool = False,
         phase: str = "Running", deleting: bool = False) -> dict:
    return {"containers": list(containers), "phase": phase, "status_reason": None,
            "scheduling_gated": False, "initialized": initialized, "pod_ready": pod_ready,
            "deletion_at": "set" if deleting else None,
            "spec_containers": sum(not c["init"] for c in containers),
            "spec_init_containers": sum(c["init"] for c in containers)}


@pytest.mark.parametrize("pod, shown", [
    # initializing: the init container's restarts count, the main container's do not
    (_pod(_container("terminated", init=True, exit_code=0, restarts=1),
          _container("running", init=True, restarts=4),
          _container("waiting", reason="PodInitializing", restarts=0), phase="Pending"),
     ("0/1", "Init:1/2", 5)),
    (_pod(_container("waiting", init=True, reason="CrashLoopBackOff", restarts=3),
          _container("waiting", reason="PodInitializing"), phase="Pending"),
     ("0/1", "Init:CrashLoopBackOff", 3)),
    # a sidecar counts as a container, and its restarts after initialization
    (_pod(_container("running", init=True, sidecar=True, ready=True, restarts=2),
          _container("running", ready=True, restarts=1), initialized=True, pod_ready=True),
     ("2/2", "Running", 3)),
    # Completed beside a container still running: Running when the pod is Ready, else NotReady
    (_pod(_container("terminated", reason="Completed", exit_code=0),
          _container("running", ready=True), initialized=True, pod_ready=True),
     ("1/2", "Running", 0)),
    (_pod(_container("terminated", reason="Completed", exit_code=0),
          _container("running", ready=True), initialized=True), ("1/2", "NotReady", 0)),
    # one container Completed, another failed: the failure shows
    (_pod(_container("terminated", reason="Error", exit_code=1),
          _container("terminated", reason="Completed", exit_code=0), initialized=True,
          phase="Failed"), ("0/2", "Error", 0)),
    # a terminal pod being deleted shows its end, a running one Terminating
    (_pod(_container("terminated", reason="Error", exit_code=1), phase="Failed",
          deleting=True, initialized=True), ("0/1", "Error", 0)),
    (_pod(_container("running", ready=True), deleting=True, initialized=True,
          pod_ready=True), ("1/1", "Terminating", 0)),
])
def test_pod_ready_status_and_restarts_follow_kubectls_printer(pod, shown):
    row = pod_status(pod)
    assert (row["ready"], row["status"], row["restarts"]) == shown


@pytest.mark.parametrize("pod,last", [
    # initializing: only the init containers read so far count, not a main container's
    (_pod(_container("waiting", init=True, reason="CrashLoopBackOff", restarts=2,
                     last_stop="2026-12-07T10:00:00"),
          _container("waiting", restarts=1, last_stop="2026-12-07T11:00:00")), "10:00"),
    # initialized: sidecars and main containers, not a finished init container's old run
    (_pod(_container("terminated", init=True, exit_code=0, restarts=1,
                     last_stop="2026-12-07T12:00:00"),
          _container("running", init=True, sidecar=True, restarts=1,
                     last_stop="2026-12-07T10:30:00"),
          _container("running", ready=True, restarts=1, last_stop="2026-12-07T10:15:00"),
          initialized=True), "10:30"),
    (_pod(_container("running", ready=True), initialized=True), None),
])
def test_the_last_restart_is_that_of_the_containers_kubectl_counts(pod, last):
    at = pod_status(pod)["last_restart_at"]
    assert (at and at.strftime("%H:%M")) == last


@pytest.fixture(scope="module")
def node_scenarios(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("get") / "node.duckdb")
    run("replay", "tests/data/node/scenarios/recording", "--db", path)
    return path


@pytest.mark.parametrize("namespace,pod,init", [("crash", "crasher", False),
                                                ("crash", "initcrash", True)])
def test_restarts_say_how_long_ago_as_kubectl_does(node_scenarios, namespace, pod, init):
    """RESTARTS reads "4 (27s ago)": the latest lastState.terminated.finishedAt of the
    containers counted (an initializing pod's init containers), read here from the object
    as recorded, against the moment shown (the data's end: created + AGE)."""
    (row,) = rows("get", "pod/" + pod, "-n", namespace, "--db", node_scenarios)
    recorded = json.loads(run("get", "pod/" + pod, "-n", namespace, "--db", node_scenarios,
                              "-o", "json"))
    statuses = recorded["status"]["initContainerStatuses" if init else "containerStatuses"]
    finished = max(s["lastState"]["terminated"]["finishedAt"] for s in statuses
                   if "terminated" in s.get("lastState", {}))
    assert row["last_restart_at"].startswith(finished.removesuffix("Z"))
    end = datetime.fromisoformat(row["created_at"]) + timedelta(seconds=float(row["age_s"]))
    ago = duration((end - datetime.fromisoformat(finished)).total_seconds())
    table = run("get", "pod/" + pod, "-n", namespace, "--db", node_scenarios).splitlines()
    assert table[1].split()[3:6] == [str(row["restarts"]), f"({ago}", "ago)"]
