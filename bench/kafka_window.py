"""What a window of a Kafka recording costs the source, step by step (wall and CPU, the
client's librdkafka threads included): finding the window (``summarize``: each partition's
first and last record), the state at its start (``replayer.window_start``: every earlier
record read, of a topic keyed by object only each key's last decoded), beside it the floor
of any such read (the messages before the window fetched and only their keys taken), and
the window's own read. The load beside the whole is
the bench's ``window`` and ``replay`` phases.
``python -m bench.kafka_window BOOTSTRAP [--prefix P]``; the window is ``phases.WINDOW``.
"""

from __future__ import annotations

import argparse
import time
from typing import Callable, Sequence, TypeVar

from confluent_kafka import Consumer, TopicPartition

from bench.phases import WINDOW
from replayer.record_filter import RecordFilter
from replayer.window_start import state_at
from transports.kafka.settings import KafkaSettings
from transports.kafka.source import KafkaSource
from transports.window import Window

T = TypeVar("T")


def timed(step: str, run: Callable[[], T]) -> T:
    wall, cpu = time.perf_counter(), time.process_time()
    found = run()
    print(f"{step}: {time.perf_counter() - wall:.2f} s, {time.process_time() - cpu:.2f} CPU-s")
    return found


def keys_before(settings: KafkaSettings, topics: Sequence[str], since_us: int
                ) -> tuple[int, int]:
    """The messages appended before ``since_us`` (``offsets_for_times``), fetched as a
    window's read fetches (128 KiB a partition), and the distinct keys among them."""
    consumer = Consumer({**settings.librdkafka_config(), "group.id": "ktrace-bench",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "fetch.wait.max.ms": 10, "max.partition.fetch.bytes": 128 * 1024})
    try:
        partitions = [TopicPartition(t, p, since_us // 1000) for t in topics
                      for p in consumer.list_topics(t, timeout=10).topics[t].partitions]
        ends = {}
        for tp in consumer.offsets_for_times(partitions, timeout=10):
            low, high = consumer.get_watermark_offsets(tp, timeout=10)
            if (end := high if tp.offset < 0 else tp.offset) > low:  # -1: all before it
                ends[(tp.topic, tp.partition)] = end
        consumer.assign([TopicPartition(t, p, 0) for t, p in ends])
        keys, messages, left = set(), 0, set(ends)
        while left:
            for message in consumer.consume(5000, timeout=0.02):
                at = (message.topic(), message.partition())
                if message.error() is not None or at not in left:
                    continue
                if message.offset() + 1 >= ends[at]:
                    left.discard(at)
                    consumer.pause([TopicPartition(*at)])
                if message.offset() < ends[at]:
                    messages += 1
                    keys.add(message.key())
        return messages, len(keys)
    finally:
        consumer.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.kafka_window",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("bootstrap", help="the broker, HOST:PORT")
    parser.add_argument("--prefix", default="ktrace", help="the recording's topic prefix")
    opts = parser.parse_args(argv)
    source = KafkaSource(KafkaSettings(bootstrap=opts.bootstrap))
    try:
        topics = source.topics(opts.prefix)
        summaries = timed("finding the window", lambda: source.summarize(topics))
        first = min(s.first_received_us for s in summaries if s.first_received_us is not None)
        last = max(s.last_received_us for s in summaries if s.last_received_us is not None)
        since_us, until_us = (first + int((last - first) * share) for share in WINDOW)
        objects = timed("the state at its start", lambda: sum(
            len(run.offsets) for run in state_at(source, opts.prefix, RecordFilter(), since_us)))
        messages, keys = timed("the messages before it, keys only", lambda: keys_before(
            KafkaSettings(bootstrap=opts.bootstrap), topics, since_us))
        print(f"{messages:,} messages before it, {keys:,} keys")
        records = timed("the window's read", lambda: sum(
            len(getattr(item, "offsets", (item,)))
            for item in source.read(topics, window=Window(since_us, until_us), runs=True)))
        print(f"{objects:,} objects at its start, {records:,} records in it, "
              f"{source.outside_window:,} messages fetched and dropped outside it")
    finally:
        source.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
