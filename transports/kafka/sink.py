"""The Kafka sink: one topic per resource, key = object uid, the body framed by
``transports/kafka/framing.py`` (fingerprint header, or a Schema Registry id).

The producer is confluent-kafka's (librdkafka): batching, lz4 and checksums happen in C
threads, a record costs the recording thread one ``produce`` call (kafka-python cost ~90 µs
per record all in; docs/performance.md). Durability over latency: acks=all with
idempotence, so a retried batch is neither lost nor duplicated; librdkafka retries
retriable errors itself and we surface the rest at ``flush`` — as ``RecordsRejected``
naming each record when every failure was one retrying cannot cure (too large for the
topic, not authorised, invalid), else as ``TransportError`` (the spooling sink then keeps
every unconfirmed record).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection

from confluent_kafka import KafkaError, KafkaException, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from schemas import codec, repository
from schemas.codec import Record
from schemas.errors import TransportError
from transports.kafka import framing
from transports.kafka.registry import RegistryClient
from transports.kafka.settings import KafkaSettings
from transports.sink import Outgoing, RecordsRejected, Rejection

log = logging.getLogger(__name__)
#: librdkafka's own log lines, through Python logging (else it prints to stderr itself).
client_log = logging.getLogger("transports.kafka.sink.librdkafka")

#: Records per batch: one request and one lz4 frame per ~170 of our 6 KB records.
BATCH_BYTES = 1024 * 1024
#: How long a batch may wait for more records. Nothing waits on it: a flush sends what is
#: queued at once, and the recorder's flushes run behind it (``SpoolingSink.flush_behind``).
#: Fuller batches cost librdkafka's thread, on the recorder's core, less per record (11-13 µs
#: at 500 ms against 15-20 at 100; docs/performance.md).
LINGER_MS = 500
#: What a broker accepts by default (message.max.bytes ~ 1 MiB) less room for headers/batch.
DEFAULT_MAX_RECORD_BYTES = 1_000_000
#: Broker-side append time as the record timestamp: retention then counts from when a record
#: was stored, whatever its receive time (a replayed old recording is not deleted at once),
#: and it never precedes the receive time, so offsets-for-times cannot skip a window's start.
TOPIC_CONFIG = {"message.timestamp.type": "LogAppendTime"}
#: Refusals that sending the same record again cannot cure: the record is dead-lettered
#: (after one try alone). Every other failure is the broker's or the network's: spooled.
REJECTIONS = frozenset({
    KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.INVALID_MSG, KafkaError.INVALID_MSG_SIZE,
    KafkaError.INVALID_RECORD, KafkaError.RECORD_LIST_TOO_LARGE,
    KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.TOPIC_EXCEPTION, KafkaError.POLICY_VIOLATION,
})


def client_config(settings: KafkaSettings) -> dict[str, object]:
    """The connection options, and librdkafka's logs sent through Python logging."""
    return {**settings.librdkafka_config(), "logger": client_log}


def connect_admin(settings: KafkaSettings) -> AdminClient:
    """An admin client that reached a broker, else TransportError within ``connect_timeout_s``."""
    admin = AdminClient(client_config(settings))
    _answered(admin, settings)
    return admin


def _answered(client: AdminClient | Producer, settings: KafkaSettings) -> None:
    """A metadata answer to ``client``, else TransportError within ``connect_timeout_s``."""
    try:
        client.list_topics(timeout=settings.connect_timeout_s)
    except KafkaException as exc:
        raise TransportError(
            f"Kafka broker {settings.bootstrap} unreachable within "
            f"{settings.connect_timeout_s:g}s ({exc.args[0].str()})") from exc


def ensure_topics(admin: AdminClient, names: list[str], *, partitions: int,
                  replication: int = 1, timeout_s: float = 30.0) -> None:
    try:
        existing = set(admin.list_topics(timeout=timeout_s).topics)
    except KafkaException as exc:
        raise TransportError(f"Kafka topics could not be listed: {exc.args[0].str()}") from exc
    wanted = [NewTopic(n, partitions, replication, config=TOPIC_CONFIG)
              for n in names if n not in existing]
    if not wanted:
        return
    for name, created in admin.create_topics(wanted, request_timeout=timeout_s).items():
        try:
            created.result()
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:  # another recorder was first
                raise TransportError(f"Kafka topic {name} could not be created: {exc}") from exc


def framing_for(settings: KafkaSettings) -> framing.Framing:
    """The Confluent framing when a registry is configured, else the fingerprint header."""
    if settings.schema_registry is None:
        return framing.FingerprintFraming()
    return framing.RegistryFraming(RegistryClient(settings.schema_registry))


