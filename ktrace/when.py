"""Times and durations on the command line, as kubectl's ``--since`` takes them.

- an RFC 3339 stamp (``2026-11-30T07:12:50Z``; without a zone it is UTC);
- a duration before now: ``90s``, ``15m``, ``2h30m``, ``1.5h``, ``7d``, ``250ms``;
- ``end`` or ``end-30m``: the data's end, or a duration before it (the last record
  received), for recordings that are not from the last few minutes.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from typing import Any, Callable

import click

from schemas.errors import KtraceError
from schemas.formats import rfc3339
from transports.window import Window

_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_DURATION = re.compile(rf"^(?:{_PART.pattern})+$")
END = "end"
#: how --since, --until and --at read, for their help
TIME_FORMS = "RFC 3339, a duration before now (2h30m), or before the data's end (end-30m)"


def parse_duration(text: str, *, bare_seconds: bool = False) -> float:
    """Seconds in ``text``: ``2h30m``, ``90s``, ``1.5h``, ``1d``; a bare number is seconds
    only where ``bare_seconds`` (flags that took seconds before durations)."""
    value = text.strip().lower()
    if bare_seconds and re.fullmatch(r"\d+(?:\.\d+)?", value):
        return float(value)
    if not _DURATION.match(value):
        raise KtraceError(f"{text!r} is not a duration like 90s, 2h30m, 1.5h or 7d")
    return sum(float(n) * _UNIT_S[unit] for n, unit in _PART.findall(value))


def parse_when(text: str, *, now_us: int | None = None,
               end_us: Callable[[], int | None] | None = None) -> int:
    """Microseconds since the epoch for ``text``. ``end_us`` gives the data's end for the
    ``end-…`` form (asked only when the form is used)."""
    value = text.strip()
    if value == END or value.startswith(END + "-"):
        end = end_us() if end_us is not None else None
        if end is None:
            raise KtraceError(f"{text!r} counts back from the data's end, and there is no "
                              "data here to end")
        return end - _before(value[len(END) + 1:])
    if _DURATION.match(value.lower()):
        now = time.time_ns() // 1000 if now_us is None else now_us
        return now - _before(value)
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise KtraceError(f"{text!r} is neither an RFC 3339 time nor a duration like 2h30m "
                          "(before now) or end-30m (before the data's end)") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return int(stamp.timestamp()) * 1_000_000 + stamp.microsecond


def _before(duration: str) -> int:
    return int(round(parse_duration(duration) * 1_000_000)) if duration else 0


def to_timestamp(us: int) -> datetime:
    """A naive UTC datetime, as the database's TIMESTAMP columns hold."""
    return datetime.fromtimestamp(us / 1e6, timezone.utc).replace(tzinfo=None)


def to_us(stamp: datetime) -> int:
    """Microseconds since the epoch of a database TIMESTAMP (naive UTC)."""
    aware = stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)
    return int(aware.timestamp()) * 1_000_000 + aware.microsecond


def utc(us: int) -> str:
    return rfc3339(to_timestamp(us))


def parse_window(since: str | None, until: str | None,
                 end_us: Callable[[], int | None]) -> Window:
    """--since/--until as a Window (``end_us``: the data's end, for ``end-30m``); a window
    that ends before it starts is a usage error."""
    since_us = parse_when(since, end_us=end_us) if since else None
    until_us = parse_when(until, end_us=end_us) if until else None
    if since_us is not None and until_us is not None and since_us > until_us:
        raise click.UsageError(f"--since {utc(since_us)} is after --until {utc(until_us)}")
    return Window(since_us, until_us)


def between(window: Window) -> str:
    """``window`` in an error line: "between <start> and <end>", an open end named so."""
    start = "the start" if window.since_us is None else utc(window.since_us)
    end = "the end" if window.until_us is None else utc(window.until_us)
    return f"between {start} and {end}"


def database_end(con: Any) -> Callable[[], int | None]:
    """The database's last receive time, asked for only by ``end-…``."""
    def end() -> int | None:
        from replayer.analyses import data_end
        last = data_end(con)
        return None if last is None else to_us(last)
    return end


def moment(value: str | None, con: Any) -> datetime | None:
    """--at as a database TIMESTAMP; ``end-…`` counts back from the database's end."""
    return to_timestamp(parse_when(value, end_us=database_end(con))) if value else None
