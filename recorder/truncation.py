"""Objects too large for the destination are recorded smaller, flagged, never dropped.

Steps, until the encoded record fits: drop ``metadata.managedFields`` from the stored JSON;
keep only a metadata stub (no annotations, no managedFields); drop the JSON and the typed
facts. ``objectSize`` keeps the size before truncation and ``truncated`` is set.
"""

from __future__ import annotations

from typing import Any

import orjson

from schemas import codec
from schemas.codec import Record

#: Room for the envelope, meta and facts when estimating from the JSON size alone.
ESTIMATE_MARGIN = 64 * 1024


def fit(record: Record, obj: dict[str, Any], max_bytes: int) -> Record:
    """``record`` unchanged when it fits ``max_bytes`` encoded, else a truncated copy."""
    body = record["object"] or b""
    if 2 * len(body) + ESTIMATE_MARGIN < max_bytes:
        return record  # facts are never larger than the JSON they come from: no need to encode
    if len(codec.encode(record)) <= max_bytes:
        return record
    for shrink in (_without_managed_fields, _metadata_stub, _bare):
        smaller = shrink(record, obj)
        if len(codec.encode(smaller)) <= max_bytes:
            return smaller
    return {**_bare(record, obj), "meta": None}


def _with_object(record: Record, obj: dict[str, Any] | None, **changes: Any) -> Record:
    return {**record, "object": orjson.dumps(obj) if obj is not None else None,
            "truncated": True, **changes}


def _without_managed_fields(record: Record, obj: dict[str, Any]) -> Record:
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return _with_object(record, {**obj, "metadata": metadata})


def _metadata_stub(record: Record, obj: dict[str, Any]) -> Record:
    dropped = ("managedFields", "annotations")
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in dropped}
    return _with_object(record, {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
                                 "metadata": metadata})


def _bare(record: Record, obj: dict[str, Any]) -> Record:
    return _with_object(record, None, facts=None)

