"""Tables at 80 and 100 columns keep what the next command needs (evidence ids, durations)
and shorten free text first; one recorder-wide event is one row; numbers read right (one
duration and one time format, JSON without float noise, a race's margin apart from its
exposure, unseen stretches covered once); all on the demo recording."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from schemas.formats import clock, duration, rfc3339, rounded

NOTE = "left out to fit {} columns: -o wide or -o json shows every column\n"


def invoke(*args: str, columns: int | None = None, code: int = 0):
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": str(columns or "")})
    assert result.exit_code == code, result.output
    return result


def as_json(*args: str):
    return json.loads(invoke(*args, "-o", "json").stdout)


@pytest.mark.parametrize("columns, header, note, held", [
    # held: deletionTimestamp 14:35:51Z (its last record, seq 96), the recording ends 14:38:30.4
    (80, "KIND        NAME           STUCK FOR  CAUSE                   EVIDENCE",
     "NAMESPACE, PROBLEM", "Pod         held           2m39s      finalizers              "
                           "po:83a33959:96"),
    (100, "KIND        NAMESPACE  NAME                 STUCK FOR  CAUSE                   EVIDENCE",
     "PROBLEM", "Pod         hold       held                 2m39s      finalizers              "
                "po:83a33959:96")])
def test_stuck_keeps_evidence_and_stuck_for_and_leaves_out_what_it_declares(
        demo_db, columns, header, note, held):
    result = invoke("stuck", "--db", demo_db, columns=columns)
    lines = result.stdout.splitlines()
    assert lines[0] == header and held in lines
    assert result.stderr == f"note: {note} " + NOTE.format(columns)
    assert max(len(line) for line in lines) <= columns


def test_a_name_is_cut_in_the_middle_where_generated_names_differ(demo_db):
    lines = invoke("stuck", "--db", demo_db, columns=80).stdout.splitlines()
    assert "Pod         fg-598…-xqf5n  2m34s      finalizers              po:83a33959:111" in lines


@pytest.mark.parametrize("columns, header, note", [
    (80, "TYPE                NAME    START AT       LASTED  EVIDENCE", "CATEGORY, TOPICS, DETAIL"),
    (100, "TYPE                NAME    START AT       LASTED  DETAIL               EVIDENCE",
     "CATEGORY, TOPICS")])
def test_gaps_show_one_row_per_recorder_wide_event(demo_db, columns, header, note):
    """Every watch of the recorder expired at once (410 Gone on 17 topics): one row."""
    result = invoke("gaps", "--db", demo_db, columns=columns)
    lines = result.stdout.splitlines()
    assert lines[0] == header and len(lines) == 5
    assert [line.split()[0] for line in lines[1:]] == ["gap_marker", "session_lost",
                                                       "request_to_deleted", "stopped_to_deleted"]
    assert result.stderr == f"note: {note} " + NOTE.format(columns)
    (event,) = [g for g in as_json("gaps", "--db", demo_db) if g["type"] == "gap_marker"]
    assert len(event["topics"]) == 17 and "ktrace.pods" in event["topics"]
    # the GAP markers' first from_time (volumeattachments' initial list) and last to_time
    assert (event["start_at"], event["end_at"], event["seconds"]) == (
        "2026-12-07T14:35:16.980810Z", "2026-12-07T14:36:51.768145Z", 94.787335)
    assert event["detail"].startswith("17 topics at once; the first: 410 Gone: ")


@pytest.mark.parametrize("columns, header", [
    (80, "POD         STEP                TIME           DELTA   EVIDENCE"),
    (100, "POD             STEP                TIME           DELTA   COMPONENT       EVIDENCE")])
def test_timeline_fits_the_terminal_and_keeps_deltas_and_evidence(demo_db, columns, header):
    out = invoke("timeline", "deploy/web", "-n", "race", "--db", demo_db, columns=columns).stdout
    lines = out.splitlines()
    assert lines[0] == header and max(len(line) for line in lines) <= columns
    # web-67f56bfc69-nb8v8: added 14:35:22.522190, bound 14:35:22.541856 (its record seq 3)
    assert re.search(r"  scheduled  +14:35:22\.541Z  20ms  .*po:83a33959:3$", out, re.M)


@pytest.mark.parametrize("columns", [80, 100])
def test_demo_sections_fit_and_keep_evidence(columns, tmp_path):
    result = invoke("demo", "--db", str(tmp_path / "demo.duckdb"), columns=columns)
    assert max(len(line) for line in result.stdout.splitlines()) <= columns
    sections = result.stdout.split("\n== ")
    for title in ("Stuck", "Gaps"):
        (section,) = [s for s in sections if s.startswith(title)]
        assert "EVIDENCE" in section.splitlines()[1], title


def test_races_ok_rows_show_no_exposure_and_their_margin_apart(demo_db):
    doc = as_json("races", "--db", demo_db)
    ok = [r for r in doc["races"] if r["verdict"] == "ok"]
    raced = [r for r in doc["races"] if r["verdict"] == "stopped_before_endpoint_off"]
    assert ok and all(r["exposed_s"] == 0 and r["margin_s"] > 0 for r in ok)
    assert raced and all(r["exposed_s"] > 0 and r["margin_s"] == 0 for r in raced)
    table = invoke("races", "--db", demo_db, columns=100).stdout.splitlines()
    assert table[1] == ("NAMESPACE  POD                   SERVICE  VERDICT                      "
                        "EXPOSED  MARGIN")
    # endpoint not ready 14:35:40.828, container stopped 14:35:44.657 (EXPECTED.md)
    assert table[2] == ("graceful   web-557cfc6f59-bx2gz  web      ok                           "
                        "0s       3.8s")


def test_the_race_summary_names_its_counts_and_quantiles_and_suggests_only_after_a_race(demo_db):
    summary = invoke("races", "--db", demo_db, columns=80).stdout.split("\n\n")[1].splitlines()
    assert summary == [
        "== Distribution and suggested preStop delay",
        "NAMESPACE  PODS  RACED  NARROW  P50 TO OFF  P99 TO OFF  MAX TO OFF  PRESTOP",
        # request → endpoint off: graceful 0.27 s and 0.97 s, race 0.99 s and 1.96 s (EXPECTED.md)
        "graceful   2     0      0       0.6s        1.0s        1.0s        <none>",
        "race       2     2      0       1.5s        2.0s        2.0s        3.0s"]
    rows = {r["namespace"]: r for r in as_json("races", "--db", demo_db)["race_summary"]}
    assert rows["graceful"]["suggested_prestop_s"] is None
    assert rows["race"]["suggested_prestop_s"] == 3


def _numbers(value):
    if isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)


@pytest.mark.parametrize("command", [["races"], ["gaps"], ["stuck"], ["info"],
                                     ["timeline", "deploy/web", "-A"]])
def test_json_numbers_carry_no_float_noise(demo_db, command):
    text = invoke(*command, "--db", demo_db, "-o", "json").stdout
    floats = list(_numbers(json.loads(text)))
    assert floats and all(float(f"{f:.15g}") == f for f in floats)  # 15 digits say it all
    assert not re.search(r"\d\.\d{16,}", text)


def test_info_counts_overlapping_unseen_stretches_once(demo_db):
    """Seventeen topics' stretches overlap inside 1m35s: they cover 1m35s, not their sum."""
    doc = as_json("info", "--db", demo_db)
    unseen = {u["type"]: u for u in doc["info_unseen"]}
    assert unseen["gap_marker"]["stretches"] == 17
    assert unseen["gap_marker"]["total_s"] == 94.787335
    assert unseen["gap_marker"]["total_s"] <= doc["info_clusters"][0]["window_s"]


