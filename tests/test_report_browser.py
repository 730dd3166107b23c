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
from selenium.webdriver.common.keys import Keys

from replayer import db
from replayer.analyses.races import race_summary
from schemas.formats import duration
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
    # nothing fetched or linked; a recorded message may quote a URL as text (the kubelet's
    # "Readiness probe failed: Get "http://10.250.0.13:8080/": …"), never as an address
    assert not re.search(r"""(?:src|href|action|url)\s*[=(]\s*["']?(?:https?:)?//""", html, re.I)
    assert "//cdn" not in html


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
        assert f"suggested preStop {duration(prestop[namespace])}" in text
    sections = [s.get_attribute("id") for s in page.find_elements(By.CSS_SELECTOR, "section")]
    assert sections[0] == "findings"


def test_each_raced_pod_has_a_race_window_labelled_with_its_length(demo_report, page):
    raced = query(demo_report[0], "SELECT uid, exposed_s FROM races "
                                  "WHERE verdict = 'stopped_before_endpoint_off'")
    assert raced
    for uid, exposed in raced:
        window = page.find_element(By.CSS_SELECTOR, f"#lane-{uid} .race")
        label = page.find_element(By.CSS_SELECTOR, f"#lane-{uid} .race-label").text
        assert label == f"race {duration(exposed)}"
        assert float(window.get_attribute("data-exposed")) == pytest.approx(exposed, abs=1e-3)
        rect = window.find_element(By.CSS_SELECTOR, "rect")
        assert rect.rect["width"] >= 3  # px, on the page's axis
    quiet = query(demo_report[0], "SELECT uid FROM races WHERE verdict = 'ok'")
    for (uid,) in quiet:
        assert page.find_elements(By.CSS_SELECTOR, f"#lane-{uid} .race") == []


def test_the_finalizer_held_pods_show_their_hold(demo_report, page):
    held = query(demo_report[0], "SELECT DISTINCT uid, finalizers FROM raw_events WHERE kind = 'Pod' "
                                 "AND deletion_at IS NOT NULL AND len(finalizers) > 0")
    assert held
    for uid, finalizers in held:
        hold = page.find_element(By.CSS_SELECTOR, f"#lane-{uid} .hold")
        label = page.find_element(By.CSS_SELECTOR, f"#lane-{uid} .hold-label").text
        assert all(f in label and f in hold.get_attribute("aria-label") for f in finalizers)
        assert label.startswith("held by")


def _utc(stamp: str) -> datetime:
    """An RFC 3339 time as the database holds it: naive UTC."""
    return datetime.fromisoformat(stamp).replace(tzinfo=None)


def test_the_unseen_stretches_are_told_once_per_event_with_their_topics(demo_report, page):
    """The demo's recorder died: every watch then expired at once (17 gap_marker rows, one
    relist) — one event with its topics, not 17 rows; the recording's row spans them."""
    unseen = query(demo_report[0], "SELECT type, coalesce(split_part(topic, '.', 2), "
                                   "'whole recording'), start_at, end_at FROM gaps "
                                   "WHERE category = 'unseen'")
    rows = page.find_elements(By.CSS_SELECTOR, "#recording tr.unseen-event")
    assert 0 < len(rows) < len(unseen)
    told = [(r.get_attribute("data-gap-type"), t) for r in rows
            for t in r.find_elements(By.TAG_NAME, "td")[3].text.split(", ")]
    assert sorted(told) == sorted((kind, topic) for kind, topic, _, _ in unseen)
    marks = page.find_elements(By.CSS_SELECTOR, "#recording .mark.gap")
    assert len(marks) == len(rows)
    for mark in marks:
        topics = mark.get_attribute("data-topics").split(" ")
        ours = [u for u in unseen if u[0] == mark.get_attribute("data-gap-type")
                and u[1].split(" ")[0] in topics]
        assert _utc(mark.get_attribute("data-start")) == min(u[2] for u in ours)
        assert _utc(mark.get_attribute("data-end")) == max(u[3] for u in ours)
        assert "hatch-unseen" in mark.find_element(By.TAG_NAME, "rect").value_of_css_property("fill")
    lane_gaps = page.find_elements(By.CSS_SELECTOR, ".lane .gap")
    assert {g.get_attribute("data-gap-type") for g in lane_gaps} <= {u[0] for u in unseen}


def test_the_page_reads_findings_then_the_picture_then_the_recording(page):
    sections = [s.get_attribute("id") for s in page.find_elements(By.CSS_SELECTOR, "section")]
    assert sections == ["findings", "pods", "rollouts", "recording"]
    header = page.find_element(By.TAG_NAME, "header")
    assert header.size["height"] < 300  # the findings start on the first screen
    legend = page.find_element(By.CSS_SELECTOR, "#pods .legend").text
    assert "docs/" not in legend and "grace deadline" in legend and "race window" in legend


