"""`ktrace demo --html`: the report of the demo recording opened from file:// in a real
headless Chromium with the network blocked (tests/infra/browser.py)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import orjson
import pytest
from selenium.webdriver.common.by import By

from replayer import db
from replayer.analyses.races import race_summary
from tests.infra.browser import leaving, offline_chromium, requested_urls
from tests.report_data import ktrace as run, query

EVIL = "<script>window.pwned=1</script>"


@pytest.fixture(scope="module")
def browser():
    with offline_chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def page(demo_report, browser):
    browser.get(demo_report[1].as_uri())
    return browser


def test_nothing_leaves_the_page(demo_report, browser):
    requested_urls(browser)  # drop what an earlier test asked for
    browser.get(demo_report[1].as_uri())
    urls = requested_urls(browser)
    assert demo_report[1].as_uri() in urls
    assert leaving(urls) == []
    html = demo_report[1].read_text()
    assert "http://" not in html and "https://" not in html and "//cdn" not in html


def test_findings_come_first_with_every_stuck_object_and_race(demo_report, page):
    rows = page.find_elements(By.CSS_SELECTOR, "#findings tr.finding")
    stuck = query(demo_report[0], "SELECT kind, name, top_cause FROM problems")
    raced = query(demo_report[0], "SELECT pod FROM races WHERE verdict IN "
                                  "('stopped_before_endpoint_off', 'within_margin')")
    shown = [r.text for r in rows if r.get_attribute("data-kind") == "stuck"]
    assert len(shown) == len(stuck) > 0
    for kind, name, cause in stuck:
        assert any(f"{kind} " in t and name in t and cause in t for t in shown), (kind, name)
    race_rows = [r.text for r in rows if r.get_attribute("data-kind") == "race"]
    assert len(race_rows) == len(raced) > 0
    con = db.open_readonly(str(demo_report[0]))
    try:
        names, summary = race_summary(con)
    finally:
        con.close()
    prestop = {row[0]: row[names.index("suggested_prestop_s")] for row in summary}
    for text in race_rows:
        namespace = text.split("Pod ", 1)[1].split("/", 1)[0]
        assert f"suggested preStop {prestop[namespace]} s" in text
    sections = [s.get_attribute("id") for s in page.find_elements(By.CSS_SELECTOR, "section")]
    assert sections[0] == "findings"


def test_each_raced_pod_has_a_race_window_labelled_with_its_length(demo_report, page):
    raced = query(demo_report[0], "SELECT uid, exposed_s FROM races "
                                  "WHERE verdict = 'stopped_before_endpoint_off'")
    assert raced
    for uid, exposed in raced:
        window = page.find_element(By.CSS_SELECTOR, f"#lane-{uid} .race")
        label = window.find_element(By.CSS_SELECTOR, ".race-label").text
        assert label == f"race {exposed:.2f} s"
        assert float(window.get_attribute("data-exposed")) == pytest.approx(exposed, abs=1e-3)
        rect = window.find_element(By.CSS_SELECTOR, "rect")
        assert float(rect.get_attribute("width")) >= 1
    quiet = query(demo_report[0], "SELECT uid FROM races WHERE verdict = 'ok'")
    for (uid,) in quiet:
        assert page.find_elements(By.CSS_SELECTOR, f"#lane-{uid} .race") == []


def test_the_finalizer_held_pods_show_their_hold(demo_report, page):
    held = query(demo_report[0], "SELECT DISTINCT uid, finalizers FROM raw_events WHERE kind = 'Pod' "
                                 "AND deletion_at IS NOT NULL AND len(finalizers) > 0")
    assert held
    for uid, finalizers in held:
        hold = page.find_element(By.CSS_SELECTOR, f"#lane-{uid} .hold")
        assert all(f in hold.text for f in finalizers)
        assert "held by" in hold.text


def test_hatched_gaps_match_the_unseen_stretches(demo_report, page):
    unseen = query(demo_report[0], "SELECT type, coalesce(topic, ''), start_at, end_at FROM gaps "
                                   "WHERE category = 'unseen'")
    marks = page.find_elements(By.CSS_SELECTOR, "#recording .gap")
    drawn = sorted((m.get_attribute("data-gap-type"), m.get_attribute("data-topic"),
                    datetime.fromisoformat(m.get_attribute("data-start")),
                    datetime.fromisoformat(m.get_attribute("data-end"))) for m in marks)
    assert drawn == sorted(unseen) and unseen
    assert all("hatch-unseen" in m.value_of_css_property("fill") for m in marks)
    lane_gaps = page.find_elements(By.CSS_SELECTOR, ".lane .gap")
    assert {g.get_attribute("data-gap-type") for g in lane_gaps} <= {u[0] for u in unseen}


def test_clicking_a_mark_opens_its_evidence(demo_report, page, tmp_path: Path):
    uid, evidence = query(demo_report[0], "SELECT uid, evidence FROM races "
                                          "WHERE verdict = 'stopped_before_endpoint_off' LIMIT 1")[0]
    page.find_element(By.CSS_SELECTOR, f"#lane-{uid}").location_once_scrolled_into_view
    page.find_element(By.CSS_SELECTOR, f"#lane-{uid} .race rect").click()
    panel = page.find_element(By.ID, "details")
    assert panel.is_displayed()
    kind, name, rv, topic, partition, offset = query(
        demo_report[0], f"SELECT kind, name, resource_version, topic, partition, \"offset\" "
                 f"FROM raw_events WHERE event_id = {int(evidence[1])}")[0]
    assert name in page.find_element(By.ID, "details-title").text
    fields = dict(row.text.split(" ", 1) for row in
                  panel.find_elements(By.CSS_SELECTOR, "#details-fields tr"))
    assert (fields["kind"], fields["resource_version"], fields["topic"]) == (kind, rv, topic)
    assert (int(fields["partition"]), int(fields["offset"])) == (partition, offset)
    assert "received_at" in fields and "component" in fields
    # the panel names the record as `ktrace evidence` takes it, the same after a rebuild
    assert fields["more"].split()[:3] == ["ktrace", "evidence", fields["id"]]
    assert re.fullmatch(r"[a-z0-9.-]+:[0-9a-f]{8}:\d+", fields["id"])
    page.save_screenshot(str(tmp_path / "report.png"))
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_an_object_name_with_a_script_tag_is_text(tmp_path: Path, browser):
    capture = tmp_path / "pods.json"
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": EVIL, "namespace": "x", "uid": "u-1", "resourceVersion": "10",
                        "creationTimestamp": "2026-11-30T07:00:00Z",
                        "finalizers": ["example.com/" + EVIL]},
           "spec": {"nodeName": "n", "containers": [{"name": EVIL}]},
           "status": {"phase": "Running"}}
    deleted = json.loads(json.dumps(pod))
    deleted["metadata"].update(resourceVersion="11", deletionTimestamp="2026-11-30T07:00:30Z",
                               deletionGracePeriodSeconds=30)
    capture.write_bytes(b"\n".join(orjson.dumps({"type": t, "object": o})
                                   for t, o in (("ADDED", pod), ("MODIFIED", deleted))))
    db, html = str(tmp_path / "x.duckdb"), tmp_path / "x.html"
    run("import", str(capture), "--db", db)
    run("report", "--db", db, "--html", str(html))
    text = html.read_text()
    assert EVIL not in text and "&lt;script&gt;window.pwned=1&lt;/script&gt;" in text
    browser.get(html.as_uri())
    assert browser.execute_script("return window.pwned === undefined")
    assert browser.find_element(By.CSS_SELECTOR, ".lane").get_attribute("data-pod") == EVIL
    assert EVIL in browser.find_element(By.CSS_SELECTOR, ".lane-head b").text
