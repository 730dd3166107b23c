"""A plain ``confluent-kafka`` consumer with its ``AvroDeserializer`` and
``SchemaRegistryClient``: what a data team's consumer does, with no ktrace code at all."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.schema_registry import (SchemaRegistryClient, topic_record_subject_name_strategy,
                                             topic_subject_name_strategy)
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

STRATEGIES = {"topic": topic_subject_name_strategy, "topic-record": topic_record_subject_name_strategy}


@dataclass(frozen=True)
class Consumed:
    topic: str
    partition: int
    offset: int
    key: str
    headers: dict[str, bytes]
    value: dict[str, Any]


def consume_all(bootstrap: str, registry_url: str, topics: list[str], *,
                reader_schema: str | None = None, strategy: str = "topic",
                timeout_s: float = 60) -> list[Consumed]:
    """Every record of ``topics`` from the beginning to the end as it is now."""
    registry = SchemaRegistryClient({"url": registry_url, "timeout": 10})
    deserializer = AvroDeserializer(registry, schema_str=reader_schema,
                                    conf={"subject.name.strategy": STRATEGIES[strategy]})
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "interop",
                         "enable.auto.commit": False})
    try:
        metadata = consumer.list_topics(timeout=10)
        partitions = [TopicPartition(t, p, OFFSET_BEGINNING)
                      for t in topics for p in sorted(metadata.topics[t].partitions)]
        ends = {(tp.topic, tp.partition): consumer.get_watermark_offsets(tp, timeout=10)[1]
                for tp in partitions}
        consumer.assign(partitions)
        todo = {key for key, end in ends.items() if end > 0}
        out: list[Consumed] = []
        deadline = time.monotonic() + timeout_s
        while todo:
            assert time.monotonic() < deadline, f"not read to the end within {timeout_s} s: {todo}"
            message = consumer.poll(1.0)
            if message is None:
                continue
            assert message.error() is None, message.error()
            context = SerializationContext(message.topic(), MessageField.VALUE, message.headers())
            out.append(Consumed(message.topic(), message.partition(), message.offset(),
                                message.key().decode(), dict(message.headers() or ()),
                                deserializer(message.value(), context)))
            if message.offset() + 1 >= ends[(message.topic(), message.partition())]:
                todo.discard((message.topic(), message.partition()))
        return out
    finally:
        consumer.close()
