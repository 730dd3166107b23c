"""`ktrace explain` on the demo recording: the whole story of one object, as sentences with
evidence, and the same facts as JSON."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from ktrace.cli import cli
from schemas.formats import duration


def run(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def raced_pod(path: str) -> tuple[str, float]:
    out = run("query", "SELECT pod, exposed_s FROM races WHERE verdict = "
                       "'stopped_before_endpoint_off' ORDER BY pod LIMIT 1", "--db", path, "-o", "json")
    row = json.loads(out)[0]
    return row["pod"], row["exposed_s"]


def test_explain_a_raced_pod_names_the_race_its_margin_and_the_prestop(demo_db: str):
    pod, exposed = raced_pod(demo_db)
    prestop = duration(json.loads(run("races", "-n", "race", "--db", demo_db, "-o", "json"))[
        "race_summary"][0]["suggested_prestop_s"])
    text = run("explain", pod, "--db", demo_db)
    assert f"Race: its containers stopped {duration(exposed)} before its endpoint" in text
    assert f"a preStop delay of {prestop} (the 99th percentile" in text
    story = json.loads(run("explain", pod, "--db", demo_db, "-o", "json"))[0]
    race = [f for f in story["findings"] if f["topic"] == "race"][0]
    assert duration(exposed) in race["sentence"] and prestop in race["advice"]
    assert len(race["evidence"]) == 3
    assert [s["step"] for s in story["timeline"]][:2] == ["created", "scheduled"]


def test_explain_the_finalizer_held_pod_names_the_finalizer_and_who_added_it(demo_db: str):
    text = run("explain", "pod/held", "--db", demo_db)
    assert "Stuck Terminating" in text and "example.com/hold (added by " in text
    story = json.loads(run("explain", "po/held", "-n", "hold", "--db", demo_db, "-o", "json"))[0]
    stuck = [f for f in story["findings"] if f["topic"] == "stuck"]
    assert stuck[0]["sentence"].split(": ")[1].startswith("finalizers — waiting for finalizers "
                                                          "example.com/hold (added by ")
    assert stuck[0]["evidence"] and "finalizer" in stuck[0]["advice"]


def test_explain_a_deployment_tells_every_pods_story(demo_db: str):
    stories = json.loads(run("explain", "deploy/web", "-n", "race", "--db", demo_db, "-o", "json"))
    assert stories[0]["kind"] == "Deployment"
    assert {s["kind"] for s in stories[1:]} == {"Pod"} and len(stories) > 3


def test_explain_an_unknown_kind_is_one_error_line(demo_db: str):
    result = CliRunner().invoke(cli, ["explain", "widget/x", "--db", demo_db])
    assert result.exit_code == 1 and result.output.startswith("Error: unknown kind 'widget'")


def test_every_evidence_id_printed_opens_with_ktrace_evidence(demo_db: str):
    story = json.loads(run("explain", "pod/held", "--db", demo_db, "-o", "json"))[0]
    ids = {i for f in story["findings"] for i in f["evidence"]} | {
        s["evidence_event_id"] for s in story["timeline"]}
    for event_id in sorted(ids):
        record = json.loads(run("evidence", str(event_id), "--db", demo_db, "-o", "json"))
        assert record["id"] == event_id and record["topic"].startswith("ktrace.")
        assert record["object"] is not None or record["type"] not in ("ADDED", "MODIFIED")
    text = run("evidence", str(story["timeline"][0]["evidence_event_id"]), "--db", demo_db)
    assert re.search(r"^name: +held$", text, re.M) and "pods:" in text
    missing = CliRunner().invoke(cli, ["evidence", "999999", "--db", demo_db])
    assert missing.exit_code == 1 and "no record with evidence id 999999" in missing.output
