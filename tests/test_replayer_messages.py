"""The SQL parsers of Kubernetes messages (sql/scheduling_reasons.sql, …) against a corpus of real
messages from public issue threads and the Kubernetes sources, 1.13–1.37
(tests/data/public/messages.jsonl, provenance in tests/data/public/SOURCES.md). The expected
facts there were written from the messages, not from ktrace."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from replayer import db

CORPUS = Path(__file__).parent / "data" / "public" / "messages.jsonl"
LINES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]
#: the corpus's names for the scheduler's reasons → ktrace's categories
CATEGORIES = {
    "untolerated taint": "untolerated_taint", "unschedulable": "node_unschedulable",
    "node affinity/selector mismatch": "node_selector_mismatch",
    "unbound immediate PersistentVolumeClaims": "unbound_pvc",
    "Insufficient cpu": "insufficient_cpu", "Insufficient memory": "insufficient_memory",
    "Too many pods": "insufficient_pods", "pod affinity": "pod_affinity",
    "pod anti-affinity": "pod_affinity", "pod affinity/anti-affinity": "pod_affinity",
    "volume node affinity conflict": "volume_node_affinity", "no free ports": "host_ports",
    "volume count limit": "volume_limits", "topology spread": "topology_spread",
    "Insufficient ephemeral-storage": "insufficient_ephemeral-storage",
    "existing pods anti-affinity": "pod_affinity",
}


def scheduling(line: dict) -> bool:
    """kube-scheduler's messages (other schedulers word theirs differently)."""
    return line["reason"] == "FailedScheduling" and line["component"] == "default-scheduler"


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    return db.open_db(str(tmp_path_factory.mktemp("msg") / "m.duckdb"))


@pytest.mark.parametrize("line", [x for x in LINES if scheduling(x)],
                         ids=lambda x: x["message"][:60])
def test_failed_scheduling_reasons(con, line: dict):
    parsed = con.execute("SELECT scheduling_reasons(?)", [line["message"]]).fetchone()[0]
    expected = line["expected"]
    if expected.get("nodes_total") is not None:
        assert parsed["nodes_total"] == expected["nodes_total"]
    want: Counter = Counter()
    for name, count in (expected.get("reasons") or {}).items():
        want[CATEGORIES[name]] += count or 0  # None: the message gives no count
    got: Counter = Counter()
    for reason in parsed["reasons"]:
        if reason["category"] != "preemption":
            got[reason["category"]] += reason["count"] or 0
    assert got == want, parsed


@pytest.mark.parametrize("line", [x for x in LINES if "pull_s" in x["expected"]],
                         ids=lambda x: x["message"][:60])
def test_pull_time(con, line: dict):
    got = con.execute("SELECT pulled_seconds(?)", [line["message"]]).fetchone()[0]
    assert got == pytest.approx(line["expected"]["pull_s"])


def test_already_present_has_no_pull_time(con):
    assert con.execute("SELECT pulled_seconds('Container image \"nginx\" already present on "
                       "machine')").fetchone() == (None,)


@pytest.mark.parametrize("line", [x for x in LINES if x["reason"] in ("Failed", "BackOff")],
                         ids=lambda x: x["message"][:60])
def test_kubelet_failures_name_their_cause(con, line: dict):
    message = line["message"]
    want = ("crash_loop" if message.startswith("Back-off restarting")
            else "image_pull" if "image" in message.lower() or "ImagePull" in message
            else "container_config")
    got = con.execute("SELECT kubelet_failure(?, ?)", [line["reason"], message]).fetchone()[0]
    assert got == want


@pytest.mark.parametrize("line", [x for x in LINES if "image_pull_sub" in x["expected"]],
                         ids=lambda x: x["message"][:60])
def test_image_pull_sub_reasons(con, line: dict):
    """The sub-reason read from the kubelet's reason and the registry's message
    (sql/image_pull_patterns.sql)."""
    got = con.execute("SELECT image_pull_sub(?, ?)", [line["reason"], line["message"]]).fetchone()[0]
    assert got == line["expected"]["image_pull_sub"]


@pytest.mark.parametrize("line", [x for x in LINES if "eviction_resource" in x["expected"]],
                         ids=lambda x: x["message"][:60])
def test_eviction_resource(con, line: dict):
    got = con.execute("SELECT eviction_resource(?), resource_pressure(eviction_resource(?))",
                      [line["message"], line["message"]]).fetchone()
    assert got == (line["expected"]["eviction_resource"], line["expected"]["pressure"])


#: the messages' `forbidden_by` (what an expert reads) → failed_create_sub's name; the
#: others (a transient error, a webhook whose reason was dropped) name no refusal
FORBIDDEN_BY = {"quota": "quota", "limitrange": "limit_range", "podsecurity": "pod_security"}


@pytest.mark.parametrize("line", [x for x in LINES if "forbidden_by" in x["expected"]],
                         ids=lambda x: x["message"][:60])
def test_failed_create_sub_reasons(con, line: dict):
    """What refused a controller's pod, from the admission error its FailedCreate quotes."""
    assert con.execute("SELECT failed_create_sub(?)", [line["message"]]).fetchone()[0] == \
        FORBIDDEN_BY.get(line["expected"]["forbidden_by"])


@pytest.mark.parametrize("line", [x for x in LINES if "sandbox_sub" in x["expected"]],
                         ids=lambda x: x["message"][:60])
def test_sandbox_sub_reasons(con, line: dict):
    assert con.execute("SELECT sandbox_sub(?)", [line["message"]]).fetchone()[0] == \
        line["expected"]["sandbox_sub"]
