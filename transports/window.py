"""A stretch of receive times a read, a load or a command keeps to (``--since``/``--until``).

Declared once, beside the Source protocol, because it travels unchanged from a command's
options through the replayer to either transport's ``read``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Window:
    """Receive times from ``since_us`` through ``until_us`` (µs since the epoch, both ends
    inclusive); an open end (None) reaches the recording's start or end."""

    since_us: int | None = None
    until_us: int | None = None

    @classmethod
    def ending_before(cls, before_us: int) -> Window:
        """Everything received before ``before_us``."""
        return cls(until_us=before_us - 1)

    @property
    def bounded(self) -> bool:
        """Whether either end is set (else the window holds every record)."""
        return self.since_us is not None or self.until_us is not None

    def before_start(self, received_us: int) -> bool:
        return self.since_us is not None and received_us < self.since_us

    def past_end(self, received_us: int) -> bool:
        return self.until_us is not None and received_us > self.until_us

    def __contains__(self, received_us: int) -> bool:
        return not (self.before_start(received_us) or self.past_end(received_us))
