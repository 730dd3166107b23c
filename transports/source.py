"""What the replayer reads records from: a Kafka cluster or a local log directory.

Both yield Deliveries in log order per (topic, partition), each with the position a loader
stores to resume, and a DecodeError instead of a record when the bytes were bad, so one bad
record is counted and reported, never fatal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from schemas.envelope import Envelope
from schemas.codec import Record
from schemas.errors import DecodeError
from transports.window import Window

PartitionKey = tuple[str, int]
#: Whether a read may keep a record of a topic with a namespace and a name (None for a
#: cluster-scoped object, a marker): False only when it surely would not, so the source
#: passes the record by without decoding it (``Passed``). Its answer for one (topic,
#: namespace, name) stays the same through one ``read``: a source may judge each once.
Wants = Callable[[str, str | None, str | None], bool]


@dataclass(frozen=True, slots=True)
class Delivery:
    topic: str
    partition: int
    offset: int
    record: Record | None
    error: DecodeError | None = None

    def where(self) -> str:
        return f"{self.topic}/{self.partition}@{self.offset}"


@dataclass(frozen=True, slots=True)
class DeliveryRun:
    """Envelope-only records that follow one another in a partition, as the envelopes
    ``schemas.envelope.decode_run`` gives (their objects' spans point into ``data``: one
    buffer for every envelope, a local-log block, or one per envelope, Kafka messages): a
    load takes them without a Record or a copy of the object per record."""

    topic: str
    partition: int
    offsets: list[int]
    envelopes: list[Envelope]
    data: bytes | list[bytes]
    #: The Marker of each marker record, by its index (only a lone record's run has one).
    markers: Mapping[int, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, delivery: Delivery) -> DeliveryRun:
        """A lone record as a run of one (typed parts left out: a load reads the object)."""
        record = delivery.record
        assert record is not None, "a delivery without a record is no run"
        envelope = Envelope.of(record)
        body = envelope.object
        if body is not None:  # its span in the buffer that is the body itself
            envelope.object = (0, len(body))
        marker = record.get("marker")
        return cls(delivery.topic, delivery.partition, [delivery.offset], [envelope],
                   body or b"", {0: marker} if marker else {})

    def data_of(self, i: int) -> bytes:
        return self.data[i] if isinstance(self.data, list) else self.data

    def deliveries(self) -> Iterator[Delivery]:
        for i, (offset, envelope) in enumerate(zip(self.offsets, self.envelopes)):
            yield Delivery(self.topic, self.partition, offset, envelope.record(self.data_of(i)))


@dataclass(frozen=True, slots=True)
class Passed:
    """``count`` records of a partition a read with ``wants`` passed by undecoded, the last
    at offset ``through``: a load counts them filtered out and resumes after them."""

    topic: str
    partition: int
    through: int
    count: int


@dataclass(frozen=True)
class TopicSummary:
    topic: str
    partitions: int
    records: int
    first_received_us: int | None
    last_received_us: int | None


class Source(Protocol):
    #: Where the source is, as the ``sources`` table names it: ``local:<directory>`` or
    #: ``kafka:<bootstrap>``; ``transports.locator.open_source`` opens it again to fetch a record.
    locator: str

    def record_at(self, topic: str, partition: int, offset: int) -> Record | None:
        """The record at one position (None when nothing is there any more)."""
        ...

    def records_at(self, topic: str, partition: int,
                   offsets: Sequence[int]) -> dict[int, Record | None]:
        """``record_at`` of several positions of one partition, read together where the
        source can (Kafka: one seek for each stretch of nearby offsets)."""
        ...

    def topics(self, prefix: str | None = None) -> list[str]: ...

    def read(self, topics: Sequence[str], *, after: Mapping[PartitionKey, int] | None = None,
             window: Window = Window(), runs: bool = False, wants: Wants | None = None
             ) -> Iterator[Delivery | DeliveryRun | Passed]:
        """Records of ``topics``: from just after ``after``'s offsets where given, else from
        the first record received in ``window`` (else the beginning), records outside it left
        out; stops at the end of what exists when called, or at the window's end. With
        ``runs`` a source may give records in DeliveryRuns (a loader's bulk path), else
        Deliveries. With ``wants`` (and ``runs``), records it refuses may come as ``Passed``
        instead: by the local log's key index, by the Kafka ``ktrace.object`` header."""
        ...

    def last_versions(self, topics: Sequence[str], before_us: int) -> Iterator[DeliveryRun]:
        """Each object's last version received before ``before_us`` (none for one whose
        last record then says it is gone): the state at a window's start
        (``transports.versions``), per partition in position order."""
        ...

    def summarize(self, topics: Sequence[str]) -> list[TopicSummary]: ...

    def close(self) -> None: ...
