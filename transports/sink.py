"""What the recorder sends records to: a Kafka cluster, or the local log (the embedded default)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import msgspec

from schemas import codec, repository, topics
from schemas.codec import Record
from schemas.errors import TransportError


class Outgoing(msgspec.Struct, gc=False):
    """A record as the sinks send it: its Avro body (``schemas.codec.encode``), its Kafka key
    (``schemas.topics``) and what its headers carry (``transports.kafka.framing``). The
    writer encodes its object records straight into one (no Record dict on the way); the
    dict is decoded back only where one is needed (a rejected record, the spool's drain). A
    Struct, made for every record: its ``__init__`` is C."""

    body: bytes
    key: bytes
    type: str
    session: str
    seq: int
    received_at: int  # µs: the local log's time index (transports/locallog/timeindex.py)
    uid: str | None  # the object's: the local log's object index (…/objectindex.py)
    #: The object's: the local log's key index (transports/locallog/keyindex.py), the
    #: Kafka ``ktrace.object`` header (a ``-n`` read passes others by undecoded).
    namespace: str | None
    name: str | None

    @classmethod
    def of(cls, record: Record) -> Outgoing:
        return cls(codec.encode(record), topics.key_for(record), record["type"],
                   record["session"], record["seq"], record["receivedAt"], record.get("uid"),
                   record["namespace"], record["name"])

    def record(self) -> Record:
        return codec.decode(self.body, repository.current().fingerprint)


class Sink(Protocol):
    """Takes records in order; a record is durable once ``flush`` returned without error."""

    #: Largest encoded record the destination accepts; bigger objects are stored truncated.
    max_record_bytes: int

    def send(self, topic: str, record: Record) -> None: ...

    def send_encoded(self, topic: str, outgoing: Outgoing) -> None:
        """``send`` of a record already encoded."""
        ...

    def flush(self, timeout: float | None = None) -> None: ...

    def flush_behind(self, then: Callable[[], None]) -> None:
        """Make what was sent so far durable, then call ``then``: a sink that can wait for
        its destination in the background returns at once (``then`` runs in its thread,
        records sent meanwhile are not covered); one flush behind at a time. Errors of a
        flush behind are raised by the next ``flush_behind`` or ``flush``."""
        ...

    def flushing_behind(self) -> bool:
        """A flush behind is still waiting for the destination: a ``flush_behind`` now
        would wait for it."""
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