def test_a_threshold_under_a_second_on_an_api_timestamp_step_says_why_it_finds_nothing(demo_db):
    result = invoke("gaps", "--threshold", "create_to_schedule=0", "--db", demo_db, "-o", "json")
    assert result.stderr == (
        "note: create_to_schedule is measured on API timestamps of whole seconds "
        "(creationTimestamp and the PodScheduled condition): it reads 0s, 1s, 2s…, so a "
        "threshold under 1s finds only steps of 1s or more\n")
    # only whole seconds: fg's pod, created at 14:35:51Z and scheduled at 14:35:52Z, reads 1 s
    assert {(g["name"], g["seconds"]) for g in json.loads(result.stdout) if g["type"] == "create_to_schedule"} == {
        ("fg-598c44bb88-xqf5n", 1.0)}
    quiet = invoke("gaps", "--threshold", "stopped_to_deleted=0", "--db", demo_db, "-o", "json")
    assert quiet.stderr == ""


def test_explain_writes_a_leases_renewal_and_every_time_with_z(demo_db):
    text = invoke("explain", "victim", "--db", demo_db, columns=200).stdout
    # kwok-node-2's last Lease renewTime; the pod's deletionTimestamp (request 14:36:14.8 + 5 s)
    assert "Lease last renewed 2026-12-07T14:35:58Z" in text
    assert "(since 2026-12-07T14:36:19Z)" in text
    stamps = re.findall(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[.\d]*Z?", text)
    assert stamps and all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", s) for s in stamps)


def test_one_time_format_and_one_duration_format():
    at = datetime(2026, 11, 30, 7, 12, 23, 835373)
    assert rfc3339(at) == "2026-11-30T07:12:23.835373Z"
    assert rfc3339(at.replace(tzinfo=timezone.utc), 0) == "2026-11-30T07:12:23Z"
    assert rfc3339(at.replace(microsecond=0), None) == "2026-11-30T07:12:23Z"
    assert rfc3339(at.replace(microsecond=250000), None) == "2026-11-30T07:12:23.250Z"
    assert clock(at) == "07:12:23.835Z"
    assert [duration(s) for s in (0, 0.031, 0.31, 1.93125244, 105, 104.7, -1.1)] == [
        "0s", "31ms", "0.3s", "1.9s", "1m45s", "1m45s", "-1.1s"]
    assert rounded(1.9312524400000002) == 1.93125244
