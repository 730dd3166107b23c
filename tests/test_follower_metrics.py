"""`ktrace replay --follow --metrics-port`: the findings scraped over HTTP from a running
follower while its local log grows — the same as the commands answer from its database — and
the example alerting rules of compose/prometheus/ checked by promtool on those very scrapes."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.follower import rest_of, start_follower, wait_for_line
from tests.replayer_data import recorded_records
from tests.report_data import ktrace
from transports.locallog.sink import LocalLogSink

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "compose" / "prometheus"
#: the first part of the recording: the minutes of the rule tests it stands for, then the rest
FIRST, FIRST_MINUTES, MINUTES = 200, 10, 30

Series = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def series(text: str) -> Series:
    """(name, labels) → value of every sample of a scrape."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def scrape(url: str) -> tuple[str, str]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.headers["Content-Type"], response.read().decode()


def metrics_url(lines) -> str:
    """The follower says where it serves its metrics before it first catches up."""
    line = lines.get(timeout=120).strip()
    found = re.fullmatch(r"metrics: (http://127\.0\.0\.1:\d+/metrics)", line)
    assert found, line
    return found.group(1)


def of(scraped: Series, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {labels: value for (n, labels), value in scraped.items() if n == name}


@pytest.fixture(scope="module")
def scrapes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Series, Series, str]:
    """A follower with --metrics-port 0 scraped after the first part of the recording and
    again after the rest was appended; and its database."""
    folder = tmp_path_factory.mktemp("follow")
    records = recorded_records()
    log, path = folder / "log", str(folder / "f.duckdb")
    sink = LocalLogSink(str(log))
    for topic, record in records[:FIRST]:
        sink.send(topic, record)
    sink.flush()
    follower, lines = start_follower(log, path, "--metrics-port", "0", "--metrics-every", "0")
    try:
        url = metrics_url(lines)
        wait_for_line(lines, f"caught up: {FIRST} records loaded")
        content_type, first = scrape(url)
        assert content_type.startswith("text/plain; version=0.0.4")
        for topic, record in records[FIRST:]:
            sink.send(topic, record)
        sink.flush()
        wait_for_line(lines, f"caught up: {len(records)} records loaded")
        _, second = scrape(url)
    finally:
        follower.send_signal(signal.SIGINT)
        follower.wait(timeout=60)
        follower.stdout.close()
        sink.close()
    said = rest_of(lines)
    assert follower.returncode == 0, said
    return series(first), series(second), path


def test_the_metrics_grow_with_the_recording(scrapes):
    first, second, _ = scrapes
    loaded = "ktrace_follower_records_loaded_total"
    assert of(first, loaded) == {(): FIRST} and of(second, loaded) == {(): 510}
    assert sum(of(first, "ktrace_stuck_objects").values()) < \
        sum(of(second, "ktrace_stuck_objects").values())
    assert of(first, "ktrace_rollout_exposed_seconds") == {}
    assert of(second, "ktrace_follower_lag_seconds")[()] > 0


def test_stuck_objects_are_what_ktrace_stuck_says(scrapes):
    _, second, path = scrapes
    judged = Counter((r["cluster"], r["namespace"] or "", r["kind"], r["problem"],
                      r["top_cause"])
                     for r in json.loads(ktrace("stuck", "--db", path, "-o", "json")))
    exported = {tuple(dict(labels).get(k, "") for k in
                      ("cluster", "namespace", "kind", "problem", "cause")): value
                for labels, value in of(second, "ktrace_stuck_objects").items()}
    assert exported == judged and judged[("capture", "hold", "Pod", "terminating",
                                          "finalizers")] == 1


def test_rollout_exposure_is_what_ktrace_races_says(scrapes):
    _, second, path = scrapes
    raced = [r for r in json.loads(ktrace("races", "--db", path, "-o", "json"))["races"]
             if r["verdict"] == "stopped_before_endpoint_off"]
    race_web = (("cluster", "capture"), ("deployment", "web"), ("namespace", "race"))
    exposed = of(second, "ktrace_rollout_exposed_seconds")
    assert exposed[race_web] == pytest.approx(max(r["exposed_s"] for r in raced))
    assert of(second, "ktrace_rollout_raced_pods")[race_web] == len(raced)
    assert {dict(k)["namespace"]: v for k, v in exposed.items() if v == 0} == \
        {"graceful": 0, "fg": 0}


def test_unseen_stretches_are_what_ktrace_info_says(scrapes):
    _, second, path = scrapes
    unseen = json.loads(ktrace("info", "--db", path, "-o", "json"))["info_unseen"]
    assert {dict(k)["type"]: v for k, v in of(second, "ktrace_unseen_stretches").items()} == \
        {r["type"]: r["stretches"] for r in unseen}


