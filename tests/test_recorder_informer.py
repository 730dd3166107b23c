"""The informer's loop on streams recorded from the real control plane (tests/data/recorder):
list → watch → reconnect → relist on 410, malformed lines, dropped connections."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from recorder import informer as inf
from recorder.informer import Informer, InformerError, InformerSettings
from recorder.kube.catalogue import Target
from recorder.kube.client import ApiError, ConnectionLost
from recorder.writer import Writer
from schemas.redaction import REDACTED, Redactor
from tests.recorder_data import GO_TEXT, go_spelled, read_back, with_go_text
from transports.locallog.sink import LocalLogSink

DATA = Path(__file__).parent / "data" / "recorder"
PODS = Target("pods", "", "v1", "Pod", True, "capture")
FAST = InformerSettings(backoff_initial_s=0, backoff_max_s=0)


def recorded_lines(name: str) -> list[bytes]:
    return [line for line in (DATA / name).read_bytes().split(b"\n") if line]


def recorded_list(name: str) -> dict:
    return orjson.loads((DATA / name).read_bytes())


class Stream:
    def __init__(self, lines: list[bytes | Exception]) -> None:
        self._lines = lines

    def lines(self) -> Iterator[bytes]:
        for line in self._lines:
            if isinstance(line, Exception):
                raise line
            yield line

    def close(self) -> None:
        pass


class ScriptedApi:
    """Answers with recorded responses in order; stops the informer when the script ends."""

    def __init__(self, stop: threading.Event, lists: list, watches: list) -> None:
        self.stop, self.lists, self.watches = stop, list(lists), list(watches)
        self.list_calls: list[str | None] = []
        self.watch_calls: list[str] = []

    def list_page(self, target: Target, *, limit: int, cont: str | None) -> dict:
        self.list_calls.append(cont)
        answer = self.lists.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return orjson.loads(orjson.dumps(answer))  # a fresh copy, as from the wire

    def open_watch(self, target: Target, *, resource_version: str, timeout_s: int) -> Stream:
        self.watch_calls.append(resource_version)
        if not self.watches:
            self.stop.set()
            return Stream([])
        answer = self.watches.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return Stream(answer)


def run(lists: list, watches: list, **kwargs) -> tuple[list[inf.Item], ScriptedApi]:
    """Items until the script ran out (the last watch, opened then, is left out)."""
    stop = threading.Event()
    api = ScriptedApi(stop, lists, watches)
    informer = Informer(api, PODS, stop=stop, settings=FAST, **kwargs)
    items = list(informer.items())
    assert isinstance(items[-1], inf.Watching)
    return items[:-1], api


def rv_of(line: bytes) -> str:
    return orjson.loads(line)["object"]["metadata"]["resourceVersion"]


PODS_WATCH = "deployment/pods.watch.jsonl"


def test_list_then_watch_in_server_order() -> None:
    pages = recorded_list("deployment/pods.pages.json")
    lines = recorded_lines(PODS_WATCH)
    items, api = run(pages, [lines])
    assert api.list_calls == [None, pages[0]["metadata"]["continue"]]
    started, *listed, synced, watching = items[:len(items) - len(lines)]
    assert isinstance(started, inf.ListStarted) and started.relist_cause is None
    assert started.resource_version == pages[0]["metadata"]["resourceVersion"]
    names = [p["metadata"]["name"] for page in pages for p in page["items"]]
    assert [i.obj["metadata"]["name"] for i in listed] == names and len(names) == 3
    assert all(i.obj["kind"] == "Pod" and i.obj["apiVersion"] == "v1" for i in listed)
    assert isinstance(synced, inf.Synced) and synced.count == 3
    assert watching == inf.Watching(started.resource_version)
    events = items[len(items) - len(lines):]
    assert [(e.type, e.resource_version) for e in events] == [
        (orjson.loads(line)["type"], rv_of(line)) for line in lines]
    # the stream ended (server timeout): the next watch starts after the last event
    assert api.watch_calls == [started.resource_version, rv_of(lines[-1])]


def test_bookmarks_advance_the_resume_point() -> None:
    lines = recorded_lines("deployment/leases.watch.jsonl")
    bookmark = next(orjson.loads(l) for l in lines if b'"BOOKMARK"' in l)
    upto = next(i for i, l in enumerate(lines) if b'"BOOKMARK"' in l) + 1
    items, api = run([], [lines[:upto]], start_rv="1")
    assert items[-1] == inf.Bookmark(bookmark["object"]["metadata"]["resourceVersion"], items[-1].received_at)
    assert api.watch_calls == ["1", bookmark["object"]["metadata"]["resourceVersion"]]


def test_410_error_event_relists_and_reports_the_cause() -> None:
    pages = recorded_list("deployment/pods.pages.json")
    gone = recorded_lines("gone/pods.watch.jsonl")
    items, api = run(pages, [gone], start_rv="287")
    relist = items[1]
    assert isinstance(relist, inf.Relist) and relist.from_rv == "287"
    assert "too old resource version" in relist.cause
    started = items[2]
    assert isinstance(started, inf.ListStarted) and started.relist_cause == relist.cause
    assert isinstance(items[-1], inf.Synced)
    assert api.watch_calls == ["287", pages[0]["metadata"]["resourceVersion"]]


def test_http_410_on_the_watch_request_also_relists() -> None:
    pages = recorded_list("deployment/pods.pages.json")
    items, _ = run(pages, [ApiError(410, "too old resource version", "Expired")], start_rv="5")
    assert isinstance(items[0], inf.Relist) and isinstance(items[1], inf.ListStarted)


def recorded_objects(directory: Path, items: list[inf.Item]) -> list[dict]:
    """``items`` through a writer into a local log at ``directory``: its object records."""
    writer = Writer(LocalLogSink(str(directory)), cluster="c", session="s", topic_prefix="t",
                    redactor=Redactor())
    key = writer.add_watch(PODS, None).target.key
    for item in items:
        writer.handle(key, item)
    writer.sink.close()
    return [r for r in read_back(directory)["t.pods"] if r["marker"] is None]


def test_objects_in_the_servers_spelling_are_stored_alike_across_a_relist(tmp_path: Path) -> None:
    """Pods with ``&``, ``<``, ``>`` in their status and annotations (Go writes ``\\u0026``…) and
    a secret env value: watched (lean decode) up to the versions a relist then lists (parsed
    in full), then watched on. Attribution across the relist is that of the recorded stream;
    a listed object is stored as the same object watched, in the server's spelling, redacted."""
    recorded_pages = recorded_list("deployment/pods.pages.json")
    recorded_watch = [orjson.loads(line) for line in recorded_lines(PODS_WATCH)]
    listed_versions = {o["metadata"]["resourceVersion"] for p in recorded_pages for o in p["items"]}
    upto = max(i for i, doc in enumerate(recorded_watch)
               if doc["object"]["metadata"]["resourceVersion"] in listed_versions) + 1
    gone = recorded_lines("gone/pods.watch.jsonl")

    def relisted(pages: list[dict], watched: list[bytes], name: str) -> list[dict]:
        items, _ = run(pages, [[*watched[:upto], *gone], watched[upto:]], start_rv="290")
        assert sum(isinstance(i, inf.Relist) for i in items) == 1
        return recorded_objects(tmp_path / name, items)

    pages = [{**page, "items": [with_go_text(o) for o in page["items"]]} for page in recorded_pages]
    go = relisted(pages, [go_spelled({**doc, "object": with_go_text(doc["object"])})
                          for doc in recorded_watch], "go")
    recorded = relisted(recorded_pages, [orjson.dumps(doc) for doc in recorded_watch], "recorded")
    what = ("type", "uid", "resourceVersion", "component", "attribution")
    assert [[r[k] for k in what] for r in go] == [[r[k] for k in what] for r in recorded]
    assert len(go) == len(recorded_watch)  # the relist found every listed object unchanged

    items, _ = run(pages, [])  # a fresh session lists the same objects: stored as watched
    listed = {(r["uid"], r["resourceVersion"]): r["object"]
              for r in recorded_objects(tmp_path / "listed", items)}
    assert len(listed) == 3
    assert listed == {key: r["object"] for r in go if (key := (r["uid"], r["resourceVersion"])) in listed}
    for body in listed.values():
        assert go_spelled(GO_TEXT) in body  # the server's spelling, kept
        assert b"hunter2" not in body and REDACTED.encode() in body


