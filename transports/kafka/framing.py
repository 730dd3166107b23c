"""How a record's Avro body travels in a Kafka message, in either of two framings that may
share one topic (a topic migrated to a registry mid-way):

- **fingerprint** (no registry; needs no server): value = the Avro body, header
  ``ktrace.schema`` = the writer schema's 8-byte CRC-64-AVRO fingerprint;
- **Confluent** (``--schema-registry``): value = magic byte ``0`` + 4-byte big-endian schema
  id + the Avro body, the schema registered under the topic's subject, so any
  ``AvroDeserializer``, Kafka Connect or ksqlDB reads it without ktrace.

Both carry headers ``ktrace.type`` (the record type), ``ktrace.session`` and ``ktrace.seq``
(decimal), so consumers can route and check gaps without decoding, and a record of a named
object ``ktrace.object`` (``<namespace>/<name>``, ``/<name>`` when cluster-scoped), so
``replay -n`` drops the records of other namespaces before their values are read (the key
stays the object's uid: it decides the partition, one object's history in one). Messages
written without it are read as before. A reader tells the
framings apart by the ``ktrace.schema`` header: a fingerprint-framed body may itself start
with a zero byte.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from typing import Any, Protocol

from fastavro import parse_schema

from schemas import codec, repository
from schemas.codec import Record
from schemas.errors import DecodeError, KtraceError
from transports.kafka.registry import (BACKWARD_LEVELS, RegistryClient, RegistryRefused,
                                       RegistryUnavailable)

log = logging.getLogger(__name__)

HEADER_SCHEMA = "ktrace.schema"
HEADER_TYPE = "ktrace.type"
HEADER_SESSION = "ktrace.session"
HEADER_SEQ = "ktrace.seq"
HEADER_OBJECT = "ktrace.object"
CONFLUENT_MAGIC = b"\x00"
CONFLUENT_PREFIX_BYTES = 5

Headers = list[tuple[str, bytes]]


def object_header(namespace: str | None, name: str) -> bytes:
    """``ktrace.object`` of a record of that object (neither part holds a ``/``)."""
    return f"{namespace or ''}/{name}".encode()


def object_of(header: bytes) -> tuple[str | None, str]:
    """The namespace (None: cluster-scoped) and name a ``ktrace.object`` header names."""
    namespace, _, name = header.decode().partition("/")
    return namespace or None, name


class SchemaUnavailable(DecodeError):
    """The writer schema could not be fetched now (registry down, or none given). Reading
    that partition again later decodes the record: the loader keeps its position before it."""

    problem = "schema_unavailable"
    retryable = True


class Framing(Protocol):
    def value(self, topic: str, body: bytes) -> bytes: ...

    def body_of(self, value: bytes) -> bytes:
        """The Avro body of a ``value`` this framing made."""
        ...

    def headers(self, event_type: str, session: str, seq: int) -> dict[str, bytes]:
        """The headers of a record of that type, session and seq, as the mapping the
        producer takes cheapest (confluent-kafka reads a dict in ~2 µs less than a list of
        pairs)."""
        ...


@functools.lru_cache(maxsize=256)
def _leading_headers(schema: bytes | None, event_type: str, session: str) -> dict[str, bytes]:
    """The headers a session's records of one type share (all but the seq), made once."""
    headers = {HEADER_SCHEMA: schema} if schema is not None else {}
    headers[HEADER_TYPE] = event_type.encode()
    headers[HEADER_SESSION] = session.encode()
    return headers


def _headers(schema: bytes | None, event_type: str, session: str, seq: int) -> dict[str, bytes]:
    headers = _leading_headers(schema, event_type, session).copy()
    headers[HEADER_SEQ] = b"%d" % seq
    return headers


class FingerprintFraming:
    """The value is the body; the fingerprint travels in a header."""

    def __init__(self) -> None:
        self._fingerprint = repository.current().fingerprint

    def value(self, topic: str, body: bytes) -> bytes:
        return body

    def body_of(self, value: bytes) -> bytes:
        return value

    def headers(self, event_type: str, session: str, seq: int) -> dict[str, bytes]:
        return _headers(self._fingerprint, event_type, session, seq)


