"""The Kafka sink: one topic per resource, key = object uid, headers name the schema.

Durability over latency: acks=all with idempotence, so a retried batch is neither lost nor
duplicated; lz4 batches; the producer retries retriable errors itself and we surface the
rest at ``flush``.
"""

from __future__ import annotations

import logging
import threading

from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError

from schemas import codec, topics
from schemas.codec import Record
from schemas.errors import TransportError
from schemas.kafka_settings import KafkaSettings

log = logging.getLogger(__name__)

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


class KafkaSink:
    def __init__(self, settings: KafkaSettings, *, partitions: int = 6, replication: int = 1,
                 max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES, linger_ms: int = 20) -> None:
        self.max_record_bytes = max_record_bytes
        self._partitions, self._replication = partitions, replication
        self._admin = connect_admin(settings)
        self._known_topics: set[str] = set()
        self._errors: list[BaseException] = []
        self._lock = threading.Lock()
        try:
            self._producer = KafkaProducer(
                **settings.client_kwargs(),
                acks="all",
                enable_idempotence=True,
                compression_type="lz4",
                linger_ms=linger_ms,
                batch_size=512 * 1024,
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
            future = self._producer.send(
                topic,
                key=topics.key_for(record),
                value=codec.encode(record),
                headers=codec.kafka_headers(record),
            )
        except KafkaError as exc:
            raise TransportError(f"Kafka send to {topic} failed: {exc}") from exc
        future.add_errback(self._on_error)

    def flush(self, timeout: float | None = None) -> None:
        try:
            self._producer.flush(timeout=timeout)
        except KafkaError as exc:
            raise TransportError(f"Kafka flush failed: {exc}") from exc
        with self._lock:
            errors, self._errors = self._errors, []
        if errors:
            raise TransportError(f"{len(errors)} records were not acknowledged: {errors[0]}")

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._producer.close(timeout=10)
            self._admin.close()

    def _on_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)