def test_namespaces_and_deployments_past_the_top_are_folded_into_other(demo_db: str):
    from replayer.follower_metrics import read_findings
    whole, cut = read_findings(demo_db), read_findings(demo_db, top_n=2)
    assert {k[1] for k in whole.stuck} == {"fg", "hold", "lost", ""}
    assert {k[1] for k in cut.stuck} == {"fg", "hold", "other"}  # the two with most stuck
    assert sum(cut.stuck.values()) == sum(whole.stuck.values()) and cut.folded_namespaces == 2
    # web-67f56bfc69-nb8v8: stopped 14:35:27.349629, its endpoint left the slice 14:35:28.919277
    assert cut.rollout_exposed == {("capture", "race", "web"): pytest.approx(1.569648),
                                   ("capture", "fg", "fg"): 0.0,
                                   ("capture", "other", "other"): 0.0}
    assert cut.rollout_terminated[("capture", "other", "other")] == 2  # graceful/web's
    assert cut.folded_deployments == 1


def test_findings_are_refreshed_at_most_every_interval_while_records_come(
        demo_db: str, monkeypatch: pytest.MonkeyPatch):
    """Each refresh runs the analyses between two catch-ups: at 2k events/s a follower ends
    catch-ups every second or so, and refreshing after each would hold every one up."""
    from prometheus_client import generate_latest
    from replayer import follower_metrics
    refreshes = []
    read_findings = follower_metrics.read_findings
    monkeypatch.setattr(follower_metrics, "read_findings",
                        lambda *a, **k: refreshes.append(a) or read_findings(*a, **k))

    hourly = follower_metrics.FollowerMetrics(demo_db, every_s=3600)
    for loaded in (10, 20, 30):
        hourly.caught_up(loaded)
    assert len(refreshes) == 1  # the first; the next hour's wait
    scraped = series(generate_latest(hourly.registry).decode())
    assert of(scraped, "ktrace_follower_records_loaded_total") == {(): 30}  # counted still
    assert sum(of(scraped, "ktrace_stuck_objects").values()) > 0

    every = follower_metrics.FollowerMetrics(demo_db, every_s=0)
    for loaded in (10, 10, 20, 20):
        every.caught_up(loaded)
    assert len(refreshes) == 3  # at 10 and at 20: nothing new, nothing refreshed


def test_metrics_every_needs_metrics_port(tmp_path: Path):
    from click.testing import CliRunner
    from ktrace.cli import cli
    result = CliRunner().invoke(cli, ["replay", str(tmp_path), "--db", str(tmp_path / "x.db"),
                                      "--follow", "--metrics-every", "5"])
    assert result.exit_code == 2
    assert "--metrics-every sets how often --metrics-port's findings are refreshed: add " \
           "--metrics-port" in result.output


def test_metrics_port_needs_follow(tmp_path: Path):
    from click.testing import CliRunner
    from ktrace.cli import cli
    result = CliRunner().invoke(cli, ["replay", str(tmp_path), "--db", str(tmp_path / "x.db"),
                                      "--metrics-port", "9464"])
    assert result.exit_code == 2 and "add --follow" in result.output


# ---- the example alerting rules --------------------------------------------------------------

def promtool() -> str:
    """compose/prometheus/install.sh's promtool (built once, cached under ~/.cache/ktrace)."""
    out = subprocess.run([str(RULES / "install.sh")], check=True, capture_output=True,
                         text=True).stdout
    return out.strip().splitlines()[-1]


def value_text(value: float | None) -> str:
    if value is None:
        return "_"
    return repr(int(value)) if value == int(value) else repr(value)


def input_series(first: Series, second: Series) -> list[dict[str, str]]:
    """Each scraped series as promtool input: the first scrape's value for the first
    minutes, the second's after (``_``: not exported then)."""
    rows = []
    for name, labels in sorted(first.keys() | second.keys()):
        shown = ",".join(f'{k}="{v}"' for k, v in labels if v)
        values = ([value_text(first.get((name, labels)))] * FIRST_MINUTES
                  + [value_text(second.get((name, labels)))] * (MINUTES - FIRST_MINUTES))
        rows.append({"series": f"{name}{{{shown}}}", "values": " ".join(values)})
    return rows


def test_the_alerting_rules_pass_promtool_on_what_the_follower_exported(scrapes,
                                                                       tmp_path: Path):
    first, second, _ = scrapes
    tool = promtool()
    check = subprocess.run([tool, "check", "rules", str(RULES / "alerts.yml")],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    tests = yaml.safe_load((RULES / "alerts_test.yml").read_text())
    assert tests["tests"][0]["input_series"] == []  # filled here, from the scrapes
    tests["rule_files"] = [str(RULES / "alerts.yml")]
    tests["tests"][0]["input_series"] = input_series(first, second)
    filled = tmp_path / "alerts_test.yml"
    filled.write_text(yaml.safe_dump(tests, sort_keys=False))
    run = subprocess.run([tool, "test", "rules", str(filled)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
