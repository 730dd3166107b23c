"""Objects too large for the destination are recorded smaller, flagged, never dropped.

The least useful parts go first, until the encoded record fits: ``metadata.managedFields``;
``metadata.annotations``; spec fields the typed tables do not read, largest first; the rest
of the spec; the status; then the JSON itself (and any typed facts). Metadata is kept to
the last, and ``objectSize`` keeps the size before truncation with ``truncated`` set. A
shrunk object is written in the API server's spelling (``gojson``), as every stored object is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from recorder import gojson
from schemas import codec
from schemas.codec import Record

#: Room for the envelope, meta and facts when estimating from the JSON size alone.
ESTIMATE_MARGIN = 64 * 1024

#: Spec fields the typed tables (and analyses) read, of every kind recorded: kept longest.
READ_SPEC_FIELDS = frozenset({
    "nodeName", "terminationGracePeriodSeconds", "containers", "volumes", "schedulerName",
    "unschedulable", "taints", "holderIdentity", "leaseDurationSeconds", "renewTime",
    "acquireTime", "strategy", "updateStrategy", "parallelism", "replicas", "selector",
    "claimRef", "source", "volumeName", "storageClassName", "attacher", "finalizers",
})

Obj = dict[str, Any]


def fits(object_json: bytes | None, max_bytes: int) -> bool:
    """Whether a record of this object JSON surely fits ``max_bytes``, without encoding it:
    its typed facts, if any, are never larger than the JSON they come from."""
    return 2 * len(object_json or b"") + ESTIMATE_MARGIN < max_bytes


def fit(record: Record, max_bytes: int) -> Record:
    """``record`` unchanged when it fits ``max_bytes`` encoded, else a truncated copy."""
    body = record["object"] or b""
    if fits(body, max_bytes):
        return record
    if len(codec.encode(record)) <= max_bytes:
        return record
    if body:
        for smaller in _shrunk(orjson.loads(body)):
            candidate = {**record, "object": gojson.dumps(smaller), "truncated": True}
            if len(codec.encode(candidate)) <= max_bytes:
                return candidate
    return {**record, "object": None, "truncated": True, "meta": None, "facts": None}


def _shrunk(obj: Obj) -> Iterator[Obj]:
    """Ever smaller versions of ``obj``, least useful parts dropped first."""
    metadata = dict(obj.get("metadata") or {})
    obj = {**obj, "metadata": metadata}
    for part in ("managedFields", "annotations"):
        if metadata.pop(part, None) is not None:
            yield obj
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec = dict(spec)
        obj["spec"] = spec
        unread = sorted((k for k in spec if k not in READ_SPEC_FIELDS),
                        key=lambda k: len(orjson.dumps(spec[k])), reverse=True)
        for key in unread:
            del spec[key]
            yield obj
    for part in ("spec", "status"):
        if obj.pop(part, None) is not None:
            yield obj
    yield {key: obj[key] for key in ("apiVersion", "kind", "metadata") if key in obj}
