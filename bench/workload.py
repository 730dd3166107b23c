"""Deterministic workloads of N watch events, cloned from the seed capture.

Clone ``c`` (1, 2, …) of the seed gets its own namespace, app names, node names, uids and
resourceVersions, so every clone's objects are new objects that live beside the others;
the clones follow one another (clone-major), the last one cut at N. Objects stay alive at
the end of each clone, as in the seed, so live objects grow with N — except Events: as on a
real API server (``--event-ttl``, default 1h), each Event expires an hour of the workload's
clock after its last write, and the watch delivers its DELETED line then.

A workload is one file of raw watch lines in the order the recorder receives them (the
kind inside each object names the watch it came from), written once and reused.
"""

from __future__ import annotations

import gzip
import heapq
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from recorder.kube.catalogue import Target

#: The seed capture, recorded by bench/capture.py.
SEED = Path(__file__).resolve().parent / "data" / "shop.watch.jsonl.gz"

#: The watches of the seed (bench/capture.py WATCHES), by the kind they carry.
TARGETS: dict[str, Target] = {
    "Pod": Target("pods", "", "v1", "Pod", True, None),
    "ReplicaSet": Target("replicasets", "apps", "v1", "ReplicaSet", True, None),
    "Deployment": Target("deployments", "apps", "v1", "Deployment", True, None),
    "EndpointSlice": Target("endpointslices", "discovery.k8s.io", "v1", "EndpointSlice", True, None),
    "Event": Target("events", "events.k8s.io", "v1", "Event", True, None),
    "Node": Target("nodes", "", "v1", "Node", False, None),
    "Lease": Target("leases", "coordination.k8s.io", "v1", "Lease", True, "kube-node-lease"),
    "Namespace": Target("namespaces", "", "v1", "Namespace", False, None),
}
_KIND = re.compile(rb'"object":\{"kind":"([A-Za-z]+)"')
# What makes a clone's objects its own: uids, resourceVersions and the names below.
_SLOTS = re.compile(rb'(?P<uid>[0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
                    rb'|"resourceVersion":"(?P<rv>\d+)"'
                    rb'|(?P<name>frontend|checkout|kwok-node-|"shop"|shop/)')
#: Room between clones' resourceVersions (the seed spans a few thousand).
RV_SPAN = 1_000_000
#: A seed resourceVersion is scaled by this in a clone, leaving room after each for the
#: revisions of Event expiries (etcd gives a deletion a revision of its own).
RV_STEP = 100
#: The workload's clock: one cloned line every this many ms, the seed's own pace (its 399
#: lines span the 42 s between its first and last timestamps).
LINE_INTERVAL_MS = 105
#: How long an Event lives after its last write (kube-apiserver ``--event-ttl``, default).
EVENT_TTL_MS = 3_600_000
#: Part of every cached workload's name: bumped whenever the same N gives other lines, so
#: a work directory's older workloads are rebuilt, not reused (2: Events expire).
VERSION = 2


@dataclass(frozen=True)
class Template:
    """A seed line split into literal pieces and the slots a clone rewrites."""
    kind: str  # the object's kind: the watch the line came from
    pieces: tuple[bytes, ...]  # literal, slot, literal, slot, …, literal
    slots: tuple[tuple[str, bytes], ...]  # (slot kind, original text)

    def render(self, clone: int) -> bytes:
        out = [self.pieces[0]]
        for (kind, text), literal in zip(self.slots, self.pieces[1:]):
            out.append(rewrite(kind, text, clone))
            out.append(literal)
        return b"".join(out)


def rewrite(kind: str, text: bytes, clone: int) -> bytes:
    if kind == "uid":
        return b"%08x" % clone
    if kind == "rv":
        return b"%d" % (clone * RV_SPAN + RV_STEP * int(text))
    if text == b"kwok-node-":
        return b"c%05d-node-" % clone
    if text.startswith(b'"shop'):
        return b'"shop-%05d"' % clone
    if text == b"shop/":
        return b"shop-%05d/" % clone
    return b"%s-c%05d" % (text, clone)


