"""Time → pixels for one drawing, and the axis ticks in UTC."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

#: Tick spacings to choose from, in seconds: the smallest giving at most ``MAX_TICKS``.
TICK_STEPS_S = (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
                7200, 21600, 43200, 86400)
MAX_TICKS = 8


@dataclass(frozen=True)
class Scale:
    start: datetime
    end: datetime
    width: float

    @classmethod
    def around(cls, times: list[datetime | None], width: float) -> "Scale":
        """A scale covering ``times`` with 3 % room at each side (at least 1 s in all)."""
        known = [t for t in times if t is not None]
        first, last = min(known), max(known)
        pad = max((last - first).total_seconds() * 0.03, 0.5)
        return cls(first - timedelta(seconds=pad), last + timedelta(seconds=pad), width)

    @property
    def seconds(self) -> float:
        return max((self.end - self.start).total_seconds(), 1e-6)

    def x(self, at: datetime) -> float:
        """Clamped into the drawing, rounded to 0.1 px (the file's size depends on it)."""
        offset = (at - self.start).total_seconds() / self.seconds * self.width
        return round(min(max(offset, 0.0), self.width), 1)

    def span(self, since: datetime, until: datetime) -> tuple[float, float]:
        x0, x1 = self.x(since), self.x(until)
        return x0, max(round(x1 - x0, 1), 1.0)

    def ticks(self) -> list[tuple[float, str]]:
        step = next((s for s in TICK_STEPS_S if self.seconds / s <= MAX_TICKS), TICK_STEPS_S[-1])
        epoch = datetime(1970, 1, 1)
        first = (self.start - epoch).total_seconds() // step * step + step
        out = []
        at = epoch + timedelta(seconds=first)
        while at <= self.end:
            fmt = "%H:%M:%S.%f" if step < 1 else "%H:%M:%S"
            label = at.strftime(fmt)[:-5] if step < 1 else at.strftime(fmt)
            out.append((self.x(at), label))
            at += timedelta(seconds=step)
        return out


def clock(at: datetime | None) -> str:
    """A UTC time of day with milliseconds, as every mark's label shows it."""
    return at.strftime("%H:%M:%S.%f")[:-3] if at else "—"


def duration(seconds: float | None) -> str:
    """Seconds as people read them: 1.93 s, 1 m 43 s, 2 h 5 m."""
    if seconds is None:
        return "—"
    if abs(seconds) < 60:
        return f"{seconds:.2f} s"
    minutes, secs = divmod(int(round(abs(seconds))), 60)
    sign = "-" if seconds < 0 else ""
    if minutes < 60:
        return f"{sign}{minutes} m {secs} s"
    return f"{sign}{minutes // 60} h {minutes % 60} m"
