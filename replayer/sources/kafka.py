"""Reads ktrace topics from a Kafka cluster, by partition, with the positions to resume."""

from __future__ import annotations

import logging
from typing import Iterator, Mapping, Sequence

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from replayer.sources import Delivery, PartitionKey, TopicSummary
from schemas.errors import DecodeError, TransportError, Unreadable
from schemas.framing import ValueDecoder
from schemas.kafka_settings import KafkaSettings
from schemas.registry import RegistryClient

log = logging.getLogger(__name__)
POLL_MS = 500
LOCATOR_PREFIX = "kafka:"


class KafkaSource:
    def __init__(self, settings: KafkaSettings) -> None:
        self._settings = settings
        self.locator = LOCATOR_PREFIX + settings.bootstrap
        registry = settings.schema_registry
        self._decoder = ValueDecoder(RegistryClient(registry) if registry else None)
        try:
            self._consumer = KafkaConsumer(
                **settings.client_kwargs(),
                enable_auto_commit=False,
                group_id=None,
                max_poll_records=5000,
                fetch_max_bytes=64 * 1024 * 1024,
                max_partition_fetch_bytes=16 * 1024 * 1024,
                bootstrap_timeout_ms=int(settings.connect_timeout_s * 1000),
            )
        except (KafkaError, OSError) as exc:
            raise TransportError(
                f"Kafka broker {settings.bootstrap} unreachable within "
                f"{settings.connect_timeout_s:g}s ({type(exc).__name__})") from exc

    def topics(self, prefix: str | None = None) -> list[str]:
        names = sorted(self._consumer.topics())
        return [t for t in names if not t.startswith("__")
                and (prefix is None or t.startswith(prefix + "."))]

    def read(
        self,
        topics: Sequence[str],
        *,
        after: Mapping[PartitionKey, int] | None = None,
        since_us: int | None = None,
        until_us: int | None = None,
        follow: bool = False,
    ) -> Iterator[Delivery]:
        partitions = self._partitions(topics)
        if not partitions:
            return
        self._consumer.assign(partitions)
        self._seek(partitions, after or {}, since_us)
        ends = self._consumer.end_offsets(partitions)
        remaining = {tp for tp in partitions if self._consumer.position(tp) < ends[tp]}
        while follow or remaining:
            batch = self._consumer.poll(timeout_ms=POLL_MS)
            for tp, messages in batch.items():
                for message in messages:
                    delivery = self._decode(message)
                    record = delivery.record
                    if not follow and message.offset + 1 >= ends[tp]:
                        remaining.discard(tp)
                    if getattr(delivery.error, "retryable", False):
                        # The rest of this partition waits for the next read, which starts
                        # again at this record (the loader keeps its position before it).
                        self._consumer.pause(tp)
                        remaining.discard(tp)
                        yield delivery
                        break
                    if record is not None and since_us is not None and record["receivedAt"] < since_us:
                        continue  # the seek used append times, which come after receive times
                    if record is not None and until_us is not None and record["receivedAt"] > until_us:
                        self._consumer.pause(tp)
                        remaining.discard(tp)
                        break
                    yield delivery

    def summarize(self, topics: Sequence[str]) -> list[TopicSummary]:
        summaries = []
        for topic in topics:
            partitions = self._partitions([topic])
            begins = self._consumer.beginning_offsets(partitions)
            ends = self._consumer.end_offsets(partitions)
            count = sum(ends[tp] - begins[tp] for tp in partitions)
            first = last = None
            for tp in partitions:
                for offset in {begins[tp], ends[tp] - 1} if ends[tp] > begins[tp] else ():
                    record = self.record_at(tp.topic, tp.partition, offset)
                    if record is not None:
                        t = record["receivedAt"]
                        first = t if first is None else min(first, t)
                        last = t if last is None else max(last, t)
            summaries.append(TopicSummary(topic, len(partitions), count, first, last))
        return summaries

    def close(self) -> None:
        self._consumer.close()

    def _partitions(self, topics: Sequence[str]) -> list[TopicPartition]:
        found = []
        for topic in topics:
            for p in sorted(self._consumer.partitions_for_topic(topic) or ()):
                found.append(TopicPartition(topic, p))
        return found

    def _seek(self, partitions: list[TopicPartition], after: Mapping[PartitionKey, int],
              since_us: int | None) -> None:
        by_time = {}
        if since_us is not None:
            by_time = self._consumer.offsets_for_times({tp: since_us // 1000 for tp in partitions})
        for tp in partitions:
            resume = after.get((tp.topic, tp.partition))
            if resume is not None:
                self._consumer.seek(tp, resume + 1)
            elif by_time.get(tp) is not None:
                self._consumer.seek(tp, by_time[tp].offset)
            elif since_us is not None:
                self._consumer.seek_to_end(tp)  # nothing at or after since
            else:
                self._consumer.seek_to_beginning(tp)

    def record_at(self, topic: str, partition: int, offset: int) -> dict | None:
        """The record at ``offset``: a fetch by offset (None once retention removed it: the
        consumer then resets to another offset, which is not this record)."""
        tp = TopicPartition(topic, partition)
        self._consumer.assign([tp])
        self._consumer.seek(tp, offset)
        for messages in self._consumer.poll(timeout_ms=5000, max_records=1).values():
            for message in messages:
                return self._decode(message).record if message.offset == offset else None
        return None

    def _decode(self, message) -> Delivery:  # type: ignore[no-untyped-def]
        return _decode(message, self._decoder)


def _decode(message, decoder: ValueDecoder) -> Delivery:  # type: ignore[no-untyped-def]
    try:
        record = decoder.decode(message.value or b"", message.headers)
    except DecodeError as exc:
        if getattr(exc, "retryable", False):  # not damage: the record is read again later
            return Delivery(message.topic, message.partition, message.offset, None, exc)
        # A record is Kafka's unit: its bytes are the unreadable range.
        damage = Unreadable(f"record does not decode: {exc}", len(message.value or b""),
                            message.offset + 1)
        return Delivery(message.topic, message.partition, message.offset, None, damage)
    return Delivery(message.topic, message.partition, message.offset, record)
