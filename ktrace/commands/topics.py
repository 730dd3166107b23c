"""ktrace topics: what a broker or local log holds."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

import click

from ktrace.options import kafka_options
from ktrace import views
from ktrace.output import Answer, emit, output_option
from ktrace.sources import open_source

if TYPE_CHECKING:
    from transports.kafka.settings import KafkaSettings


def utc_time(us: int | None) -> datetime | None:
    return None if us is None else datetime.fromtimestamp(us / 1e6, timezone.utc)


@click.command(short_help="List the ktrace topics of a local log or a Kafka broker.")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@kafka_options
@output_option
def topics(directory: str | None, kafka: KafkaSettings | None, topic_prefix: str, output: str) -> None:
    """List the ktrace topics of a local log DIRECTORY or a Kafka broker (--kafka), with
    record counts and the first and last receive times.

    Examples:

    \b
      ktrace topics ktrace-log
      ktrace topics --kafka broker:9092 -o json"""
    source = open_source(directory, kafka)
    try:
        summaries = source.summarize(source.topics(topic_prefix))
    finally:
        source.close()
    rows = [(s.topic, s.partitions, s.records, utc_time(s.first_received_us),
             utc_time(s.last_received_us)) for s in summaries]
    emit(Answer.of(views.TOPICS, (views.TOPICS.keys, rows)), output)
