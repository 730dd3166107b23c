"""Watch streams recorded from the real control plane (tests/data/recorder/deployment/) as the
writer takes them, and a local log read back as records per topic: shared by the writer's
and the checkpointer's tests."""

from __future__ import annotations

from pathlib import Path

import orjson

from recorder import informer as inf
from recorder.kube.catalogue import Target
from transports.locallog.source import LocalLogSource

DATA = Path(__file__).parent / "data" / "recorder" / "deployment"
TARGETS = {
    "pods": Target("pods", "", "v1", "Pod", True, "capture"),
    "replicasets": Target("replicasets", "apps", "v1", "ReplicaSet", True, "capture"),
    "deployments": Target("deployments", "apps", "v1", "Deployment", True, "capture"),
    "endpointslices": Target("endpointslices", "discovery.k8s.io", "v1", "EndpointSlice", True, "capture"),
    "events": Target("events", "events.k8s.io", "v1", "Event", True, "capture"),
}


def lines(resource: str) -> list[bytes]:
    return [l for l in (DATA / f"{resource}.watch.jsonl").read_bytes().split(b"\n") if l]


def events(resource: str) -> list[inf.WatchEvent]:
    return [inf.parse_event(l, resource) for l in lines(resource)]


def initial_list(resource: str) -> list[inf.Item]:
    page = orjson.loads((DATA / f"{resource}.list.json").read_bytes())
    rv = page["metadata"]["resourceVersion"]
    return [inf.ListStarted(rv, None, 1), *(inf.Listed(o, 1) for o in page["items"]),
            inf.Synced(rv, len(page["items"]), 2)]


def read_back(directory: Path) -> dict[str, list[dict]]:
    source = LocalLogSource(str(directory))
    try:
        out: dict[str, list[dict]] = {}
        for d in source.read(source.topics("t")):
            out.setdefault(d.topic, []).append(d.record)
        return out
    finally:
        source.close()
