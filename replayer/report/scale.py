"""Time → a position across the page's one time axis (percent of the plot's width, so the
lanes scale with the window), and the axis ticks in UTC (schemas.formats' clock)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from schemas import formats

#: Tick spacings to choose from, in seconds: the smallest giving at most ``MAX_TICKS``.
TICK_STEPS_S = (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
                7200, 21600, 43200, 86400)
#: Few enough that their labels fit side by side on the narrowest plot (~700 px at 1000 px).
MAX_TICKS = 8
#: The narrowest mark, in percent: a sub-second race on an hour's axis stays visible.
MIN_SPAN = 0.15
#: Tick labels closer than this (percent) to an edge are anchored inside the plot.
EDGE = 4.0


@dataclass(frozen=True)
class Scale:
    start: datetime
    end: datetime

    @classmethod
    def around(cls, times: list[datetime | None]) -> "Scale":
        """A scale covering ``times`` with 3 % room at each side (at least 1 s in all)."""
        known = [t for t in times if t is not None]
        first, last = min(known), max(known)
        pad = max((last - first).total_seconds() * 0.03, 0.5)
        return cls(first - timedelta(seconds=pad), last + timedelta(seconds=pad))

    @property
    def seconds(self) -> float:
        return max((self.end - self.start).total_seconds(), 1e-6)

    def x(self, at: datetime) -> float:
        """Percent of the plot, clamped into it, rounded to 0.01 (the file's size depends
        on it)."""
        offset = (at - self.start).total_seconds() / self.seconds * 100
        return round(min(max(offset, 0.0), 100.0), 2)

    def span(self, since: datetime, until: datetime) -> tuple[float, float]:
        x0, x1 = self.x(since), self.x(until)
        return x0, max(round(x1 - x0, 2), MIN_SPAN)

    def ticks(self) -> list[dict[str, object]]:
        """Each tick's position, label and anchor (labels at the edges stay inside)."""
        step = next((s for s in TICK_STEPS_S if self.seconds / s <= MAX_TICKS), TICK_STEPS_S[-1])
        epoch = datetime(1970, 1, 1)
        first = (self.start - epoch).total_seconds() // step * step + step
        out = []
        at = epoch + timedelta(seconds=first)
        while at <= self.end:
            label = formats.clock(at, 3 if step < 1 else 0)
            x = self.x(at)
            anchor = "start" if x < EDGE else "end" if x > 100 - EDGE else "middle"
            out.append({"x": x, "label": label, "anchor": anchor})
            at += timedelta(seconds=step)
        return out


def clock(at: datetime | None) -> str:
    """A mark's time of day (schemas.formats), or a dash for none."""
    return formats.clock(at) if at else "—"


def duration(seconds: float | None) -> str:
    """A mark's duration (schemas.formats), or a dash for none."""
    return "—" if seconds is None else formats.duration(seconds)
