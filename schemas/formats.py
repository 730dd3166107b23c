"""How every output writes a time, a duration and a number — the CLI's tables and JSON, the
sentences of ``explain``, the HTML report and the recorder's logs — declared once here, at
the bottom of the layers, so that the CLI (ktrace/) and the report (replayer/report/) both
use it.

- Times are RFC 3339 in UTC with ``Z``: ``2026-11-30T07:12:23.835373Z`` (JSON, to the
  microsecond), ``2026-11-30T07:12:23Z`` (a table), as precise as the value in a sentence,
  and a time of day alone is RFC 3339's ``full-time``, ``07:12:23.835Z``, where the date is
  plain from the context.
- Durations read as kubectl prints them: ``310ms``, ``1.9s``, ``45s``, ``2m03s``, ``1h02m``,
  ``3d04h``; a flag's default in the same units, unrounded (``1m30s``, ``500ms``).
- JSON numbers carry no binary noise: ``1.93125244``, not ``1.9312524400000002``.
"""

from __future__ import annotations

from datetime import datetime, timezone

#: significant digits a float keeps in JSON: enough for microseconds in 11 days of seconds,
#: few enough to drop the last bits' noise
SIGNIFICANT_DIGITS = 15


def utc_naive(value: datetime) -> datetime:
    """``value`` in UTC without tzinfo; naive times are already UTC (the database's)."""
    if value.tzinfo is not None:
        return value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


def rfc3339(value: datetime, digits: int | None = 6) -> str:
    """A time in UTC with ``Z`` and ``digits`` (0, 3 or 6) of the second's fraction; None:
    the fewest that keep the value (a sentence's ``07:12:10Z``, ``07:12:10.250Z``)."""
    value = utc_naive(value)
    if digits is None:
        digits = 0 if not value.microsecond else 3 if not value.microsecond % 1000 else 6
    spec = {0: "seconds", 3: "milliseconds", 6: "microseconds"}[digits]
    return value.isoformat(timespec=spec) + "Z"


def clock(value: datetime, digits: int = 3) -> str:
    """The time of day in UTC with ``Z`` (RFC 3339's full-time): ``07:12:23.835Z``."""
    return rfc3339(value, digits)[11:]


def duration(seconds: float) -> str:
    """Seconds as kubectl prints durations: ``0s``, ``310ms``, ``1.9s``, ``45s``, ``2m03s``,
    ``1h02m``, ``3d04h``; negative ones with ``-``."""
    sign, s = ("-" if seconds < 0 else ""), abs(seconds)
    if s == 0:
        return "0s"
    if s < 0.1:
        return f"{sign}{s * 1000:.0f}ms"
    if round(s, 1) < 10:
        return f"{sign}{s:.1f}s"
    whole = int(round(s))
    if whole < 60:
        return f"{sign}{whole}s"
    if whole < 3600:
        return f"{sign}{whole // 60}m{whole % 60:02d}s"
    if whole < 86400:
        return f"{sign}{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{sign}{whole // 86400}d{whole % 86400 // 3600:02d}h"


def spell_duration(seconds: float) -> str:
    """``seconds`` as the duration flags take it back, exactly, in the same units: ``30s``,
    ``1m30s``, ``500ms``, ``1.5s`` — how a flag's default reads in its help (``duration``
    rounds; a default must read as the value it is)."""
    ms = round(seconds * 1000)
    if 0 < ms < 1000:
        return f"{ms}ms"
    parts = []
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000)):
        count, ms = divmod(ms, size)
        if count:
            parts.append(f"{count}{unit}")
    if ms or not parts:
        parts.append(f"{ms / 1000:g}s")
    return "".join(parts)


def rounded(value: float) -> float:
    """A float as JSON carries it: the noise of binary arithmetic dropped."""
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
