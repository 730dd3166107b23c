"""The Kafka broker a run produces to: ``--kafka``, else ``KTRACE_TEST_KAFKA``, else a local
one started for the run as the tests start it (tests/infra/kafka.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.infra.kafka import LocalKafkaBroker

BOOTSTRAP_ENV = "KTRACE_TEST_KAFKA"


@contextmanager
def kafka_bootstrap(work_dir: Path, given: str | None = None) -> Iterator[tuple[str, str]]:
    """(bootstrap, where it came from) while the block runs."""
    if given:
        yield given, "--kafka"
    elif bootstrap := os.environ.get(BOOTSTRAP_ENV):
        yield bootstrap, f"${BOOTSTRAP_ENV}"
    else:
        with LocalKafkaBroker(work_dir=work_dir) as broker:
            yield broker.bootstrap, f"local Kafka {broker.version} started for this run"
