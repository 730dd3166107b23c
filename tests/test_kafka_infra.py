"""The Kafka the other tests rely on: it answers, round-trips a message, and keeps data across a restart."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from tests.infra.kafka import LocalKafkaBroker

pytestmark = pytest.mark.kafka

TIMEOUT_S = 30
KEY = b"pod/default/web-0"
# Repetitive, like a watch event: kafka-python sends a batch uncompressed when lz4 would not shrink it.
VALUE = b'{"type":"ADDED","object":{"kind":"Pod","status":{"phase":"Running"}}}' * 20


def create_topic(bootstrap: str, topic: str) -> None:
    with KafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topics({topic: {"num_partitions": 1, "replication_factor": 1}}, wait_for_metadata=True)


def produce(bootstrap: str, topic: str, key: bytes, value: bytes) -> int:
    """Send one record the way ktrace's recorder does (acks=all, lz4) and return its offset."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type="lz4")
    try:
        return producer.send(topic, key=key, value=value).get(timeout=TIMEOUT_S).offset
    finally:
        producer.close()


def consume_all(bootstrap: str, topic: str) -> list[tuple[bytes, bytes]]:
    """Every (key, value) in partition 0, read from the beginning to the end offset."""
    partition = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        end = consumer.end_offsets([partition])[partition]
        records: list[tuple[bytes, bytes]] = []
        deadline = time.monotonic() + TIMEOUT_S
        while consumer.position(partition) < end and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=1000).values():
                records.extend((record.key, record.value) for record in batch)
        return records
    finally:
        consumer.close()


def test_broker_answers(kafka_bootstrap: str) -> None:
    with KafkaAdminClient(bootstrap_servers=kafka_bootstrap) as admin:
        assert isinstance(admin.list_topics(), list)


def test_message_round_trip(kafka_bootstrap: str, unique_topic_prefix: str) -> None:
    topic = f"{unique_topic_prefix}-events"
    create_topic(kafka_bootstrap, topic)

    offset = produce(kafka_bootstrap, topic, KEY, VALUE)

    assert offset == 0
    assert consume_all(kafka_bootstrap, topic) == [(KEY, VALUE)]


def test_restart_keeps_data(kafka_broker: LocalKafkaBroker, unique_topic_prefix: str) -> None:
    topic = f"{unique_topic_prefix}-events"
    bootstrap = kafka_broker.bootstrap
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, KEY, VALUE)

    kafka_broker.restart()

    assert kafka_broker.bootstrap == bootstrap
    assert consume_all(bootstrap, topic) == [(KEY, VALUE)]