def test_expired_continue_token_restarts_the_list() -> None:
    pages = recorded_list("deployment/pods.pages.json")
    expired = orjson.loads((DATA / "gone/pods.continue.json").read_bytes())
    error = ApiError(expired["status"], expired["message"], expired["reason"])
    items, api = run([pages[0], error, *pages], [])
    assert api.list_calls == [None, pages[0]["metadata"]["continue"], None, pages[0]["metadata"]["continue"]]
    starts = [i for i in items if isinstance(i, inf.ListStarted)]
    assert len(starts) == 2  # the writer starts its diff over with the second
    assert [i.count for i in items if isinstance(i, inf.Synced)] == [3]


def test_malformed_line_is_counted_and_the_watch_resumes_after_the_last_good_event(
        caplog: pytest.LogCaptureFixture) -> None:
    lines = recorded_lines(PODS_WATCH)
    broken = [*lines[:5], lines[5][: len(lines[5]) // 2], *lines[6:8]]
    items, api = run([], [broken, lines[5:8]], start_rv="1")
    problems = [i for i in items if isinstance(i, inf.Problem)]
    assert [p.what for p in problems] == ["malformed"]
    events = [i for i in items if isinstance(i, inf.WatchEvent)]
    # nothing recorded is lost and nothing after the bad line is skipped
    assert [e.resource_version for e in events] == [rv_of(l) for l in lines[:8]]
    assert api.watch_calls[:2] == ["1", rv_of(lines[4])]
    [error] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert error.getMessage().startswith("pods.core.capture: malformed watch line (")


@pytest.mark.parametrize("garbage", [b"not json", b'{"type":"ADDED"}', b'{"type":"ADDED","object":[]}',
                                     b'{"type":"WEIRD","object":{}}'])
def test_every_kind_of_garbage_is_a_problem_not_a_crash(garbage: bytes) -> None:
    lines = recorded_lines(PODS_WATCH)
    items, _ = run([], [[lines[0], garbage], lines[1:2]], start_rv="1")
    assert [type(i).__name__ for i in items] == ["Watching", "WatchEvent", "Problem", "Watching",
                                                  "WatchEvent"]


def test_dropped_connection_resumes_from_the_last_event() -> None:
    lines = recorded_lines(PODS_WATCH)
    items, api = run([], [[*lines[:3], ConnectionLost("reset")], ConnectionLost("refused"), lines[3:4]],
                     start_rv="1")
    assert [p.what for p in items if isinstance(p, inf.Problem)] == ["disconnect", "disconnect"]
    assert api.watch_calls[:3] == ["1", rv_of(lines[2]), rv_of(lines[2])]
    assert len([i for i in items if isinstance(i, inf.WatchEvent)]) == 4


def test_forbidden_before_the_first_list_is_fatal() -> None:
    with pytest.raises(InformerError, match="cannot list/watch pods: 403"):
        run([ApiError(403, 'pods is forbidden: User "x" cannot list resource "pods"', "Forbidden")], [])


def test_server_errors_are_retried() -> None:
    pages = recorded_list("deployment/pods.pages.json")
    items, _ = run([ApiError(503, "unavailable"), *pages], [])
    assert isinstance(items[0], inf.Problem) and items[0].what == "server_error"
    assert isinstance(items[1], inf.ListStarted)
