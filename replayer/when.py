"""Times on the command line: RFC 3339 stamps, or durations before now such as 90s, 15m, 2h."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

from schemas.errors import KtraceError

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)$")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_when(text: str, *, now_us: int | None = None) -> int:
    """Microseconds since the epoch for ``text``; naive stamps are taken as UTC."""
    match = _DURATION.match(text.strip())
    if match:
        now = time.time_ns() // 1000 if now_us is None else now_us
        return now - int(float(match.group(1)) * _UNIT_S[match.group(2)] * 1_000_000)
    try:
        stamp = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise KtraceError(f"{text!r} is neither an RFC 3339 time nor a duration like 2h") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return int(stamp.timestamp()) * 1_000_000 + stamp.microsecond


def to_timestamp(us: int) -> datetime:
    """A naive UTC datetime, as the database's TIMESTAMP columns hold."""
    return datetime.fromtimestamp(us / 1e6, timezone.utc).replace(tzinfo=None)
