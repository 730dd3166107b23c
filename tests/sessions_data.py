"""Recorder sessions as small recorded streams, written as the recorder writes them
(SESSION_START with its watch keys on every topic at seq 0, objects, SESSION_END or a
crash's last BOOKMARK), interleaved by receive time into one local log and loaded: shared
by the session and the report tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import orjson

from transports.locallog.sink import LocalLogSink
from replayer import db
from replayer.replay import replay
from transports.locallog.source import LocalLogSource
from schemas import records
from tests.samples import BASE_TIME_US, pod

SECOND_US = 1_000_000
KINDS = {"pods": ("Pod", "core"), "events": ("Event", "events.k8s.io"), "nodes": ("Node", "core"),
         "deployments": ("Deployment", "apps"), "replicasets": ("ReplicaSet", "apps"),
         "endpointslices": ("EndpointSlice", "discovery.k8s.io")}
RESOURCES = {kind: resource for resource, (kind, _) in KINDS.items()}


@dataclass
class Session:
    """One recorder process: what it watches (resource → namespaces, () = all), when."""

    name: str
    start_s: float
    end_s: float
    watches: dict[str, tuple[str, ...]]
    ended: bool = True
    objects: list[tuple[float, str, dict]] = field(default_factory=list)  # (at, type, object)
    seq: dict[str, int] = field(default_factory=dict)
    cluster: str = "test"

    def records(self) -> list[tuple[int, str, dict]]:
        out = [self._marker(resource, "SESSION_START", self.start_s) for resource in self.watches]
        out += [self._object(at, event_type, obj) for at, event_type, obj in self.objects]
        if self.ended:
            out += [self._marker(resource, "SESSION_END", self.end_s) for resource in self.watches]
        else:  # a crash: its last sign of life is a bookmark marker
            out += [self._marker(resource, "BOOKMARK", self.end_s) for resource in self.watches]
        return out

    def _next(self, resource: str) -> int:
        seq = self.seq.get(resource, 0)
        self.seq[resource] = seq + 1
        return seq

    def _marker(self, resource: str, event_type: str, at_s: float) -> tuple[int, str, dict]:
        kind, group = KINDS[resource]
        keys = [f"{resource}.{group}.{ns}" for ns in self.watches[resource] or ("_all",)]
        at = at_us(at_s)
        return at, resource, records.marker_record(
            cluster=self.cluster, session=self.name, seq=self._next(resource),
            event_type=event_type, resource=resource, api_version="v1", kind=kind, received_at=at,
            marker={"kinds": keys if event_type == "SESSION_START" else []})

    def _object(self, at_s: float, event_type: str, obj: dict) -> tuple[int, str, dict]:
        at, resource = at_us(at_s), RESOURCES[obj["kind"]]
        return at, resource, records.object_record(
            cluster=self.cluster, session=self.name, seq=self._next(resource),
            event_type=event_type, resource=resource, obj=obj, object_json=orjson.dumps(obj),
            received_at=at, component="kubelet", attribution="managedFields:kubelet:Update:status")


def at_us(seconds: float) -> int:
    return BASE_TIME_US + int(seconds * SECOND_US)


def at_time(seconds: float) -> datetime:
    """``at_us`` as a naive UTC datetime (as the analyses take and give times)."""
    return datetime.fromtimestamp(at_us(seconds) / SECOND_US, timezone.utc).replace(tzinfo=None)


def load(tmp_path: Path, *sessions: Session):
    """The sessions' records in one local log, in receive order per topic, loaded."""
    log = write_log(tmp_path / "log", *sessions)
    con = db.open_db(str(tmp_path / "replay.duckdb"))
    replay(LocalLogSource(log), con, source_name="log", prefix="ktrace")
    return con


def write_log(directory: Path, *sessions: Session) -> str:
    """The sessions' records in a local log at ``directory``, in receive order per topic."""
    sink = LocalLogSink(str(directory))
    for _, resource, record in sorted((r for s in sessions for r in s.records()),
                                      key=lambda r: r[0]):
        sink.send(f"ktrace.{resource}", record)
    sink.close()
    return str(directory)


def web_service(c: str, ready_by_time: list[tuple[float, bool]]) -> list[tuple[float, str, dict]]:
    """Cluster ``c``'s Deployment ``shop/web`` of 2 replicas, its ReplicaSet and pods, and the
    EndpointSlice of Service ``web``: pod 2 always ready, pod 1 ready as ``ready_by_time``
    says (the slice's versions)."""
    meta = {"namespace": "shop", "creationTimestamp": "2026-11-30T06:51:36Z"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {**meta, "name": "web", "uid": f"{c}-deploy", "resourceVersion": "1"},
                  "spec": {"replicas": 2}, "status": {"replicas": 2}}
    replicaset = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                  "metadata": {**meta, "name": "web-1", "uid": f"{c}-rs", "resourceVersion": "2",
                               "ownerReferences": [{"kind": "Deployment", "name": "web",
                                                    "uid": f"{c}-deploy", "controller": True}]},
                  "spec": {"replicas": 2}}
    pods = []
    for n in (1, 2):
        p = pod(f"{c}-p{n}", n)
        p["metadata"].update(namespace="shop", ownerReferences=[
            {"kind": "ReplicaSet", "name": "web-1", "uid": f"{c}-rs", "controller": True}])
        pods.append((1.0, "ADDED", p))

    def endpoint(n: int, ready: bool) -> dict:
        return {"addresses": [f"10.0.0.{n}"], "conditions": {"ready": ready},
                "targetRef": {"kind": "Pod", "namespace": "shop", "name": f"web-{c}-p{n}",
                              "uid": f"{c}-p{n}"}}
    slices = [(at, "ADDED" if i == 0 else "MODIFIED", {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
        "metadata": {**meta, "name": "web-x", "uid": f"{c}-slice", "resourceVersion": str(10 + i),
                     "labels": {"kubernetes.io/service-name": "web"}},
        "endpoints": [endpoint(1, ready), endpoint(2, True)]})
        for i, (at, ready) in enumerate(ready_by_time)]
    return [(0.5, "ADDED", deployment), (0.6, "ADDED", replicaset), *pods, *slices]
