"""Command-line times: RFC 3339 stamps and durations before now."""

from __future__ import annotations

import pytest

from replayer.when import parse_when
from schemas.errors import KtraceError

NOW = 1_800_000_000_000_000


@pytest.mark.parametrize("text, expected", [
    ("2h", NOW - 7_200_000_000),
    ("90s", NOW - 90_000_000),
    ("1.5m", NOW - 90_000_000),
    ("250ms", NOW - 250_000),
    ("2026-11-30T07:12:50Z", 1_796_022_770_000_000),
    ("2026-11-30T08:12:50.5+01:00", 1_796_022_770_500_000),
    ("2026-11-30 07:12:50", 1_796_022_770_000_000),
])
def test_parse_when(text: str, expected: int):
    assert parse_when(text, now_us=NOW) == expected


def test_nonsense_is_one_clear_error():
    with pytest.raises(KtraceError, match="'soon' is neither an RFC 3339 time nor a duration"):
        parse_when("soon")
