"""The writer on streams recorded from the real control plane: records in order with gap-free
seq, attribution, redaction, relist diffs (GAP, INFERRED_DELETED, inferred MODIFIED/ADDED)."""

from __future__ import annotations

from collections import Counter
from importlib import metadata
from pathlib import Path

import orjson
import pytest

from recorder import informer as inf
from recorder import lean
from recorder.checkpoint import Checkpoint
from schemas.redaction import Redactor
from transports.locallog.sink import LocalLogSink
from recorder.writer import Writer
from tests.recorder_data import DATA, TARGETS, events, initial_list, lines, read_back


def new_writer(directory: Path, resources: list[str], checkpoints: dict | None = None) -> Writer:
    writer = Writer(LocalLogSink(str(directory)), cluster="test", session="s1", topic_prefix="t",
                    redactor=Redactor())
    for r in resources:
        writer.add_watch(TARGETS[r], (checkpoints or {}).get(r))
    return writer


def finish(writer: Writer, directory: Path) -> dict[str, list[dict]]:
    writer.end_session("test over")
    writer.sink.close()
    return read_back(directory)


def test_deployment_lifecycle_is_recorded_in_order_with_components(tmp_path: Path) -> None:
    writer = new_writer(tmp_path, list(TARGETS))
    writer.start_session("test")
    for resource, target in TARGETS.items():
        for item in [*initial_list(resource), *events(resource)]:
            writer.handle(target.key, item)
    topics = finish(writer, tmp_path)
    for resource in TARGETS:
        recs = topics[f"t.{resource}"]
        assert [r["seq"] for r in recs] == list(range(len(recs)))  # gap-free
        assert recs[0]["type"] == "SESSION_START" and recs[-1]["type"] == "SESSION_END"
        assert recs[1]["type"] == "SYNCED" and recs[1]["marker"]["cause"] == "initial list"
        seen = [(orjson.loads(l)["object"]["metadata"]["uid"], orjson.loads(l)["object"]["metadata"]["resourceVersion"])
                for l in lines(resource)]
        assert [(r["uid"], r["resourceVersion"]) for r in recs if r["marker"] is None] == seen
    pods = [r for r in topics["t.pods"] if r["marker"] is None]
    evidence = Counter((r["component"], r["attribution"].split(" ")[0]) for r in pods)
    assert evidence[("kube-scheduler", "binding:")] == 6
    assert evidence[("kube-controller-manager", "managedFields:kube-controller-manager:Update")] == 6
    assert evidence[("kube-apiserver", "deletionTimestamp")] == 6
    assert {r["component"] for r in pods if "status" in r["attribution"]} == {"kwok"}
    assert {r["component"] for r in pods if r["type"] == "DELETED"} == {"kwok"}
    assert {r["component"] for r in topics["t.replicasets"] if r["marker"] is None} == {"kube-controller-manager"}
    assert {r["component"] for r in topics["t.endpointslices"] if r["marker"] is None} == {"kube-controller-manager"}
    assert {r["component"] for r in topics["t.events"] if r["marker"] is None} == {
        "deployment-controller", "replicaset-controller", "default-scheduler"}
    stored = b"".join(r["object"] for rs in topics.values() for r in rs if r["object"])
    assert b"hunter2" not in stored and b"ktrace:redacted" in stored
    assert all(r["cluster"] == "test" and r["session"] == "s1" for rs in topics.values() for r in rs)


def pods_until(writer: Writer, count: int) -> list[inf.WatchEvent]:
    target = TARGETS["pods"]
    for item in initial_list("pods"):
        writer.handle(target.key, item)
    seen = events("pods")[:count]
    for item in seen:
        writer.handle(target.key, item)
    return seen


def relist(writer: Writer, items: list[dict], rv: str) -> None:
    key = TARGETS["pods"].key
    for item in [inf.Relist("410 Gone: too old resource version", writer.states[key].checkpoint.resource_version, 10),
                 inf.ListStarted(rv, "410 Gone: too old resource version", 11),
                 *(inf.Listed(o, 11) for o in items), inf.Synced(rv, len(items), 12)]:
        writer.handle(key, item)


def test_relist_records_only_what_differs(tmp_path: Path) -> None:
    """Known: two pods ready and a third just created; the relist (recorded when all three
    ran) finds the two unchanged and the third modified meanwhile."""
    pages = orjson.loads((DATA / "pods.pages.json").read_bytes())
    listed = [o for page in pages for o in page["items"]]
    writer = new_writer(tmp_path, ["pods"])
    seen = pods_until(writer, 7)
    last_rv = seen[-1].resource_version
    relist(writer, listed, pages[0]["metadata"]["resourceVersion"])
    recs = finish(writer, tmp_path)["t.pods"]
    tail = recs[recs.index(next(r for r in recs if r["type"] == "RELIST")):]
    assert [r["type"] for r in tail] == ["RELIST", "GAP", "MODIFIED", "SYNCED", "SESSION_END"]
    gap = tail[1]["marker"]
    assert gap["fromResourceVersion"] == last_rv and gap["toResourceVersion"] == pages[0]["metadata"]["resourceVersion"]
    assert gap["fromTime"] == seen[-1].received_at and gap["toTime"] == 11
    modified = tail[2]
    assert modified["inferred"] and modified["uid"] == lean.identity(seen[-1].obj)[2]
    assert tail[3]["marker"]["detail"] == "modified 1, unchanged 2" and tail[3]["marker"]["objectCount"] == 3


