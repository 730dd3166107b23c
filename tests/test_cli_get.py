"""`ktrace get` lists what the database holds as kubectl would have shown it at that moment,
and `ktrace info` what the database holds at all."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from ktrace.commands.replay import demo_recording

END = "2026-11-30T07:13:30Z"
#: public specimens and what `kubectl get pods` showed for them (EXPECTED.md, the pastes)
SPECIMENS = {
    "crash-loop-1": ("default", "crashloop", "0/1", "CrashLoopBackOff", 1),
    "crash-loop-3": ("ns-apps", "nsapp-fa868e46640f566de09528-0", "0/1", "CrashLoopBackOff", 617),
    "crash-loop-oom-1": ("tts-team", "jumpserver-reader-589945c95c-d2nzg", "1/1", "Running", 21),
    "init-crash-1": ("default", "unnamed-rtf-app-pod", None, "Init:CrashLoopBackOff", 0),
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
    return json.loads(run(*args, "-o", "json"))


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("get") / "public.duckdb")
    run("import", *[f"tests/data/public/{f}.json" for f in SPECIMENS], "--db", path)
    return path


def test_get_pods_lists_the_pods_that_exist_at_the_moment(demo_db):
    for at in ("2026-11-30T07:11:45Z", END):
        pods = rows("get", "pods", "-A", "--at", at, "--db", demo_db)
        existing = rows("state", "--kind", "Pod", "--at", at, "--db", demo_db)
        assert sorted((p["namespace"], p["name"]) for p in pods) == sorted(
            (s["namespace"], s["name"]) for s in existing)
    by_name = {p["name"]: p for p in rows("get", "po", "--db", demo_db)}
    assert by_name["held"]["status"] == "Terminating" and by_name["held"]["ready"] == "0/1"
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
    labelled = rows("query", "SELECT name FROM state_at(TIMESTAMP '2026-11-30 07:13:30') "
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
        "web": "3/3"}
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
        "2026-11-30T07:11:23.310237Z", "2026-11-30T07:13:30.695349Z")
    assert {s["cluster"] for s in info["info_sessions"]} == {"capture", "public"}
    pods = [k for k in info["info_kinds"] if k["kind"] == "Pod"][0]
    assert pods["at_end"] == len(rows("get", "pods", "--db", both))
    assert {u["type"] for u in info["info_unseen"]} >= {"gap_marker"}
    assert [c["cluster"] for c in rows("info", "--cluster", "public", "--db", both)[
        "info_clusters"]] == ["public"]
