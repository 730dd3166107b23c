"""`ktrace report` without a browser: the Perfetto trace's structure, the filters, and the
errors (the HTML in a real browser: tests/test_report_browser.py)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from click.testing import CliRunner

from ktrace.cli import cli
from ktrace.commands.replay import demo_recording
from replayer.report.lanes import STEPS_DRAWN_ELSEWHERE
from tests.replayer_data import recording
from tests.report_data import ktrace, query
from replayer.report.layout import unseen_events
from tests.sessions_data import Session, at_time, load, web_service


def test_the_perfetto_trace_has_one_track_per_pod_of_complete_ordered_slices(
        demo_report: tuple[Path, Path], tmp_path: Path):
    db = demo_report[0]
    ktrace("report", "--db", str(db), "--perfetto", str(tmp_path / "trace.json"))
    trace = json.loads((tmp_path / "trace.json").read_text())
    events = trace["traceEvents"]
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e["ph"] == "M" and e["name"] == "thread_name"}
    pods = query(db, "SELECT DISTINCT namespace || '/' || pod FROM pod_transitions")
    assert sorted(tracks.values()) == sorted(p for (p,) in pods)
    assert {e["ph"] for e in events} == {"M", "X"}
    slices = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            slices[(e["pid"], e["tid"])].append(e)
    assert set(slices) == set(tracks)
    steps = {s for (s,) in query(db, "SELECT DISTINCT step FROM pod_transitions")}
    for track, seq in slices.items():
        assert all(e["dur"] >= 0 and e["name"] in steps for e in seq)
        assert [e["ts"] for e in seq] == sorted(e["ts"] for e in seq), tracks[track]
        assert all(a["ts"] + a["dur"] <= b["ts"] for a, b in zip(seq, seq[1:]))
    counts = dict(query(db, "SELECT namespace || '/' || pod, count(*) FROM pod_transitions "
                            "GROUP BY ALL"))
    assert {tracks[t]: len(seq) for t, seq in slices.items()} == counts


def test_a_deployment_and_a_namespace_narrow_the_report(demo_report, tmp_path: Path):
    db, html = str(demo_report[0]), tmp_path / "web.html"
    ktrace("report", "--db", db, "-n", "race", "--pod", "deploy/web", "--html", str(html))
    lanes = set(re.findall(r'id="lane-([^"]+)"', html.read_text()))
    expected = {u for (u,) in query(demo_report[0], "SELECT uid FROM pod_lifecycle "
                                                   "WHERE namespace = 'race'")}
    assert lanes == expected and lanes


def test_a_window_keeps_only_pods_with_a_step_inside_it(demo_report, tmp_path: Path):
    db, html = demo_report[0], tmp_path / "late.html"
    since = query(db, "SELECT max(time) - INTERVAL 30 SECOND FROM pod_transitions")[0][0]
    ktrace("report", "--db", str(db), "--since", since.isoformat() + "Z", "--html", str(html))
    lanes = set(re.findall(r'id="lane-([^"]+)"', html.read_text()))
    expected = {u for (u,) in query(db, "SELECT uid FROM pod_transitions GROUP BY uid "
                                        f"HAVING max(time) >= TIMESTAMP '{since}'")}
    assert lanes == expected and 0 < len(lanes) < len(
        query(db, "SELECT DISTINCT uid FROM pod_transitions"))


def test_report_needs_an_output_and_a_database(tmp_path: Path):
    runner = CliRunner()
    result = runner.invoke(cli, ["report", "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 2 and "--html FILE and/or --perfetto FILE" in result.output
    result = runner.invoke(cli, ["report", "--db", str(tmp_path / "none.duckdb"),
                                 "--html", str(tmp_path / "r.html")])
    assert result.exit_code == 1
    assert result.output.startswith("Error: no database at ")
    assert not (tmp_path / "r.html").exists()


def test_incident_draws_the_window_it_loaded(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the window's database is written
    html = tmp_path / "incident.html"
    ktrace("incident", demo_recording(), "--since", "2026-12-07T14:35:35Z",
           "--until", "2026-12-07T14:35:45Z", "-n", "graceful", "--html", str(html))
    text = html.read_text()
    lanes = re.findall(r'data-pod="([^"]+)" data-namespace="([^"]+)"', text)
    assert lanes and {ns for _, ns in lanes} == {"graceful"}
    assert all(pod.startswith("web-") for pod, _ in lanes)


def test_derived_steps_are_drawn_hollow_and_seen_steps_filled(tmp_path: Path):
    """The midlife recording began after its pods: their early steps are derived."""
    db, html = str(tmp_path / "midlife.duckdb"), tmp_path / "midlife.html"
    ktrace("replay", recording("midlife"), "--db", db)
    ktrace("report", "--db", db, "--html", str(html))
    drawn = re.findall(r'class="mark (step(?: derived)?)" data-ev="(\d+)"', html.read_text())
    steps = query(Path(db), "SELECT evidence_event_id, derived FROM pod_transitions "
                            f"WHERE NOT list_contains({list(STEPS_DRAWN_ELSEWHERE)}, step)")
    assert sorted((int(ev), kind == "step derived") for kind, ev in drawn) == sorted(steps)
    assert any(derived for _, derived in steps) and not all(derived for _, derived in steps)


def test_the_findings_evidence_ids_are_record_ids_that_ktrace_evidence_opens(demo_report):
    db, html = demo_report
    shown = re.findall(r'class="ev" data-ev="(\d+)">([^<]+)<', html.read_text())
    assert shown and all(not label.startswith("#") for _, label in shown)
    for event_id, label in sorted(set(shown))[:10]:
        record = json.loads(ktrace("evidence", label, "--db", str(db), "-o", "json"))
        assert record["id"] == label and record["event_id"] == int(event_id)


def test_each_clusters_rollout_and_pods_have_a_chart_and_group_titled_with_its_cluster(
        tmp_path: Path):
    """Two clusters, each with Deployment shop/web, a dip in cluster a's only: one chart
    per cluster's rollout (not one merged), the dip shaded and linked in a's alone; one
    group of pod lanes per cluster's shop/web."""
    watches = {"deployments": (), "replicasets": (), "pods": (), "endpointslices": ()}
    con = load(tmp_path, Session("rec-a", 0, 20, watches, cluster="a", objects=web_service(
        "a", [(2, True), (5, False), (8, True)])),
               Session("rec-b", 0, 20, watches, cluster="b",
                       objects=web_service("b", [(2, True)])))
    con.close()
    db = str(tmp_path / "replay.duckdb")

    def charts(*options: str) -> tuple[list[tuple[str, str, int]], list[str]]:
        html = tmp_path / "report.html"
        ktrace("report", "--db", db, *options, "--html", str(html))
        text = html.read_text()
        drawn = [(chart, re.search(r"<h3>(.*?)</h3>", body).group(1), body.count('class="mark dip"'))
                 for chart, body in re.findall(
                     r'<div class="rollout" id="([^"]+)">(.*?)</div>', text, re.S)]
        return drawn, re.findall(r'<tr class="finding finding-capacity".*?href="#([^"]+)"', text,
                                 re.S)

    assert charts() == ([("rollout-a-shop-web", "a: shop / Deployment web", 1),
                         ("rollout-b-shop-web", "b: shop / Deployment web", 0)],
                        ["rollout-a-shop-web"])
    assert charts("--cluster", "b") == ([("rollout-b-shop-web", "b: shop / Deployment web", 0)],
                                        [])
    html = tmp_path / "report.html"
    ktrace("report", "--db", db, "--html", str(html))
    groups = re.findall(r"<summary>([^<]*?) — (\d+) pods", html.read_text())
    assert sorted(name for name, _ in groups) == ["a: shop / Deployment/web",
                                                  "b: shop / Deployment/web"], groups


def test_stretches_one_relist_ended_are_one_event_and_later_ones_another():
    """Ends within gaps.SAME_EVENT_S of one session are one event (its topics listed); the same
    type later, or another session, is another."""
    def stretch(topic: str, start_s: float, end_s: float, session: str = "s2") -> dict:
        return {"type": "gap_marker", "session": session, "topic": f"ktrace.{topic}",
                "start_at": at_time(start_s), "end_at": at_time(end_s), "detail": "410 Gone",
                "evidence_event_id": int(start_s)}
    rows = [stretch("pods", 10, 40), stretch("nodes", 12, 41.5), stretch("leases", 3, 43),
            stretch("pods", 100, 130), stretch("jobs", 11, 40.5, session="s3")]
    events = unseen_events(rows)
    assert [(e["topics"], e["start_at"], e["end_at"]) for e in events] == [
        (["pods", "nodes", "leases"], at_time(3), at_time(43)),
        (["jobs"], at_time(11), at_time(40.5)),
        (["pods"], at_time(100), at_time(130))]
    assert events[0]["label"] == "gap_marker · 3 topics" and events[1]["label"] == "gap_marker · jobs"
