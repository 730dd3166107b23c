"""A source by its locator: ``local:<directory>`` or ``kafka:<bootstrap>``, as a Source
names itself and the replay database's ``sources`` table stores it, so a record's object
can be fetched again later from where it was loaded."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from schemas.errors import TransportError

if TYPE_CHECKING:
    from transports.kafka.settings import KafkaSettings
    from transports.source import Source

LOCAL = "local:"
KAFKA = "kafka:"


def open_source(locator: str, kafka: KafkaSettings | None = None) -> Source:
    """The source ``locator`` names. A Kafka one is reached with ``kafka``'s connection
    settings when given (TLS, SASL, the registry; its bootstrap, when not empty, replaces
    the locator's: a port-forward), else at the locator's bootstrap with default settings.
    Each transport is imported only when opened: Kafka's client is slow to import."""
    if locator.startswith(LOCAL):
        from transports.locallog.source import LocalLogSource
        return LocalLogSource(locator.removeprefix(LOCAL))
    if locator.startswith(KAFKA):
        from transports.kafka.settings import KafkaSettings
        from transports.kafka.source import KafkaSource
        bootstrap = locator.removeprefix(KAFKA)
        return KafkaSource(replace(kafka, bootstrap=kafka.bootstrap or bootstrap) if kafka
                           else KafkaSettings(bootstrap=bootstrap, connect_timeout_s=5.0))
    raise TransportError(f"no source to fetch from ({locator})")
