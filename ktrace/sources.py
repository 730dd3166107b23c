"""The recording a command reads: a local log DIRECTORY or a broker (--kafka), its topics,
and where its data ends."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import click

from schemas.errors import KtraceError
from transports import locator

if TYPE_CHECKING:
    from transports.kafka.settings import KafkaSettings
    from transports.source import Source


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


def source_end(src: Source, prefix: str) -> Callable[[], int | None]:
    """The last receive time of the source's topics, asked for only by ``end-…``."""
    def end() -> int | None:
        lasts = [s.last_received_us for s in src.summarize(src.topics(prefix))]
        return max((t for t in lasts if t is not None), default=None)
    return end
