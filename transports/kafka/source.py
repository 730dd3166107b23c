"""Reads ktrace topics from a Kafka cluster, by partition, with the positions to resume.

The consumer is confluent-kafka's (librdkafka: fetching, decompression, checksums and
record parsing in C): kafka-python's spent ~100 CPU-µs per message in Python, more than the
rest of a load's reading side. It is assigned partitions, never joins a group and commits
nothing: the positions live in the replay database.
"""

from __future__ import annotations

import logging
import time
from typing import Iterator, Mapping, Sequence

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from schemas import envelope, repository
from schemas.errors import DecodeError, TransportError, Unreadable
from schemas.topics import keyed_by_own_uid
from transports import locator, versions
from transports.kafka.framing import HEADER_OBJECT, HEADER_SCHEMA, ValueDecoder, object_of
from transports.kafka.registry import RegistryClient
from transports.kafka.settings import KafkaSettings
from transports.source import Delivery, DeliveryRun, PartitionKey, Passed, TopicSummary, Wants
from transports.window import Window

log = logging.getLogger(__name__)
#: A read takes what has arrived: a consume waits for a whole batch or its timeout, so at
#: 0.5 s each partial batch cost 0.5 s (several a window). Every read ends: none idles.
POLL_S = 0.02
#: Messages taken from librdkafka's queue per call.
CONSUME_BATCH = 5000
#: The consumer of reads that stop at a point (a window, the scan before it, records by
#: position, the summary's edges): how long the broker may hold a fetch for more data.
#: librdkafka's default, 500 ms, was the time of every fetch by offset (~500 ms each,
#: idle): the fetch in flight at the partition's end had to come back before a new
#: offset's could be sent.
POSITION_FETCH_WAIT_MS = 10
#: ...how much of a partition one fetch takes, and of all partitions it queues ahead: what
#: lies past a window's end is fetched and dropped (with the whole load's 8 MiB each, most
#: of the recording after a 100k window: 52k messages handed to Python beside its 9k)...
POSITION_FETCH_BYTES = 128 * 1024
POSITION_QUEUE_KB = 1024
#: ...and how soon it fetches again once its queue has room (librdkafka's 1 s, at such a
#: queue, was a pause of ~1 s every few batches of a scan).
POSITION_QUEUE_BACKOFF_MS = 10
#: Wanted offsets of a partition this close are read in one pass (the messages between them
#: skipped, not decoded) rather than each sought again.
POSITION_GAP = 500
#: A fetch by position that gets no message for this long gives up (the records stay None).
POSITION_TIMEOUT_S = 5.0
#: Messages the state at a window's start holds undecoded (each key's last so far) before
#: it decodes them into the objects' last versions and lets them go.
HELD_MESSAGES = 20_000
LEADER_ELECTION = frozenset({KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE})