class RegistryFraming:
    """Confluent framing with the current schema registered under each topic's subject
    (ids cached), on subjects kept at BACKWARD compatibility."""

    def __init__(self, client: RegistryClient) -> None:
        self._client = client
        self._prefixes: dict[str, bytes] = {}

    def register(self, topics: list[str]) -> None:
        """Register up front, so an incompatible schema stops the recorder before it starts."""
        for topic in topics:
            self._prefix(topic)

    def value(self, topic: str, body: bytes) -> bytes:
        prefix = self._prefixes.get(topic) or self._prefix(topic)
        return prefix + body

    def body_of(self, value: bytes) -> bytes:
        return value[CONFLUENT_PREFIX_BYTES:]

    def headers(self, event_type: str, session: str, seq: int) -> dict[str, bytes]:
        return _headers(None, event_type, session, seq)

    def _prefix(self, topic: str) -> bytes:
        current = repository.current()
        subject = self._client.settings.subject(topic, repository.RECORD_NAME)
        level = self._client.compatibility(subject)
        if level not in BACKWARD_LEVELS:
            self._client.set_compatibility(subject, "BACKWARD")
            log.info("schema registry: subject %s compatibility %s -> BACKWARD", subject,
                     level or "(global default)")
            level = "BACKWARD"
        try:
            schema_id = self._client.register(subject, registered_schema(current.schema))
        except RegistryRefused as exc:
            if exc.status == 409:
                raise KtraceError(
                    f"schema registry refused {repository.RECORD_NAME} v{current.version} for "
                    f"subject {subject} as incompatible under {level}: "
                    f"{incompatible_fields(str(exc))}") from exc
            raise KtraceError(f"schema registry refused {repository.RECORD_NAME} "
                              f"v{current.version} for subject {subject}: {exc}") from exc
        log.info("schema registry: %s is schema id %d", subject, schema_id)
        prefix = self._prefixes[topic] = CONFLUENT_MAGIC + schema_id.to_bytes(4, "big")
        return prefix


def registered_schema(parsed: Any) -> str:
    """The schema's JSON as a registry stores it: fastavro's parsed form without its own keys."""
    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: clean(v) for k, v in node.items() if not k.startswith("__")}
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node
    return json.dumps(clean(parsed), separators=(",", ":"))


_APICURIO_DIFFS = re.compile(r"list of diff types: \[(.*)\]")
_CONFLUENT_FIELD = re.compile(r"field '([^']+)' at path '([^']+)'")


def incompatible_fields(message: str) -> str:
    """The fields the registry names in its refusal (Apicurio's or Confluent's wording)."""
    if match := _APICURIO_DIFFS.search(message):
        return "field " + match.group(1)
    if found := _CONFLUENT_FIELD.findall(message):
        return ", ".join(f"field {name} at {path}" for name, path in found)
    return " ".join(message.split())


class ValueDecoder:
    """Decodes message values of either framing into the current Record shape, fetching
    writer schemas by id from the registry (each id once)."""

    def __init__(self, client: RegistryClient | None) -> None:
        self._client = client
        self._writers: dict[int, Any] = {}

    def decode(self, value: bytes, headers: Headers | None) -> Record:
        for key, fingerprint in headers or ():
            if key == HEADER_SCHEMA:
                return codec.decode(value, fingerprint)
        if len(value) < CONFLUENT_PREFIX_BYTES or value[:1] != CONFLUENT_MAGIC:
            raise DecodeError("neither a ktrace.schema header nor the Confluent magic byte")
        schema_id = int.from_bytes(value[1:CONFLUENT_PREFIX_BYTES], "big")
        writer = self._writers.get(schema_id)
        if writer is None:
            writer = self._writers[schema_id] = self._fetch(schema_id)
        return codec.decode_with(value[CONFLUENT_PREFIX_BYTES:], writer)

    def _fetch(self, schema_id: int) -> Any:
        if self._client is None:
            raise SchemaUnavailable(f"schema id {schema_id} is in a schema registry: "
                                    f"give --schema-registry")
        try:
            answer = self._client.schema(schema_id)
        except RegistryUnavailable as exc:
            raise SchemaUnavailable(f"schema id {schema_id}: {exc}") from exc
        except RegistryRefused as exc:
            raise DecodeError(f"unknown schema id {schema_id} "
                              f"({self._client.settings.url}: {exc})") from exc
        if answer.get("schemaType", "AVRO") != "AVRO":
            raise DecodeError(f"schema id {schema_id} is {answer['schemaType']}, not Avro")
        try:
            parsed = parse_schema(json.loads(answer["schema"]), named_schemas={})
        except (KeyError, ValueError, TypeError) as exc:
            raise DecodeError(f"schema id {schema_id} is not a valid Avro schema: {exc}") from exc
        # A shipped version is used as itself: the current one decodes without resolution.
        shipped = repository.by_fingerprint().get(repository.schema_fingerprint(parsed))
        return parsed if shipped is None else shipped.schema
