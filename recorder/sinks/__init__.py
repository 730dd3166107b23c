"""Where the recorder's records go: a Kafka cluster, or the local log (the embedded default)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from schemas.codec import Record
from schemas.errors import TransportError


class Sink(Protocol):
    """Takes records in order; a record is durable once ``flush`` returned without error."""

    #: Largest encoded record the destination accepts; bigger objects are stored truncated.
    max_record_bytes: int

    def send(self, topic: str, record: Record) -> None: ...

    def flush(self, timeout: float | None = None) -> None: ...

    def flush_behind(self, then: Callable[[], None]) -> None:
        """Make what was sent so far durable, then call ``then``: a sink that can wait for
        its destination in the background returns at once (``then`` runs in its thread,
        records sent meanwhile are not covered); one flush behind at a time. Errors of a
        flush behind are raised by the next ``flush_behind`` or ``flush``."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Rejection:
    """A record the destination refused for a reason that retrying cannot change."""

    topic: str
    record: Record
    reason: str


class RecordsRejected(TransportError):
    """Raised by ``send``/``flush`` when the only failures were non-retriable rejections:
    everything else sent so far is durable."""

    def __init__(self, rejected: list[Rejection]) -> None:
        super().__init__(f"{len(rejected)} records rejected: {rejected[0].reason}")
        self.rejected = rejected
