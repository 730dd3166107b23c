"""ktrace topics: what a broker or local log holds."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

import click

from ktrace.options import kafka_options
from ktrace import views
from ktrace.output import Answer, emit, output_option
from schemas.errors import KtraceError
from transports import locator

if TYPE_CHECKING:
    from transports.source import Source
    from transports.kafka.settings import KafkaSettings


def open_source(directory: str | None, kafka: KafkaSettings | None) -> Source:
    """The source the command line names: the broker (--kafka) or a local log DIRECTORY."""
    if kafka is not None:
        return locator.open_source(locator.KAFKA + kafka.bootstrap, kafka)
    if directory is None:
        raise click.UsageError("give a local log DIRECTORY or --kafka BOOTSTRAP")
    return locator.open_source(locator.LOCAL + directory)


def require_topics(source: Source, prefix: str, where: str) -> list[str]:
    """The topics of ``prefix``; none is an error that says what the source holds instead."""
    found = source.topics(prefix)
    if found:
        return found
    others = sorted({t.rsplit(".", 1)[0] for t in source.topics() if "." in t})
    hint = (f"; its topics have prefix {', '.join(others[:5])}: pass --topic-prefix"
            if others else "; it holds no topics at all")
    raise KtraceError(f"no topics with prefix {prefix!r} in {where}{hint}")


def utc_time(us: int | None) -> datetime | None:
    return None if us is None else datetime.fromtimestamp(us / 1e6, timezone.utc)


@click.command()
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