def producer_config(settings: KafkaSettings, *, max_record_bytes: int,
                    linger_ms: int) -> dict[str, object]:
    return {
        **client_config(settings),
        # Delivery reports for failures only: a report per record costs the recording
        # thread a Python call each (~5 µs all in); the failed record is read back from it.
        "delivery.report.only.error": True,
        "acks": "all",
        "enable.idempotence": True,
        "compression.type": "lz4",
        "linger.ms": linger_ms,
        "batch.size": BATCH_BYTES,
        "message.max.bytes": max(max_record_bytes + 64 * 1024, BATCH_BYTES + 64 * 1024),
        # murmur2 of the key, as the Java client and kafka-python: one object's records land
        # on the partition they always did, also in topics written before this client.
        "partitioner": "murmur2_random",
        "request.timeout.ms": settings.request_timeout_ms,
    }


class KafkaSink:
    """``topics``: those a session will write, made sure of at once in one request (each
    was a request of its own at its first record, a round trip to the controller each);
    any other topic is made sure of at its first record."""

    def __init__(self, settings: KafkaSettings, *, partitions: int = 6, replication: int = 1,
                 max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES, linger_ms: int = LINGER_MS,
                 value_framing: framing.Framing | None = None,
                 topics: Collection[str] = ()) -> None:
        self.max_record_bytes = max_record_bytes
        self._framing = value_framing or framing_for(settings)
        self._partitions, self._replication = partitions, replication
        self._admin = connect_admin(settings)
        self._known_topics: set[str] = set()
        if topics:
            ensure_topics(self._admin, sorted(topics), partitions=partitions,
                          replication=replication)
            self._known_topics.update(topics)
        # what failed since the last flush, with its record: a rejection must name it
        self._failed: list[tuple[KafkaError, str, Record]] = []
        self._producer = Producer({**producer_config(
            settings, max_record_bytes=max_record_bytes, linger_ms=linger_ms),
            "on_delivery": self._delivered})
        # librdkafka asks for the idempotent producer's id at each metadata answer; its first
        # comes before a connection is up to ask on, and it then waits out a 500 ms timer
        # before trying again: an answer once connected gets the id at once (~0.06 s).
        _answered(self._producer, settings)

    def send(self, topic: str, record: Record) -> None:
        self.send_encoded(topic, Outgoing.of(record))

    def send_encoded(self, topic: str, outgoing: Outgoing) -> None:
        if topic not in self._known_topics:
            ensure_topics(self._admin, [topic], partitions=self._partitions,
                          replication=self._replication)
            self._known_topics.add(topic)
        headers = self._framing.headers(outgoing.type, outgoing.session, outgoing.seq)
        if outgoing.name is not None:
            headers[framing.HEADER_OBJECT] = framing.object_header(outgoing.namespace,
                                                                   outgoing.name)
        try:
            self._producer.produce(topic, self._framing.value(topic, outgoing.body),
                                   outgoing.key, headers=headers)
        except BufferError as exc:  # the local queue is full: the broker has not kept up
            raise TransportError(f"Kafka send to {topic} failed: {exc}") from exc
        except KafkaException as exc:
            error = exc.args[0]
            if error.code() in REJECTIONS:
                raise RecordsRejected([Rejection(topic, outgoing.record(), _reason(error))]) from exc
            raise TransportError(f"Kafka send to {topic} failed: {error.str()}") from exc

    def _delivered(self, error: KafkaError | None, message: Message) -> None:
        """A failed delivery (the only ones reported): its record is decoded from the value
        (librdkafka returns no headers with it, the value is the framed Avro body)."""
        if error is not None:
            record = codec.decode(self._framing.body_of(message.value()),
                                  repository.current().fingerprint)
            self._failed.append((error, message.topic(), record))

    def flush(self, timeout: float | None = None) -> None:
        started = time.monotonic()
        waiting = self._producer.flush(-1 if timeout is None else timeout)
        self._admin.poll(0)  # serves the admin client's log lines (queued until polled)
        failed, self._failed = self._failed, []
        if waiting:
            raise TransportError(f"{waiting} records were not acknowledged within "
                                 f"{time.monotonic() - started:.0f}s")
        cured = [error for error, _, _ in failed if error.code() not in REJECTIONS]
        if cured:
            raise TransportError(f"{len(failed)} records were not acknowledged: {cured[0].str()}")
        if failed:
            raise RecordsRejected([Rejection(t, r, _reason(e)) for e, t, r in failed])

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._producer.close()


def _reason(error: KafkaError) -> str:
    """``MsgSizeTooLarge: Broker: Message size too large``: the error's name, then its text."""
    name = "".join(part.capitalize() for part in error.name().split("_"))
    return f"{name}: {error.str()}"
