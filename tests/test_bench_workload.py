"""The bench workload's Events expire as on a real API server: an hour after their last write."""

from __future__ import annotations

import json
from pathlib import Path

from bench import workload

#: Past one hour of the workload's clock, so the first clones' Events expire.
LINES = 40_000


def test_events_are_deleted_an_hour_after_their_last_write_and_not_before(tmp_path: Path) -> None:
    path = workload.build(workload.cached(tmp_path, "w"), LINES)
    writes = 0  # the workload's clock: writes so far, one every LINE_INTERVAL_MS
    last_write: dict[str, tuple[int, dict]] = {}  # Event uid → (ms, object) of its last write
    expired: dict[str, tuple[int, int]] = {}  # Event uid → (its last write's ms, ms of the next write)
    pending: list[str] = []  # deleted since the last write
    event_rv = 0
    with path.open("rb") as fh:
        lines = [json.loads(line) for line in fh]
    assert len(lines) == LINES
    for line in lines:
        obj = line["object"]
        now = writes * workload.LINE_INTERVAL_MS
        if obj["kind"] == "Event" and line["type"] == "DELETED":
            uid = obj["metadata"]["uid"]
            written_at, written = last_write.pop(uid)
            assert int(obj["metadata"]["resourceVersion"]) > event_rv  # a revision of its own
            assert {**obj, "metadata": {**obj["metadata"], "resourceVersion": "-"}} == \
                {**written, "metadata": {**written["metadata"], "resourceVersion": "-"}}
            expired[uid] = (written_at, now)
            pending.append(uid)
        else:
            for uid in pending:
                assert now - expired[uid][0] >= workload.EVENT_TTL_MS  # not before the hour
                assert now - workload.LINE_INTERVAL_MS - expired[uid][0] < workload.EVENT_TTL_MS
            pending = []
            if obj["kind"] == "Event":
                last_write[obj["metadata"]["uid"]] = (now, obj)
            writes += 1
        if obj["kind"] == "Event":
            event_rv = int(obj["metadata"]["resourceVersion"])
    assert all(writes * workload.LINE_INTERVAL_MS - expired[uid][0] >= workload.EVENT_TTL_MS
               for uid in pending)  # deleted after the last write: due by the next one
    end = (writes - 1) * workload.LINE_INTERVAL_MS
    assert expired, "no Event outlived an hour of the workload's clock"
    assert all(end - at < workload.EVENT_TTL_MS for at, _ in last_write.values())
