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
def kafka_bootstrap(work_dir: Path, given: str | None = None, *,
                    off_cpu: int | None = None) -> Iterator[tuple[str, str]]:
    """(bootstrap, where it came from) while the block runs. ``off_cpu``: the CPU a
    one-core phase is pinned to, which a broker started here is kept off (a broker on the
    recorder's core takes CPU the recorder is measured for: it runs elsewhere in a cluster)."""
    if given:
        yield given, "--kafka"
    elif bootstrap := os.environ.get(BOOTSTRAP_ENV):
        yield bootstrap, f"${BOOTSTRAP_ENV}"
    else:
        others = os.sched_getaffinity(0) - {off_cpu}
        cpus = others if off_cpu is not None and others else None
        with LocalKafkaBroker(work_dir=work_dir, cpus=cpus) as broker:
            where = f", kept off CPU {off_cpu}" if cpus is not None else ""
            yield broker.bootstrap, f"local Kafka {broker.version} started for this run{where}"
