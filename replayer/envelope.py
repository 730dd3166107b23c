"""Envelopes → the load batch's envelope rows, as one Arrow table.

Only the record's envelope is turned into columns here (envelopes kept as they are,
transposed into Arrow arrays: row-by-row INSERTs are ~500x slower). Everything read from the object
itself is derived in SQL from the object JSON (``sql/typed/``), the same for recordings and
kubectl imports; the recorder's optional typed facts are never read.

Envelopes come as the envelope decoder gives them (``schemas.envelope.Envelope``, in bulk
from a DeliveryRun, or a lone record's run); objects are never copied: the object column is an Arrow
binary view array whose values point into the bytes they were decoded from (a local-log
block, a Kafka message). Copying 8 KB objects into one buffer cost ~7 µs each, mostly page
faults on the new memory. It is a string view: DuckDB takes it as VARCHAR without checking
the UTF-8 (``decode()`` of a BLOB was ~2 % of a pod's parse), which the JSON parse does —
text that is not UTF-8 is not valid JSON, and only parsed objects are stored.
"""

from __future__ import annotations

import struct
from typing import Any, Mapping, Sequence

import msgspec
import pyarrow as pa

from schemas.envelope import Envelope

TS = pa.timestamp("us")
STR, I32, I64, BOOL = pa.string(), pa.int32(), pa.int64(), pa.bool_()

MARKER = pa.struct([
    ("cause", STR), ("detail", STR), ("from_rv", STR), ("to_rv", STR), ("from_time", TS),
    ("to_time", TS), ("object_count", I64), ("recorder_version", STR),
    ("kinds", pa.list_(STR)),
])
SCHEMA = pa.schema([
    ("event_id", I64), ("source_id", I32), ("topic", STR), ("partition", I32), ("offset", I64),
    ("cluster", STR), ("session", STR), ("seq", I64), ("type", STR), ("inferred", BOOL),
    ("api_version", STR), ("kind", STR), ("resource", STR),
    ("namespace", STR), ("name", STR), ("uid", STR),
    ("resource_version", STR), ("rv", I64), ("received_at", TS), ("time_source", STR),
    ("component", STR), ("attribution", STR),
    ("object", pa.string_view()), ("object_size", I64), ("truncated", BOOL), ("marker", MARKER),
])
#: The columns that hold an envelope field as it is (the object is a view, below), and
#: the field: named alike, but for ``rv``.
FIELD_OF = {**{name: name for name in Envelope.__struct_fields__
               if name in SCHEMA.names and name != "object"},
            "rv": "resource_version_number"}
_VIEW = struct.Struct("<i4sii")  # length, prefix, buffer index, offset (Arrow's layout)
_INLINE = struct.Struct("<i12s")  # length, the value itself (12 bytes or fewer)


class EnvelopeBatch:
    """The envelope rows of one load batch."""

    def __init__(self, source_id: int = 0) -> None:
        self.source_id = source_id
        self.ids: list[int] = []
        self.topics: list[str] = []
        self.partitions: list[int] = []
        self.offsets: list[int] = []
        self.envelopes: list[Envelope] = []
        self.buffer_of: list[int] = []  # of each envelope: the buffer its object span is in
        self.buffers: list[bytes] = []
        self.markers: dict[int, dict[str, Any]] = {}  # by envelope
        self.kinds: set[str] = set()  # of its records (the typed models of others are skipped)

    def __len__(self) -> int:
        return len(self.envelopes)

    def add_run(self, first_id: int, topic: str, partition: int, offsets: Sequence[int],
                envelopes: Sequence[Envelope], data: bytes | list[bytes],
                markers: Mapping[int, dict[str, Any]] | None = None) -> None:
        """Envelopes decoded from ``data`` (one buffer, or one per envelope), with
        consecutive event ids from ``first_id``; ``markers`` by their envelope's index."""
        count = len(envelopes)
        for i, marker in (markers or {}).items():
            self.markers[len(self.envelopes) + i] = marker
        if isinstance(data, list):
            self.buffer_of.extend(range(len(self.buffers), len(self.buffers) + count))
            self.buffers.extend(data)
        else:
            if not self.buffers or self.buffers[-1] is not data:
                self.buffers.append(data)
            self.buffer_of.extend([len(self.buffers) - 1] * count)
        self.ids.extend(range(first_id, first_id + count))
        self.topics.extend([topic] * count)
        self.partitions.extend([partition] * count)
        self.offsets.extend(offsets)
        self.envelopes.extend(envelopes)
        self.kinds.update(e.kind for e in envelopes)

    def table(self) -> pa.Table:
        count = len(self.envelopes)
        # the envelopes as C tuples, transposed: a getter of the named fields made a tuple
        # of its own per envelope (+0.5 CPU-µs per record)
        fields = dict(zip(Envelope.__struct_fields__,
                          zip(*map(msgspec.structs.astuple, self.envelopes))))
        columns = {"event_id": self.ids, "source_id": [self.source_id] * count,
                   "topic": self.topics, "partition": self.partitions, "offset": self.offsets,
                   **{column: fields.get(field, ()) for column, field in FIELD_OF.items()}}
        columns["time_source"] = [source or "received" for source in columns["time_source"]]
        markers: list[dict[str, Any] | None] = [None] * count
        for i, marker in self.markers.items():
            markers[i] = _marker(marker)
        columns["marker"] = markers
        return pa.Table.from_arrays(
            [self._objects() if field.name == "object" else pa.array(columns[field.name],
                                                                     type=field.type)
             for field in SCHEMA], schema=SCHEMA)

    def _objects(self) -> pa.Array:
        """The object column: a view of each object's bytes where they were decoded."""
        views = bytearray(16 * len(self.envelopes))
        present = []
        for i, (envelope, buffer) in enumerate(zip(self.envelopes, self.buffer_of)):
            span = envelope.object
            present.append(span is not None)
            if span is None:
                continue
            start, end = span
            data = self.buffers[buffer]
            if end - start <= 12:
                _INLINE.pack_into(views, 16 * i, end - start, data[start:end])
            else:
                _VIEW.pack_into(views, 16 * i, end - start, data[start:start + 4], buffer, start)
        nulls = present.count(False)
        validity = pa.array(present, type=BOOL).buffers()[1] if nulls else None
        return pa.Array.from_buffers(
            pa.string_view(), len(self.envelopes),
            [validity, pa.py_buffer(views), *map(pa.py_buffer, self.buffers)], null_count=nulls)


def _marker(m: dict[str, Any] | None) -> dict[str, Any] | None:
    if not m:
        return None
    return {"cause": m.get("cause"), "detail": m.get("detail"),
            "from_rv": m.get("fromResourceVersion"), "to_rv": m.get("toResourceVersion"),
            "from_time": m.get("fromTime"), "to_time": m.get("toTime"),
            "object_count": m.get("objectCount"), "recorder_version": m.get("recorderVersion"),
            "kinds": m.get("kinds")}