class KafkaSource:
    def __init__(self, settings: KafkaSettings) -> None:
        self._settings = settings
        self.locator = locator.KAFKA + settings.bootstrap
        registry = settings.schema_registry
        self._decoder = ValueDecoder(RegistryClient(registry) if registry else None)
        self._consumer = Consumer(_consumer_config(settings))
        #: the consumer of reads that stop at a point, made at the first (its short fetch
        #: wait would make a read to the partitions' ends poll the broker at their ends)
        self._stopping_consumer: Consumer | None = None
        self._stopping_topics: set[str] = set()  # whose metadata it has
        self._closed = False
        #: messages a windowed read fetched and dropped: before its start (after the seek by
        #: append time) or past its end (until the partition's fetches stopped)
        self.outside_window = 0
        #: messages a read with ``wants`` passed by by their ``ktrace.object`` header
        self.passed_by = 0
        try:
            self._topics = self._consumer.list_topics(timeout=settings.connect_timeout_s).topics
        except KafkaException as exc:
            self._consumer.close()
            raise TransportError(
                f"Kafka broker {settings.bootstrap} unreachable within "
                f"{settings.connect_timeout_s:g}s ({exc.args[0].str()})") from exc

    def topics(self, prefix: str | None = None) -> list[str]:
        names = sorted(self._metadata())
        return [t for t in names if not t.startswith("__")
                and (prefix is None or t.startswith(prefix + "."))]

    def read(self, topics: Sequence[str], *, after: Mapping[PartitionKey, int] | None = None,
             window: Window = Window(), runs: bool = False, wants: Wants | None = None
             ) -> Iterator[Delivery | DeliveryRun | Passed]:
        partitions = self._partitions(topics)
        if not partitions:
            return
        # a read to a point stops where the whole load's fetch-ahead would run on
        consumer = self._consumer if window.until_us is None else self._stopping(topics)
        marks = {key: self._watermarks(*key) for key in partitions}
        ends = {key: high for key, (_, high) in marks.items()}
        starts = self._starts(marks, after or {}, window.since_us)
        remaining = {key for key, start in starts.items() if start < ends[key]}
        # the partitions with nothing to read left out: an idle one's fetch would be held
        # at the broker while the others' wait behind it
        assigned = [TopicPartition(*key, starts[key]) for key in remaining]
        consumer.assign(assigned)
        consumer.resume(assigned)  # a partition an earlier read paused stays paused
        try:
            stopped: set[PartitionKey] = set()
            fingerprint = repository.current().fingerprint if runs else None
            bounded = window.bounded  # asked once: most reads have no window
            # a window's reads stop at its end by receive time, in the values: not passed by
            wanted = _Wanted(wants) if runs and not bounded and wants is not None else None
            while remaining:
                pending = _Pending()
                for message in consumer.consume(CONSUME_BATCH, timeout=POLL_S):
                    key = (message.topic(), message.partition())
                    if key in stopped:
                        self.outside_window += 1
                        continue  # fetched before the partition was paused
                    if message.error() is not None:
                        if message.error().code() == KafkaError._PARTITION_EOF:
                            continue
                        raise TransportError(f"Kafka {key[0]}/{key[1]}: {message.error().str()}")
                    if message.offset() + 1 >= ends[key]:
                        remaining.discard(key)
                    headers = message.headers()
                    if wanted is not None and not wanted(key[0], headers):
                        self.passed_by += 1
                        yield from pending.pass_by(key, message.offset())
                        continue
                    value = message.value() or b""
                    found = _envelope(value, headers, fingerprint)
                    if found is not None:  # an envelope-only record: taken into a run
                        if bounded and self._outside(consumer, window, found.received_at,
                                                     key, stopped, remaining):
                            continue
                        yield from pending.add(key, message.offset(), found, value)
                        continue
                    yield from pending.take()
                    delivery = _decode(message, self._decoder)
                    record = delivery.record
                    if getattr(delivery.error, "retryable", False):
                        # The rest of this partition waits for the next read, which starts
                        # again at this record (the loader keeps its position before it).
                        _stop(consumer, key, stopped, remaining)
                        yield delivery
                        continue
                    # (before the window's start too: the seek used append times, which
                    # come after receive times)
                    if record is not None and bounded and self._outside(
                            consumer, window, record["receivedAt"], key, stopped, remaining):
                        continue
                    yield delivery
                yield from pending.take()
        finally:
            # no fetch left waiting at the partitions' ends: a request after it (the next
            # read's offsets, ~0.9 s each behind one) would wait for its long poll
            if not self._closed:
                consumer.unassign()

    def last_versions(self, topics: Sequence[str], before_us: int) -> Iterator[DeliveryRun]:
        """Each partition read from its beginning up to ``before_us`` (a topic has no index
        by object, and no bound on how far back an object's last version lies: an object
        listed when the recording began and unchanged since). Of a topic keyed by each
        object's own uid only each key's last message is decoded (``_last_by_key``); the
        Events' topic, keyed by the object each Event is about, is scanned, envelopes only.
        Reading the messages' headers to tell Events apart would cost what decoding their
        envelopes does (docs/performance.md, "What limits a window")."""
        by_key = [t for t in topics if keyed_by_own_uid(t)]
        scanned = [t for t in topics if not keyed_by_own_uid(t)]
        if by_key:
            yield from self._last_by_key(by_key, before_us)
        if scanned:
            yield from versions.scan(self.read(scanned, window=Window.ending_before(before_us),
                                               runs=True))

    def _last_by_key(self, topics: Sequence[str], before_us: int) -> Iterator[DeliveryRun]:
        """The last versions in topics keyed by object uid: the messages appended before
        ``before_us`` (received before it too) taken by key, the last of each decoded; then
        those appended after it but received before it (a spooled recording's), read."""
        marks = {key: self._watermarks(*key) for key in self._partitions(topics)}
        ends = self._starts(marks, {}, before_us)  # the first appended at or after it
        last = versions.LastVersions()
        held: dict[PartitionKey, dict[bytes | None, Message]] = {}
        consumer = self._stopping(topics)
        remaining = {key for key, (low, _) in marks.items() if ends[key] > low}
        assigned = [TopicPartition(*key, marks[key][0]) for key in remaining]
        consumer.assign(assigned)
        consumer.resume(assigned)  # a partition an earlier read paused stays paused
        try:
            while remaining:
                for message in consumer.consume(CONSUME_BATCH, timeout=POLL_S):
                    key = (message.topic(), message.partition())
                    if message.error() is not None:
                        if message.error().code() == KafkaError._PARTITION_EOF:
                            continue
                        raise TransportError(f"Kafka {key[0]}/{key[1]}: {message.error().str()}")
                    if key not in remaining:
                        self.outside_window += 1
                        continue  # fetched before the partition was paused
                    if message.offset() < ends[key]:
                        held.setdefault(key, {})[message.key()] = message
                    else:  # past the end: the offsets just before it held no message
                        self.outside_window += 1
                    if message.offset() + 1 >= ends[key]:
                        consumer.pause([TopicPartition(*key)])
                        remaining.discard(key)
                if sum(map(len, held.values())) >= HELD_MESSAGES:
                    self._take_held(held, last)
        finally:
            if not self._closed:
                consumer.unassign()
        self._take_held(held, last)
        for item in self.read(topics, after={key: end - 1 for key, end in ends.items()},
                              window=Window.ending_before(before_us), runs=True):
            last.take(item)
        return last.runs()

    def _take_held(self, held: dict[PartitionKey, dict[bytes | None, Message]],
                   last: versions.LastVersions) -> None:
        """The messages ``held`` (each key's last) decoded into ``last``, each partition's in
        order, and let go: what is held stays bounded, whatever the history."""
        fingerprint = repository.current().fingerprint
        for messages in held.values():
            for message in sorted(messages.values(), key=lambda m: m.offset()):
                value = message.value() or b""
                found = _envelope(value, message.headers(), fingerprint)
                last.take(_decode(message, self._decoder) if found is None else DeliveryRun(
                    message.topic(), message.partition(), [message.offset()], [found], [value]))
        held.clear()

    def summarize(self, topics: Sequence[str]) -> list[TopicSummary]:
        marks = {key: self._watermarks(*key) for key in self._partitions(topics)}
        held = {key: (low, high) for key, (low, high) in marks.items() if high > low}
        # each partition's first and last record, all partitions' in one read each
        edges = [self._one_each({key: low for key, (low, _) in held.items()}),
                 self._one_each({key: high - 1 for key, (_, high) in held.items()})]
        summaries = []
        for topic in topics:
            keys = [key for key in marks if key[0] == topic]
            times = [record["receivedAt"] for found in edges for key in keys
                     if (record := found.get(key)) is not None]
            summaries.append(TopicSummary(
                topic, len(keys), sum(marks[k][1] - marks[k][0] for k in keys),
                min(times, default=None), max(times, default=None)))
        return summaries

    def close(self) -> None:
        self._closed = True
        self._consumer.close()
        if self._stopping_consumer is not None:
            self._stopping_consumer.close()

    def record_at(self, topic: str, partition: int, offset: int) -> dict | None:
        """The record at ``offset``: a fetch by offset (None once retention removed it)."""
        return self.records_at(topic, partition, [offset])[offset]

    def records_at(self, topic: str, partition: int,
                   offsets: Sequence[int]) -> dict[int, dict | None]:
        """The records at ``offsets`` of one partition, each stretch of nearby offsets read
        in one pass from one seek (None for an offset retention removed, or past the end)."""
        found: dict[int, dict | None] = dict.fromkeys(offsets)
        low, high = self._watermarks(topic, partition)
        wanted = sorted(o for o in found if low <= o < high)
        if not wanted:
            return found
        self._stopping([topic])
        for stretch in _stretches(wanted, POSITION_GAP):
            self._read_stretch(topic, partition, stretch, high, found)
        return found

    def _one_each(self, at: Mapping[PartitionKey, int]) -> dict[PartitionKey, dict | None]:
        """The record at one offset of each of several partitions, read together: one fetch
        for them all, not a seek and a wait each (None where nothing came in time)."""
        found: dict[PartitionKey, dict | None] = dict.fromkeys(at)
        if not at:
            return found
        consumer = self._stopping(sorted({topic for topic, _ in at}))
        assigned = [TopicPartition(t, p, o) for (t, p), o in at.items()]
        consumer.assign(assigned)
        consumer.resume(assigned)  # a partition an earlier read paused stays paused
        waiting, deadline = set(at), time.monotonic() + POSITION_TIMEOUT_S
        try:
            while waiting and time.monotonic() < deadline:
                for message in consumer.consume(CONSUME_BATCH, timeout=POLL_S):
                    key = (message.topic(), message.partition())
                    if message.error() is None and key in waiting:
                        waiting.discard(key)  # the partition's next messages are dropped
                        found[key] = _decode(message, self._decoder).record
        finally:
            consumer.unassign()
        return found

    def _read_stretch(self, topic: str, partition: int, stretch: list[int], high: int,
                      found: dict[int, dict | None]) -> None:
        """Read from ``stretch[0]`` through its last offset, decoding the wanted ones. A
        removed start resets to the partition's earliest record: the offsets before it
        are never seen and stay None."""
        consumer, wanted = self._stopping_consumer, set(stretch)
        assert consumer is not None
        assigned = [TopicPartition(topic, partition, stretch[0])]
        consumer.assign(assigned)
        consumer.resume(assigned)  # a window's read may have paused it
        next_offset, end = stretch[0], min(stretch[-1], high - 1)
        while next_offset <= end:
            # exactly the messages up to ``end``: a batch asked for more waits its timeout
            messages = consumer.consume(min(end - next_offset + 1, CONSUME_BATCH),
                                        timeout=POSITION_TIMEOUT_S)
            read = [m for m in messages if m.error() is None]
            if not read:
                return  # nothing came: the rest stay None
            for message in read:
                if message.offset() in wanted:
                    found[message.offset()] = _decode(message, self._decoder).record
            next_offset = max(next_offset, read[-1].offset() + 1)

    def _stopping(self, topics: Sequence[str]) -> Consumer:
        """The consumer of reads that stop at a point, with the leaders of ``topics``."""
        consumer = self._stopping_consumer
        if consumer is None:
            consumer = self._stopping_consumer = Consumer({
                **_consumer_config(self._settings), "fetch.wait.max.ms": POSITION_FETCH_WAIT_MS,
                "max.partition.fetch.bytes": POSITION_FETCH_BYTES,
                "queued.max.messages.kbytes": POSITION_QUEUE_KB,
                "fetch.queue.backoff.ms": POSITION_QUEUE_BACKOFF_MS})
        for topic in topics:
            if topic in self._stopping_topics:
                continue
            # asked for now: librdkafka learns a newly assigned topic's leader on a 1 s
            # timer (each topic's first fetch took ~1 s)
            self._stopping_topics.add(topic)
            try:
                consumer.list_topics(topic, timeout=self._settings.connect_timeout_s + 5)
            except KafkaException as exc:
                raise TransportError(f"Kafka {topic}: metadata unavailable "
                                     f"({exc.args[0].str()})") from exc
        return consumer

    def _metadata(self) -> dict:
        try:
            self._topics = self._consumer.list_topics(
                timeout=self._settings.connect_timeout_s + 5).topics
        except KafkaException as exc:
            raise TransportError(f"Kafka topics could not be listed: {exc.args[0].str()}") from exc
        return self._topics

    def _partitions(self, topics: Sequence[str]) -> list[PartitionKey]:
        known = self._metadata()
        return [(t, p) for t in topics if t in known and known[t].error is None
                for p in sorted(known[t].partitions)]

    def _watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        """(low, high) offsets; retried while the broker is electing the partition's leader."""
        deadline = time.monotonic() + self._settings.connect_timeout_s + 5
        while True:
            try:
                return self._consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=self._settings.connect_timeout_s + 5)
            except KafkaException as exc:
                electing = exc.args[0].code() in LEADER_ELECTION or exc.args[0].retriable()
                if not electing or time.monotonic() > deadline:
                    raise TransportError(f"Kafka {topic}/{partition}: offsets unavailable "
                                         f"({exc.args[0].str()})") from exc
                time.sleep(0.2)

    def _starts(self, marks: dict[PartitionKey, tuple[int, int]],
                after: Mapping[PartitionKey, int], since_us: int | None) -> dict[PartitionKey, int]:
        """Where each partition's read starts: after its resume position, else at the first
        record appended at or after ``since_us`` (none: at its end), else at its beginning."""
        by_time: dict[PartitionKey, int] = {}
        asked = [TopicPartition(t, p, since_us // 1000) for t, p in marks if (t, p) not in after
                 ] if since_us is not None else []
        if asked:
            found = self._consumer.offsets_for_times(
                asked, timeout=self._settings.connect_timeout_s + 5)
            by_time = {(tp.topic, tp.partition): tp.offset for tp in found}
        starts = {}
        for key, (low, high) in marks.items():
            if key in after:
                starts[key] = after[key] + 1
            elif since_us is not None:
                found_at = by_time.get(key, -1)
                starts[key] = high if found_at < 0 else found_at
            else:
                starts[key] = low
        return starts

    def _outside(self, consumer: Consumer, window: Window, received_us: int,
                 key: PartitionKey, stopped: set[PartitionKey],
                 remaining: set[PartitionKey]) -> bool:
        """Whether a message received at ``received_us`` lies outside ``window`` (counted
        in ``outside_window``); one past its end stops its partition's read."""
        if received_us in window:
            return False
        self.outside_window += 1
        if window.past_end(received_us):
            _stop(consumer, key, stopped, remaining)
        return True


def _stop(consumer: Consumer, key: PartitionKey, stopped: set[PartitionKey],
          remaining: set[PartitionKey]) -> None:
    consumer.pause([TopicPartition(*key)])
    stopped.add(key)
    remaining.discard(key)


def _consumer_config(settings: KafkaSettings) -> dict[str, object]:
    return {
        **settings.librdkafka_config(),
        "logger": log,
        # Errors only from what librdkafka logs: a broker it cannot reach comes back as the
        # one-line TransportError of KafkaSource, not after a FAIL line per connection attempt.
        "log_level": 2,
        "group.id": "ktrace-replay",  # required by librdkafka; partitions are assigned
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        # What librdkafka fetches ahead, per partition: its default (64 MiB each) made a
        # 100k-event replay of 8 topics peak at 1.3 GB.
        "queued.max.messages.kbytes": 8 * 1024,
        "fetch.max.bytes": 16 * 1024 * 1024,
        "max.partition.fetch.bytes": 8 * 1024 * 1024,
    }


def _stretches(offsets: list[int], gap: int) -> Iterator[list[int]]:
    """Sorted ``offsets`` in runs whose neighbours are at most ``gap`` apart."""
    run: list[int] = []
    for offset in offsets:
        if run and offset - run[-1] > gap:
            yield run
            run = []
        run.append(offset)
    if run:
        yield run


class _Pending:
    """One partition's consecutive messages, until they are taken: envelopes (a run), or
    messages passed by (a Passed), never both, so a partition's items stay in order."""

    def __init__(self) -> None:
        self.key: PartitionKey | None = None
        self.offsets: list[int] = []
        self.envelopes: list[envelope.Envelope] = []
        self.values: list[bytes] = []
        self.passed = 0

    def add(self, key: PartitionKey, offset: int, found: envelope.Envelope,
            value: bytes) -> list[DeliveryRun | Passed]:
        """Add one envelope; what it ends (another partition's, or passed messages)."""
        done = self.take() if key != self.key or self.passed else []
        self.key = key
        self.offsets.append(offset)
        self.envelopes.append(found)
        self.values.append(value)
        return done

    def pass_by(self, key: PartitionKey, offset: int) -> list[DeliveryRun | Passed]:
        """Pass one message by; what it ends (another partition's, or a run)."""
        done = self.take() if key != self.key or self.envelopes else []
        self.key = key
        self.offsets[:] = [offset]
        self.passed += 1
        return done

    def take(self) -> list[DeliveryRun | Passed]:
        if self.key is None:
            return []
        found: DeliveryRun | Passed
        if self.passed:
            found = Passed(*self.key, self.offsets[-1], self.passed)
        else:
            found = DeliveryRun(*self.key, self.offsets, self.envelopes, self.values)
        self.key, self.offsets, self.envelopes, self.values, self.passed = None, [], [], [], 0
        return [found]


class _Wanted:
    """Whether ``wants`` may keep a message, by its ``ktrace.object`` header (one written
    without it is decoded and judged on its envelope); each (topic, header) judged once a
    read, as ``wants`` answers the same through a read."""

    def __init__(self, wants: Wants) -> None:
        self._wants = wants
        self._judged: dict[tuple[str, bytes], bool] = {}

    def __call__(self, topic: str, headers: list[tuple[str, bytes]] | None) -> bool:
        for name, given in reversed(headers or ()):  # the sink adds it last
            if name == HEADER_OBJECT:
                found = self._judged.get((topic, given))
                if found is None:
                    found = self._judged[(topic, given)] = self._judge(topic, given)
                return found
        return True

    def _judge(self, topic: str, header: bytes) -> bool:
        try:
            return self._wants(topic, *object_of(header))
        except UnicodeDecodeError:
            return True  # not ours to judge: the envelope decides


def _envelope(value: bytes, headers: list[tuple[str, bytes]] | None,
              fingerprint: bytes | None) -> envelope.Envelope | None:
    """The envelope of a message framed with the current schema's fingerprint whose
    value is one envelope-only record; None for anything the ValueDecoder reads."""
    if fingerprint is None:
        return None
    for name, given in headers or ():
        if name == HEADER_SCHEMA:
            if given != fingerprint:
                return None
            found, end = envelope.decode_run(value, 0, 1)
            return found[0] if found and end == len(value) else None
    return None


def _decode(message: Message, decoder: ValueDecoder) -> Delivery:
    return decode_value(message.topic(), message.partition(), message.offset(),
                        message.value() or b"", message.headers(), decoder)


def decode_value(topic: str, partition: int, offset: int, value: bytes,
                 headers: list[tuple[str, bytes]] | None, decoder: ValueDecoder) -> Delivery:
    """One message's Delivery: its record, or why its bytes are unreadable."""
    try:
        record = decoder.decode(value, headers)
    except DecodeError as exc:
        if getattr(exc, "retryable", False):  # not damage: the record is read again later
            return Delivery(topic, partition, offset, None, exc)
        # A record is Kafka's unit: its bytes are the unreadable range.
        damage = Unreadable(f"record does not decode: {exc}", len(value), offset + 1)
        return Delivery(topic, partition, offset, None, damage)
    return Delivery(topic, partition, offset, record)
