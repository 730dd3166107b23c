"""`ktrace serve` in a real headless Chromium beside a real follower (`replay --follow` on
a local log that grows during the test): the page loads, a finding opens its lane and its
evidence, and new data appears without a reload."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from ktrace.cli import cli
from replayer import db
from tests.follower import lines_of, start_follower, wait_for_line
from tests.infra.browser import offline_chromium, requested_urls
from tests.replayer_data import recorded_records
from tests.report_data import query
from transports.locallog.sink import LocalLogSink

ROOT = Path(__file__).resolve().parents[1]
#: The first part of the kwok scenarios recording: its raced rollout, before the stuck pods began.
FIRST_PART_S = 20


def start_server(path: str, *args: str, ignore_sigint: bool = False) -> tuple[subprocess.Popen, str]:
    """`ktrace serve --db PATH --port 0` as a process, and the URL it printed; with
    ``ignore_sigint`` it starts with SIGINT ignored, as `cmd &` in a script starts it."""
    server = subprocess.Popen(
        [sys.executable, "-c", "from ktrace.cli import main; main()", "serve", "--db", path,
         "--port", "0", "--poll", "0.5", *args],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None)
    line = lines_of(server.stderr).get(timeout=60)
    assert line.startswith("serving "), line
    return server, line.split(" at ", 1)[1].split()[0]


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # fail, but leave no server behind
        process.kill()
        process.communicate()
        raise


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    """(browser, url, database, sink, follower's lines, the records still to send)."""
    folder = tmp_path_factory.mktemp("serve")
    records = sorted(recorded_records(), key=lambda r: r[1]["receivedAt"])
    cut = records[0][1]["receivedAt"] + FIRST_PART_S * 1_000_000
    first = [r for r in records if r[1]["receivedAt"] < cut]
    sink, path = LocalLogSink(str(folder / "log")), str(folder / "live.duckdb")
    for topic, record in first:
        sink.send(topic, record)
    sink.flush()
    follower, lines = start_follower(folder / "log", path)
    server = None
    try:
        wait_for_line(lines, f"caught up: {len(first)} records loaded")
        server, url = start_server(path)
        with offline_chromium(loopback=True) as browser:
            yield browser, url, path, sink, lines, records[len(first):]
    finally:
        if server:
            stop(server)
        stop(follower)
        sink.close()


def test_the_page_loads_from_the_server_alone(served):
    browser, url, path, *_ = served
    requested_urls(browser)
    browser.get(url)
    records = query(Path(path), "SELECT count(*) FROM raw_events")[0][0]
    assert f"{records} records" in browser.find_element(By.TAG_NAME, "header").text
    assert browser.find_element(By.ID, "live").is_displayed()
    WebDriverWait(browser, 10).until(lambda b: any(u.endswith("/state.json")
                                                   for u in requested_urls(b)))
    assert all(u.startswith(url) for u in requested_urls(browser))


def test_a_finding_opens_its_lane_and_its_evidence(served):
    browser, url, path, *_ = served
    browser.get(url)
    finding = browser.find_element(By.CSS_SELECTOR, "#findings tr.finding a[href^='#lane-']")
    lane_id = finding.get_attribute("href").split("#", 1)[1]
    finding.click()
    lane = browser.find_element(By.ID, lane_id)
    assert lane.is_displayed() and browser.execute_script("return location.hash") == f"#{lane_id}"
    button = finding.find_element(By.XPATH, "ancestor::tr").find_element(By.CSS_SELECTOR, "button.ev")
    button.click()
    panel = browser.find_element(By.ID, "details")
    assert panel.is_displayed() and panel.get_attribute("data-ev") == button.get_attribute("data-ev")
    name = query(Path(path), "SELECT name FROM raw_events WHERE event_id = "
                             f"{int(button.get_attribute('data-ev'))}")[0][0]
    assert name in browser.find_element(By.ID, "details-title").text


def test_new_data_appears_without_a_reload(served):
    browser, url, path, sink, lines, rest = served
    browser.get(url)
    browser.execute_script("window.sameDocument = true")
    before = {e.get_attribute("data-pod") for e in browser.find_elements(By.CSS_SELECTOR, ".lane")}
    stuck_before = browser.find_elements(By.CSS_SELECTOR, "tr.finding-stuck")
    for topic, record in rest:
        sink.send(topic, record)
    sink.flush()
    wait_for_line(lines, "caught up: 510 records loaded")
    WebDriverWait(browser, 60).until(
        lambda b: "510 records" in b.find_element(By.TAG_NAME, "header").text)
    assert browser.execute_script("return window.sameDocument === true")
    after = {e.get_attribute("data-pod") for e in browser.find_elements(By.CSS_SELECTOR, ".lane")}
    assert before < after
    stuck = query(Path(path), "SELECT namespace || '/' || name FROM problems WHERE kind = 'Pod'")
    assert stuck_before == [] and stuck
    shown = browser.find_element(By.ID, "findings").text
    assert all(pod in shown for (pod,) in stuck)


def test_it_is_read_only_and_answers_only_local_hosts(served):
    _, url, *_ = served
    post = urllib.request.Request(url, data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(post, timeout=10)
    assert refused.value.code == 501
    rebound = urllib.request.Request(url, headers={"Host": "attacker.example"})
    with pytest.raises(urllib.error.HTTPError) as forbidden:
        urllib.request.urlopen(rebound, timeout=10)
    assert forbidden.value.code == 403


def test_a_missing_database_is_one_error_line(tmp_path: Path):
    result = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "none.duckdb"),
                                      "--port", "0"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: no database at ") and result.output.count("\n") == 1


def test_a_database_without_records_yet_answers_503_and_retries(tmp_path: Path):
    """A follower's first catch-up has not committed: the page says so and reloads itself."""
    path = str(tmp_path / "empty.duckdb")
    db.open_db(path).close()
    server, url = start_server(path)
    try:
        with pytest.raises(urllib.error.HTTPError) as early:
            urllib.request.urlopen(url, timeout=60)
        assert early.value.code == 503 and early.value.headers["Refresh"] == "1"
        assert "holds no records yet" in early.value.read().decode()
    finally:
        stop(server)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_stop_it_cleanly(tmp_path: Path, signum: int):
    """As a container's PID 1 it gets SIGTERM, which it would otherwise ignore; started in
    the background of a shell without job control it inherits SIGINT ignored."""
    path = str(tmp_path / "empty.duckdb")
    db.open_db(path).close()
    server, _ = start_server(path, ignore_sigint=True)
    server.send_signal(signum)
    try:
        _, stderr = server.communicate(timeout=30)
    finally:
        server.kill()  # nothing left behind if it did not stop
    assert server.returncode == 0, stderr