def template(line: bytes) -> Template:
    kind = _KIND.search(line)
    if kind is None:
        raise ValueError(f"not a watch event of a known shape: {line[:120]!r}")
    pieces, slots, pos = [], [], 0
    for match in _SLOTS.finditer(line):
        group = match.lastgroup or ""
        start, end = match.span(group)
        pieces.append(line[pos:start])
        slots.append((group, line[start:end]))
        pos = end
    pieces.append(line[pos:])
    if kind.group(1).decode() not in TARGETS:
        raise ValueError(f"no watch for kind {kind.group(1)!r} in bench.workload.TARGETS")
    return Template(kind.group(1).decode(), tuple(pieces), tuple(slots))


def seed_templates(seed: Path = SEED) -> list[Template]:
    with gzip.open(seed, "rb") as fh:
        return [template(line.rstrip(b"\n")) for line in fh if line.strip()]


def cloned_writes(templates: list[Template]) -> Iterator[tuple[str, bytes]]:
    """(kind, watch line) of clone 1, clone 2, … without end."""
    clone = 0
    while True:
        clone += 1
        for t in templates:
            yield t.kind, t.render(clone)


def with_event_expiry(writes: Iterable[tuple[str, bytes]]) -> Iterator[bytes]:
    """The lines of ``writes`` (one every LINE_INTERVAL_MS), each Event's DELETED line
    inserted before the first write at or past EVENT_TTL_MS after its last write: its last
    object, at a revision after every Event line before it, as the API server's watch
    delivers an expiry."""
    last_write: dict[str, tuple[int, dict]] = {}  # Event uid → (its last write's ms, object)
    expiries: list[tuple[int, str]] = []  # (due ms, uid), stale when rewritten since
    last_rv = 0  # of the Event watch
    for n, (kind, line) in enumerate(writes):
        now = n * LINE_INTERVAL_MS
        while expiries and expiries[0][0] <= now:
            due, uid = heapq.heappop(expiries)
            if last_write.get(uid, (None,))[0] == due - EVENT_TTL_MS:
                obj = last_write.pop(uid)[1]
                last_rv += 1
                obj["metadata"]["resourceVersion"] = str(last_rv)
                yield json.dumps({"type": "DELETED", "object": obj},
                                 separators=(",", ":")).encode()
        if kind == "Event":
            event = json.loads(line)
            obj = event["object"]
            last_rv = int(obj["metadata"]["resourceVersion"])
            if event["type"] == "DELETED":
                last_write.pop(obj["metadata"]["uid"], None)
            else:
                last_write[obj["metadata"]["uid"]] = (now, obj)
                heapq.heappush(expiries, (now + EVENT_TTL_MS, obj["metadata"]["uid"]))
        yield line


def cloned_lines(templates: list[Template], events: int, expiring: bool = True) -> Iterator[bytes]:
    """``events`` watch lines: clone 1, clone 2, … with Events expiring (unless not
    ``expiring``), cut at ``events``."""
    writes = cloned_writes(templates)
    lines = with_event_expiry(writes) if expiring else (line for _, line in writes)
    for line in lines:
        if events <= 0:
            return
        events -= 1
        yield line


def cached(work: Path, name: str) -> Path:
    """Where the workload called ``name`` is kept in ``work``: its VERSION in the name."""
    return work / f"{name}.v{VERSION}.jsonl"


def build(path: Path, events: int, templates: list[Template] | None = None,
          expiring: bool = True) -> Path:
    """The workload of ``events`` events at ``path`` (kept when already complete); its
    Events never expire when not ``expiring`` (the recorder's memory at many live objects)."""
    done = path.with_suffix(".complete")
    if done.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        for line in cloned_lines(templates or seed_templates(), events, expiring):
            fh.write(line + b"\n")
    done.write_text(f"{events}\n")
    return path
