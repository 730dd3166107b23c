"""Command-line times: RFC 3339 stamps, durations before now, and before the data's end."""

from __future__ import annotations

import pytest

from ktrace.when import parse_duration, parse_when
from schemas.errors import KtraceError
from schemas.formats import spell_duration

NOW = 1_800_000_000_000_000


@pytest.mark.parametrize("text, expected", [
    ("2h", NOW - 7_200_000_000),
    ("90s", NOW - 90_000_000),
    ("1.5m", NOW - 90_000_000),
    ("250ms", NOW - 250_000),
    ("2h30m", NOW - 9_000_000_000),
    ("1.5h", NOW - 5_400_000_000),
    ("1d", NOW - 86_400_000_000),
    ("1h2m3s", NOW - 3_723_000_000),
    ("2026-11-30T07:12:50Z", 1_796_022_770_000_000),
    ("2026-11-30T08:12:50.5+01:00", 1_796_022_770_500_000),
    ("2026-11-30 07:12:50", 1_796_022_770_000_000),
])
def test_parse_when(text: str, expected: int):
    assert parse_when(text, now_us=NOW) == expected


def test_nonsense_is_one_clear_error():
    with pytest.raises(KtraceError, match="'soon' is neither an RFC 3339 time nor a duration"):
        parse_when("soon")


END = 1_700_000_000_000_000


@pytest.mark.parametrize("text, expected", [
    ("end", END), ("end-30m", END - 1_800_000_000), ("end-2h30m", END - 9_000_000_000)])
def test_end_counts_back_from_the_data(text: str, expected: int):
    assert parse_when(text, now_us=NOW, end_us=lambda: END) == expected


def test_end_without_data_is_one_clear_error():
    with pytest.raises(KtraceError, match="counts back from the data's end"):
        parse_when("end-5m", end_us=lambda: None)


def test_a_bare_number_is_seconds_only_where_asked():
    assert parse_duration("90", bare_seconds=True) == 90.0
    assert parse_duration("2m30s") == 150.0
    with pytest.raises(KtraceError, match="'90' is not a duration"):
        parse_duration("90")
    with pytest.raises(KtraceError, match="neither an RFC 3339 time nor a duration"):
        parse_when("90")  # a time is never a bare number: seconds before what?


@pytest.mark.parametrize("seconds, spelled", [
    (30.0, "30s"), (60.0, "1m"), (1.0, "1s"), (0.5, "500ms"), (1.5, "1.5s"), (90.0, "1m30s"),
    (3600.0, "1h"), (86400.0 + 61, "1d1m1s"), (0.0, "0s"), (10.25, "10.25s"),
])
def test_a_duration_is_spelled_as_the_flags_take_it(seconds, spelled):
    assert spell_duration(seconds) == spelled
    assert parse_duration(spelled) == pytest.approx(seconds)