#: Every element that holds text of its own (SVG text included) that is shown: their boxes,
#: and which contains which (a cell holds its buttons: not an overlap).
TEXT_BOXES = """
const own = [...document.querySelectorAll("body *")].filter(e =>
  [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()) &&
  e.getClientRects().length && getComputedStyle(e).visibility !== "hidden");
const boxes = own.map(e => { const r = e.getBoundingClientRect();
  return {text: e.textContent.trim().slice(0, 40), l: r.left, r: r.right, t: r.top, b: r.bottom}; });
const hits = [];
for (let i = 0; i < own.length; i++) for (let j = i + 1; j < own.length; j++) {
  const a = boxes[i], b = boxes[j];
  if (own[i].contains(own[j]) || own[j].contains(own[i])) continue;
  if (Math.min(a.r, b.r) - Math.max(a.l, b.l) > 1 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 1)
    hits.push([a.text, b.text]);
}
return [own.length, hits];
"""
#: Elements reaching past the viewport's right edge, and the page's scroll width.
TOO_WIDE = """
const w = document.documentElement.clientWidth;
const wide = [...document.querySelectorAll("body *")].filter(e => e.getClientRects().length
  && e.getBoundingClientRect().right > w + 0.5).map(e => e.tagName + "." + e.className.baseVal
  + e.className + " " + (e.textContent || "").trim().slice(0, 30));
return [document.documentElement.scrollWidth, w, wide];
"""


@pytest.fixture
def at_width(demo_report, browser):
    """The report at a given window width (the module's browser back at 1400 after)."""
    def load(width: int):
        browser.set_window_size(width, 1000)
        browser.get(demo_report[1].as_uri())
        for group in browser.find_elements(By.CSS_SELECTOR, "details"):
            browser.execute_script("arguments[0].open = true", group)
        return browser
    yield load
    browser.set_window_size(1400, 1000)


@pytest.mark.parametrize("width", [1000, 1400])
def test_no_two_text_boxes_overlap(at_width, width):
    seen, hits = at_width(width).execute_script(TEXT_BOXES)
    assert seen > 300 and hits == []


def test_nothing_is_wider_than_the_viewport_at_1000_px(at_width):
    scroll_width, width, wide = at_width(1000).execute_script(TOO_WIDE)
    assert wide == [] and scroll_width <= width


def test_lanes_share_one_time_axis_and_revisions_their_colour(page):
    lanes = page.find_elements(By.CSS_SELECTOR, ".lane .lane-svg")
    assert len({(round(s.rect["x"]), round(s.rect["width"])) for s in lanes}) == 1
    charts = page.find_elements(By.CSS_SELECTOR, "svg.chart")
    assert {(round(c.rect["x"]), round(c.rect["width"])) for c in charts} == {
        (round(lanes[0].rect["x"]), round(lanes[0].rect["width"]))}
    for group in page.find_elements(By.CSS_SELECTOR, "details.group"):
        edges = [h.value_of_css_property("border-left-color")
                 for h in group.find_elements(By.CSS_SELECTOR, "h4.revision")]
        assert len(set(edges)) == len(edges)


def test_every_tick_label_lies_inside_its_plot(at_width):
    outside = at_width(1000).execute_script("""
        return [...document.querySelectorAll("text.tick-label")].filter(t => t.getClientRects().length)
          .filter(t => { const r = t.getBoundingClientRect(), p = t.ownerSVGElement.getBoundingClientRect();
                         return r.left < p.left - 0.5 || r.right > p.right + 0.5; })
          .map(t => t.textContent);""")
    assert outside == []


def test_the_prestop_bar_stands_out_on_the_container_bar(page):
    hooked = page.find_element(By.CSS_SELECTOR, ".lane[data-pod=hooked] .prestop rect")
    assert hooked.rect["height"] >= 5 and hooked.rect["width"] >= 3
    assert hooked.value_of_css_property("fill") != page.find_element(
        By.CSS_SELECTOR, ".lane[data-pod=hooked] .run rect").value_of_css_property("fill")


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
    lane = page.find_element(By.CSS_SELECTOR, f"#lane-{uid}")
    assert lane.rect["y"] + lane.rect["height"] <= panel.rect["y"] + 1  # not under the panel
    page.save_screenshot(str(tmp_path / "report.png"))
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_escape_closes_the_panel_and_a_mark_opens_it_from_the_keyboard(demo_report, page):
    uid, evidence = query(demo_report[0], "SELECT uid, evidence FROM races "
                                          "WHERE verdict = 'stopped_before_endpoint_off' LIMIT 1")[0]
    mark = page.find_element(By.CSS_SELECTOR, f"#lane-{uid} .race")
    assert mark.get_attribute("tabindex") == "0" and mark.get_attribute("role") == "button"
    assert "traffic could reach stopped containers" in mark.get_attribute("aria-label")
    page.execute_script("arguments[0].focus()", mark)
    assert page.switch_to.active_element == mark
    mark.send_keys(Keys.ENTER)
    panel = page.find_element(By.ID, "details")
    assert panel.is_displayed() and panel.get_attribute("data-ev") == str(evidence[1])
    page.switch_to.active_element.send_keys(Keys.ESCAPE)
    assert not panel.is_displayed()
    assert page.switch_to.active_element == mark  # back where the reader was
    every = page.find_elements(By.CSS_SELECTOR, ".mark[data-ev]")
    assert every and all(m.get_attribute("tabindex") == "0" for m in every)


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
    assert browser.find_elements(By.ID, "recording") == []  # it saw all: no empty axis
    assert browser.execute_script("return window.pwned === undefined")
    assert browser.find_element(By.CSS_SELECTOR, ".lane").get_attribute("data-pod") == EVIL
    assert EVIL in browser.find_element(By.CSS_SELECTOR, ".lane-head b").text
