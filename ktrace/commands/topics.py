"""ktrace topics: what a broker or local log holds."""

from __future__ import annotations

from datetime import datetime, timezone

import click

from ktrace.options import kafka_options
from ktrace.output import output_option, print_rows
from replayer.sources import Source
from replayer.sources.kafka import KafkaSource
from replayer.sources.locallog import LocalLogSource
from schemas.errors import KtraceError
from schemas.kafka_settings import KafkaSettings


def open_source(directory: str | None, kafka: KafkaSettings | None) -> Source:
    if kafka is not None:
        return KafkaSource(kafka)
    if directory is None:
        raise click.UsageError("give a local log DIRECTORY or --kafka BOOTSTRAP")
    return LocalLogSource(directory)


def require_topics(source: Source, prefix: str, where: str) -> list[str]:
    """The topics of ``prefix``; none is an error that says what the source holds instead."""
    found = source.topics(prefix)
    if found:
        return found
    others = sorted({t.rsplit(".", 1)[0] for t in source.topics() if "." in t})
    hint = (f"; its topics have prefix {', '.join(others[:5])}: pass --topic-prefix"
            if others else "; it holds no topics at all")
    raise KtraceError(f"no topics with prefix {prefix!r} in {where}{hint}")


def format_us(us: int | None) -> str | None:
    if us is None:
        return None
    return datetime.fromtimestamp(us / 1e6, timezone.utc).isoformat(timespec="milliseconds")


@click.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@kafka_options
@output_option
def topics(directory: str | None, kafka: KafkaSettings | None, topic_prefix: str, output: str) -> None:
    """List the ktrace topics of a local log DIRECTORY or a Kafka broker (--kafka), with
    record counts and the first and last receive times."""
    source = open_source(directory, kafka)
    try:
        summaries = source.summarize(source.topics(topic_prefix))
    finally:
        source.close()
    rows = [(s.topic, s.partitions, s.records, format_us(s.first_received_us),
             format_us(s.last_received_us)) for s in summaries]
    print_rows(["topic", "partitions", "records", "first_received", "last_received"], rows, output)
