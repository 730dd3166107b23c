"""Pytest fixtures for a real Kafka broker, loaded by ``tests/conftest.py`` through ``pytest_plugins``.

Where the broker comes from, first match wins:

1. ``KTRACE_TEST_KAFKA=host:port`` -- one already running (``.ci/run``, or a developer's
   ``python -m tests.infra.kafka start --dir DIR``);
2. testcontainers' ``KafkaContainer`` when a Docker engine answers;
3. a :class:`~tests.infra.kafka.LocalKafkaBroker` started for the session, no Docker needed.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.infra.kafka import LocalKafkaBroker

BOOTSTRAP_ENV = "KTRACE_TEST_KAFKA"
# Confluent Platform 8.0 is Apache Kafka 4.0, the protocol baseline kafka-python 3 and ktrace target.
CONTAINER_IMAGE = "confluentinc/cp-kafka:8.0.0"
TOPIC_PREFIX_MAX = 80


@dataclass(frozen=True)
class KafkaService:
    bootstrap: str
    source: str
    broker: LocalKafkaBroker | None = None  # only a broker this session started can be stopped


def docker_engine_answers() -> bool:
    """A reachable engine, not merely a ``docker`` client on PATH."""
    try:
        import docker

        docker.from_env(timeout=2).ping()
        return True
    except Exception:  # no socket, refused, timeout, SDK missing: all mean "no engine"
        return False


@pytest.fixture(scope="session")
def kafka_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaService]:
    if bootstrap := os.environ.get(BOOTSTRAP_ENV):
        yield KafkaService(bootstrap, source=f"${BOOTSTRAP_ENV}")
    elif docker_engine_answers():
        from testcontainers.community.kafka import KafkaContainer

        with KafkaContainer(CONTAINER_IMAGE).with_kraft() as container:
            yield KafkaService(container.get_bootstrap_server(), source=f"testcontainers {CONTAINER_IMAGE}")
    else:
        with LocalKafkaBroker(work_dir=tmp_path_factory.mktemp("kafka")) as broker:
            yield KafkaService(broker.bootstrap, source=f"local Kafka {broker.version}", broker=broker)


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_service: KafkaService) -> str:
    """``host:port`` of a real Kafka 4.x broker shared by the whole session."""
    return kafka_service.bootstrap


@pytest.fixture
def kafka_broker(kafka_service: KafkaService) -> Iterator[LocalKafkaBroker]:
    """The session's broker itself, for tests that stop, start or restart it.

    Afterwards it is running again, even if the test failed while it was down.
    """
    broker = kafka_service.broker
    if broker is None:
        pytest.skip(f"the Kafka broker comes from {kafka_service.source} and cannot be stopped by the tests")
    yield broker
    if not broker.running:
        broker.start()


@pytest.fixture
def unique_topic_prefix(request: pytest.FixtureRequest) -> str:
    """``<test name>-<random>``, legal in a topic name, so tests (and reruns) never share topics."""
    # Only [A-Za-z0-9_-]: Kafka also allows '.', but warns that '.' and '_' collide in metric names.
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name).strip("-_")
    return f"{name[:TOPIC_PREFIX_MAX]}-{secrets.token_hex(4)}"
