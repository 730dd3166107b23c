"""The Kafka sink: one topic per resource, key = object uid, the body framed by
``schemas/framing.py`` (fingerprint header, or a Schema Registry id).

Durability over latency: acks=all with idempotence, so a retried batch is neither lost nor
duplicated; lz4 batches; the producer retries retriable errors itself and we surface the
rest at ``flush`` — as ``RecordsRejected`` naming each record when every failure was one
retrying cannot cure (too large for the topic, not authorised, invalid).
"""

from __future__ import annotations

import logging
import time

from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError, UnknownError
from kafka.partitioner.abc import Partitioner
from kafka.partitioner.default import murmur2
from kafka.producer.future import FutureRecordMetadata

from recorder.sinks import RecordsRejected, Rejection
from schemas import codec, framing, topics
from schemas.codec import Record
from schemas.errors import TransportError
from schemas.kafka_settings import KafkaSettings
from schemas.registry import RegistryClient

log = logging.getLogger(__name__)

#: Records per batch are what make kafka-python cheap per record (one batch, one request,
#: one lz4 frame): 1 MiB holds ~170 of our 6 KB records before compression.
BATCH_BYTES = 1024 * 1024
#: How long a batch may wait for more records: as long as the recorder's own flush interval
#: (1 s), so batches leave at the flush, full, instead of every 20 ms with a record or two
#: each. kafka-python wakes its I/O thread (a socket write and a thread switch) for every new
#: batch; with 6 partitions × 8 topics and a short linger that was one wake-up per ~3 records.
LINGER_MS = 1000
#: What a broker accepts by default (message.max.bytes ~ 1 MiB) less room for headers/batch.
DEFAULT_MAX_RECORD_BYTES = 1_000_000


def connect_admin(settings: KafkaSettings) -> KafkaAdminClient:
    """An admin client, or TransportError within ``connect_timeout_s`` when no broker answers."""
    try:
        return KafkaAdminClient(
            **settings.client_kwargs(),
            bootstrap_timeout_ms=int(settings.connect_timeout_s * 1000),
        )
    except (KafkaError, OSError) as exc:
        raise TransportError(
            f"Kafka broker {settings.bootstrap} unreachable within "
            f"{settings.connect_timeout_s:g}s ({type(exc).__name__})") from exc


#: Broker-side append time as the record timestamp: retention then counts from when a record
#: was stored, whatever its receive time (a replayed old recording is not deleted at once),
#: and it never precedes the receive time, so offsets-for-times cannot skip a window's start.
TOPIC_CONFIG = {"message.timestamp.type": "LogAppendTime"}


def ensure_topics(admin: KafkaAdminClient, names: list[str], *, partitions: int,
                  replication: int = 1) -> None:
    existing = set(admin.list_topics())
    wanted = [NewTopic(n, partitions, replication, topic_configs=TOPIC_CONFIG)
              for n in names if n not in existing]
    if not wanted:
        return
    try:
        admin.create_topics(wanted)
    except TopicAlreadyExistsError:
        pass  # another recorder made it first


def framing_for(settings: KafkaSettings) -> framing.Framing:
    """The Confluent framing when a registry is configured, else the fingerprint header."""
    if settings.schema_registry is None:
        return framing.FingerprintFraming()
    return framing.RegistryFraming(RegistryClient(settings.schema_registry))


class KeyPartitioner(Partitioner):
    """kafka-python's default partitioning (murmur2 of the key, as the Java client) with the
    hashes remembered: one object's records share a key, and murmur2 is pure Python (~12 % of
    a send). The same partition for the same key as the default, so the layout is unchanged."""

    MAX_KEYS = 200_000  # ~25 MB at most; cleared when full (hashes are recomputed, never wrong)

    def __init__(self) -> None:
        self._hashes: dict[bytes, int] = {}
        self._partitions: dict[str, list[int]] = {}

    def partition(self, topic, key, serialized_key, value, serialized_value, cluster):  # type: ignore[no-untyped-def]
        known = cluster.partitions_for_topic(topic)
        if not known:
            raise ValueError(f"Topic {topic} not found in ClusterMetadata")
        partitions = self._partitions.get(topic)
        if partitions is None or len(partitions) != len(known):
            partitions = self._partitions[topic] = sorted(known)
        if serialized_key is None:
            raise ValueError("ktrace records always have a key")
        digest = self._hashes.get(serialized_key)
        if digest is None:
            if len(self._hashes) >= self.MAX_KEYS:
                self._hashes.clear()
            digest = self._hashes[serialized_key] = murmur2(serialized_key) & 0x7FFFFFFF
        return partitions[digest % len(partitions)]


class KafkaSink:
    def __init__(self, settings: KafkaSettings, *, partitions: int = 6, replication: int = 1,
                 max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES, linger_ms: int = LINGER_MS,
                 value_framing: framing.Framing | None = None) -> None:
        self.max_record_bytes = max_record_bytes
        self._framing = value_framing or framing_for(settings)
        self._partitions, self._replication = partitions, replication
        self._admin = connect_admin(settings)
        self._known_topics: set[str] = set()
        # sent since the last flush, with what was sent: a rejection must name its record
        self._pending: list[tuple[FutureRecordMetadata, str, Record]] = []
        try:
            self._producer = KafkaProducer(
                **settings.client_kwargs(),
                acks="all",
                enable_idempotence=True,
                compression_type="lz4",
                linger_ms=linger_ms,
                batch_size=BATCH_BYTES,
                partitioner=KeyPartitioner(),
                max_request_size=max(max_record_bytes + 64 * 1024, 1_048_576),
                max_block_ms=int(settings.connect_timeout_s * 1000),
                bootstrap_timeout_ms=int(settings.connect_timeout_s * 1000),
            )
        except (KafkaError, OSError) as exc:
            self._admin.close()
            raise TransportError(f"Kafka producer for {settings.bootstrap} failed: {exc}") from exc

    def send(self, topic: str, record: Record) -> None:
        if topic not in self._known_topics:
            ensure_topics(self._admin, [topic], partitions=self._partitions,
                          replication=self._replication)
            self._known_topics.add(topic)
        try:
            self._pending.append((self._producer.send(
                topic,
                key=topics.key_for(record),
                value=self._framing.value(topic, codec.encode(record)),
                headers=self._framing.headers(record),
            ), topic, record))
        except KafkaError as exc:
            if not exc.retriable:
                raise RecordsRejected([Rejection(topic, record, _reason(exc))]) from exc
            raise TransportError(f"Kafka send to {topic} failed: {exc}") from exc

    def flush(self, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                self._producer.flush(timeout=remaining)
                break
            except UnknownError as exc:
                # kafka-python splits a batch the broker found too large into new batches
                # and lets flush see the old one unfinished: wait for the new ones instead
                if "Future not done" not in str(exc) or remaining == 0.0:
                    raise TransportError(f"Kafka flush failed: {exc}") from exc
            except KafkaError as exc:
                raise TransportError(f"Kafka flush failed: {exc}") from exc
        # Failures are read from the futures here, not through a callback per record.
        pending, self._pending = self._pending, []
        errors = [(f.exception, t, r) for f, t, r in pending if f.failed()]
        retriable = [exc for exc, _, _ in errors if getattr(exc, "retriable", True)]
        if retriable:
            raise TransportError(f"{len(errors)} records were not acknowledged: {retriable[0]}")
        if errors:
            raise RecordsRejected([Rejection(t, r, _reason(exc)) for exc, t, r in errors])

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._producer.close(timeout=10)
            self._admin.close()


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