def test_relist_infers_additions(tmp_path: Path) -> None:
    pages = orjson.loads((DATA / "pods.pages.json").read_bytes())
    writer = new_writer(tmp_path, ["pods"])
    pods_until(writer, 6)  # the third pod's ADDED (line 7) was not seen
    relist(writer, [o for page in pages for o in page["items"]], pages[0]["metadata"]["resourceVersion"])
    recs = finish(writer, tmp_path)["t.pods"]
    added = [r for r in recs if r["type"] == "ADDED" and r["inferred"]]
    assert [r["uid"] for r in added] == [lean.identity(events("pods")[6].obj)[2]]


def test_relist_infers_deletions_from_the_last_known_state(tmp_path: Path) -> None:
    """Known: the end of the rollout minus the last three DELETED events; the relist (the
    namespace's real final state, empty) makes them INFERRED_DELETED."""
    writer = new_writer(tmp_path, ["pods"])
    seen = pods_until(writer, len(lines("pods")) - 4)
    alive = {lean.identity(e.obj)[2] for e in seen if e.type != "DELETED"} - {
        lean.identity(e.obj)[2] for e in seen if e.type == "DELETED"}
    relist(writer, [], "999")
    recs = finish(writer, tmp_path)["t.pods"]
    gone = [r for r in recs if r["type"] == "INFERRED_DELETED"]
    assert {r["uid"] for r in gone} == alive and len(alive) == 3
    assert all(r["inferred"] and r["object"] is None and r["name"] and r["namespace"] == "capture"
               for r in gone)
    assert writer.states[TARGETS["pods"].key].known == {}


def test_checkpoint_follows_what_was_handled(tmp_path: Path) -> None:
    writer = new_writer(tmp_path, ["pods"])
    seen = pods_until(writer, 10)
    cp = writer.states[TARGETS["pods"].key].checkpoint
    assert cp.resource_version == seen[-1].resource_version
    assert set(cp.known) == {lean.identity(e.obj)[2] for e in seen}
    writer.handle(TARGETS["pods"].key, inf.Bookmark("12345", 99))
    assert cp.resource_version == "12345" and cp.last_seen_at == 99
    writer.sink.close()


def test_resumed_session_says_so(tmp_path: Path) -> None:
    writer = new_writer(tmp_path, ["pods"], {"pods": Checkpoint("300", 5, {})})
    writer.start_session("x")
    start = finish(writer, tmp_path)["t.pods"][0]
    assert start["marker"]["cause"] == "resume from checkpoint"
    assert start["marker"]["fromResourceVersion"] == "300"


def test_session_markers_carry_the_installed_version(tmp_path: Path) -> None:
    writer = new_writer(tmp_path, ["pods"])
    writer.start_session("x")
    start, end = finish(writer, tmp_path)["t.pods"]
    installed = metadata.version("ktrace")
    assert start["marker"]["recorderVersion"] == end["marker"]["recorderVersion"] == installed


@pytest.mark.parametrize("resource", ["pods", "deployments"])
def test_no_redact_keeps_values(tmp_path: Path, resource: str) -> None:
    writer = Writer(LocalLogSink(str(tmp_path)), cluster="c", session="s", topic_prefix="t",
                    redactor=Redactor(enabled=False))
    writer.add_watch(TARGETS[resource], None)
    for item in events(resource)[:2]:
        writer.handle(TARGETS[resource].key, item)
    recs = finish(writer, tmp_path)[f"t.{resource}"]
    assert b"hunter2" in b"".join(r["object"] for r in recs if r["object"])


def test_objects_too_large_for_the_sink_are_truncated_never_dropped(tmp_path: Path) -> None:
    writer = new_writer(tmp_path, ["pods"])
    writer.sink.max_record_bytes = 3000  # recorded pods are 3–5 kB of JSON
    for item in events("pods"):
        writer.handle(TARGETS["pods"].key, item)
    recs = [r for r in finish(writer, tmp_path)["t.pods"] if r["marker"] is None]
    assert len(recs) == len(lines("pods"))
    truncated = [r for r in recs if r["truncated"]]
    assert truncated and all(r["objectSize"] > len(r["object"] or b"") for r in truncated)
    assert all(b"managedFields" not in (r["object"] or b"") for r in truncated)
    assert writer.metrics.truncated.labels("pods")._value.get() == len(truncated)


def test_handled_problems_are_counted(tmp_path: Path) -> None:
    writer = new_writer(tmp_path, ["pods"])
    for what in ("malformed", "malformed", "disconnect"):
        writer.handle(TARGETS["pods"].key, inf.Problem(what, "detail"))
    counter = writer.metrics.watch_problems
    assert counter.labels("pods", "malformed")._value.get() == 2
    assert counter.labels("pods", "disconnect")._value.get() == 1
    assert writer.records_written == 0  # problems are metrics and logs, not records
    writer.sink.close()
