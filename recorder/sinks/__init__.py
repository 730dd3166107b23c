"""Where the recorder's records go: a Kafka cluster, or the local log (the embedded default)."""

from __future__ import annotations

from typing import Protocol

from schemas.codec import Record


class Sink(Protocol):
    """Takes records in order; a record is durable once ``flush`` returned without error."""

    #: Largest encoded record the destination accepts; bigger objects are stored truncated.
    max_record_bytes: int

    def send(self, topic: str, record: Record) -> None: ...

    def flush(self, timeout: float | None = None) -> None: ...

    def close(self) -> None: ...
