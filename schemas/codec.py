"""Record bytes: Avro binary of the Record schema, named by the writer schema's fingerprint.

On Kafka the body is framed by ``transports/kafka/framing.py`` (a fingerprint header, or a
registry's schema id); elsewhere (the spool, exports) records use Avro single-object encoding:
``C3 01`` + 8-byte little-endian CRC-64-AVRO fingerprint + body. Readers resolve any shipped writer version into
the current schema, so old recordings keep decoding.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO

from fastavro import schemaless_reader, schemaless_writer

from schemas import envelope, repository
from schemas.errors import DecodeError

SINGLE_OBJECT_MAGIC = b"\xc3\x01"
META_RECORD = "io.ktrace.ObjectMeta"

Record = dict[str, Any]


def encode(record: Record) -> bytes:
    """Avro body of ``record`` written with the current schema."""
    if record.get("meta") is None and record.get("facts") is None and record.get("marker") is None:
        return envelope.encode_record(record)  # the recorder's records: no typed parts, same bytes
    meta = record.get("meta")
    if meta is not None and not isinstance(meta, tuple):
        # Naming the union branch spares fastavro matching the record against it: the
        # same bytes, ~15 % less encoding time per record.
        record = {**record, "meta": (META_RECORD, meta)}
    out = io.BytesIO()
    schemaless_writer(out, repository.current().schema, record)
    return out.getvalue()


def decode(body: bytes, fingerprint: bytes) -> Record:
    """Decode a body written with the schema named by ``fingerprint`` into the current shape."""
    writer = _writer(fingerprint)
    fast = _envelope_at(body, 0, writer)
    if fast is not None and fast[1] == len(body):
        return fast[0]
    return decode_with(body, writer)


def decode_with(body: bytes, writer_schema: Any) -> Record:
    """Decode a body written with ``writer_schema`` (parsed) into the current shape."""
    stream = io.BytesIO(body)
    record = _read(stream, writer_schema)
    if stream.tell() != len(body):
        raise DecodeError(f"corrupt Avro body ({len(body) - stream.tell()} trailing bytes)")
    return record


def read_at(data: bytes, pos: int, fingerprint: bytes) -> tuple[Record, int]:
    """The record whose body starts at ``pos`` of ``data`` (bodies follow one another, as in
    a block), and where the next one starts."""
    writer = _writer(fingerprint)
    fast = _envelope_at(data, pos, writer)
    if fast is not None:
        return fast
    stream = io.BytesIO(data)
    stream.seek(pos)
    return _read(stream, writer), stream.tell()


def read_run(data: bytes, pos: int, count: int,
             fingerprint: bytes) -> tuple[list[envelope.Envelope], int]:
    """Up to ``count`` envelopes (``schemas.envelope.decode_run``) of the records from
    ``pos`` of ``data``, and where the next record starts; they stop before a record that
    ``read_at`` gives to fastavro (typed parts, markers, an older schema, damage) or
    refuses (an unknown schema)."""
    writer = repository.by_fingerprint().get(fingerprint)
    if writer is None or writer.schema is not repository.current().schema:
        return [], pos
    return envelope.decode_run(data, pos, count)


def _envelope_at(data: bytes, pos: int, writer_schema: Any) -> tuple[Record, int] | None:
    """An envelope-only record of the current schema decoded by hand (schemas/envelope.py),
    else None."""
    if writer_schema is not repository.current().schema:
        return None
    return envelope.decode_at(data, pos)


def _writer(fingerprint: bytes) -> Any:
    writer = repository.by_fingerprint().get(fingerprint)
    if writer is None:
        raise DecodeError(f"unknown schema fingerprint {fingerprint.hex() or '(none)'}")
    return writer.schema


def _read(stream: BinaryIO, writer_schema: Any) -> Record:
    reader = repository.current().schema
    try:
        return schemaless_reader(
            stream,
            writer_schema,
            None if writer_schema is reader else reader,
            return_record_name=True,
            return_record_name_override=True,
        )
    except Exception as exc:  # fastavro raises many types on garbage: all mean "corrupt"
        raise DecodeError(f"corrupt Avro body ({type(exc).__name__}: {exc})") from exc


def frame(body: bytes, fingerprint: bytes | None = None) -> bytes:
    """Single-object encoding of an already encoded body."""
    return SINGLE_OBJECT_MAGIC + (fingerprint or repository.current().fingerprint) + body


def unframe(data: bytes) -> tuple[bytes, bytes]:
    """Split single-object encoded bytes into (fingerprint, body)."""
    if len(data) < 10 or data[:2] != SINGLE_OBJECT_MAGIC:
        raise DecodeError("not Avro single-object encoded (bad magic)")
    return data[2:10], data[10:]
