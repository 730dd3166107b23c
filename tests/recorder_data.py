"""Watch streams recorded from the real control plane (tests/data/recorder/deployment/) as the
writer takes them, a local log read back as records per topic, and objects in the API
server's spelling of ``&``, ``<``, ``>``: shared by the recorder's tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

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


#: Text the API server spells unlike orjson: Go's encoder writes ``&``, ``<``, ``>`` as
#: ``\u0026``, ``\u003c``, ``\u003e`` (non-ASCII raw, as orjson does).
GO_TEXT = "a&b <c> ü"


def go_spelled(doc: Any) -> bytes:
    """``doc`` in the API server's spelling (orjson's with Go's three escapes)."""
    return (orjson.dumps(doc).replace(b"&", b"\\u0026").replace(b"<", b"\\u003c")
            .replace(b">", b"\\u003e"))


def with_go_text(obj: dict) -> dict:
    """A copy of ``obj`` with ``GO_TEXT`` where the recorder looks: an annotation (its key
    too), every env value at the default redaction paths, and the status attribution digests."""
    obj = copy.deepcopy(obj)
    metadata = obj.setdefault("metadata", {})
    metadata["annotations"] = {**(metadata.get("annotations") or {}), "example.com/q&a": GO_TEXT}
    spec = obj.get("spec") or {}
    for pod_spec in (spec, (spec.get("template") or {}).get("spec") or {}):
        for container in pod_spec.get("containers") or ():
            for var in container.get("env") or ():
                if isinstance(var.get("value"), str):
                    var["value"] += GO_TEXT
    if isinstance(obj.get("status"), dict):
        obj["status"]["message"] = GO_TEXT
    return obj
