"""Timestamps (tz-aware UTC datetimes) and durations (timedeltas): parsing, arithmetic,
ordering, printing and the calendar accessors."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest

from ironsight.common.cel import CelCompileError, compile

from .helpers import failure, value

UTC = dt.UTC




def test_timestamp_parses_rfc3339_into_utc() -> None:
    assert value('timestamp("2024-03-01T12:30:00Z")') == dt.datetime(2024, 3, 1, 12, 30,
                                                                     tzinfo=UTC)
    parsed = value('timestamp("1972-01-01T10:00:20.021-05:00")')
    assert parsed == dt.datetime(1972, 1, 1, 15, 0, 20, 21000, tzinfo=UTC)
    assert parsed.tzinfo is UTC


def test_nanoseconds_are_truncated_to_microseconds() -> None:
    assert value('timestamp("2024-01-01T00:00:00.123456789Z")').microsecond == 123456


def test_a_bad_timestamp_literal_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match="invalid timestamp"):
        compile('timestamp("2024-01-01")')


def test_a_bad_timestamp_at_evaluation_is_an_evaluation_error() -> None:
    assert "invalid timestamp" in failure("timestamp(s)", s="2024-13-01T00:00:00Z").reason


def test_timestamp_of_an_int_counts_unix_seconds() -> None:
    assert value("timestamp(86400)") == dt.datetime(1970, 1, 2, tzinfo=UTC)
    assert value('int(timestamp("1970-01-01T00:01:00Z"))') == 60


def test_duration_parses_go_style_strings() -> None:
    assert value('duration("720h")') == dt.timedelta(hours=720)
    assert value('duration("1.5s")') == dt.timedelta(seconds=1.5)
    assert value('duration("30m")') == dt.timedelta(minutes=30)
    assert value('duration("1h30m15s")') == dt.timedelta(hours=1, minutes=30, seconds=15)
    assert value('duration("-2ms")') == dt.timedelta(milliseconds=-2)
    assert value('duration("0")') == dt.timedelta(0)


def test_a_bad_duration_literal_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match="invalid duration"):
        compile('duration("1d")')


def test_timestamps_and_durations_add_and_subtract() -> None:
    start = dt.datetime(2024, 1, 1, tzinfo=UTC)
    assert value('t + duration("24h")', t=start) == dt.datetime(2024, 1, 2, tzinfo=UTC)
    assert value('duration("1h") + t', t=start) == dt.datetime(2024, 1, 1, 1, tzinfo=UTC)
    assert value('t - duration("1h")', t=start) == dt.datetime(2023, 12, 31, 23, tzinfo=UTC)
    assert value('t - timestamp("2023-12-31T00:00:00Z")', t=start) == dt.timedelta(days=1)
    assert value('duration("1h") + duration("30m")') == dt.timedelta(minutes=90)
    assert value('duration("1h") - duration("30m")') == dt.timedelta(minutes=30)


def test_leaving_the_timestamp_range_is_an_error() -> None:
    assert failure('t + duration("48h")',
                   t=dt.datetime(9999, 12, 31, tzinfo=UTC)).reason == "timestamp out of range"


def test_leaving_the_duration_range_is_an_error() -> None:
    assert failure('d + d', d=dt.timedelta(days=3_000_000)).reason == "duration out of range"


def test_timestamps_and_durations_order() -> None:
    recent = dt.datetime(2024, 6, 1, tzinfo=UTC)
    assert value('t > timestamp("2024-01-01T00:00:00Z")', t=recent) is True
    assert value('duration("1h") < duration("61m")') is True


def test_a_naive_datetime_is_read_as_utc() -> None:
    naive = dt.datetime(2024, 1, 1, 12)
    assert value('t == timestamp("2024-01-01T12:00:00Z")', t=naive) is True
    assert value('t < timestamp("2024-01-01T12:00:01Z")', t=naive) is True


def test_timestamps_in_other_zones_compare_by_instant() -> None:
    paris = dt.datetime(2024, 1, 1, 13, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert value('t == timestamp("2024-01-01T12:00:00Z")', t=paris) is True


def test_string_prints_timestamps_as_rfc3339_and_durations_in_seconds() -> None:
    assert value('string(timestamp("2024-01-01T01:02:03.5+01:00"))') == (
        "2024-01-01T00:02:03.5Z")
    assert value('string(duration("1h"))') == "3600s"
    assert value('string(duration("-1.5s"))') == "-1.5s"


def test_calendar_accessors_read_utc_by_default() -> None:
    t = dt.datetime(2024, 3, 10, 14, 5, 6, 789000, tzinfo=UTC)  # a Sunday
    assert value("t.getFullYear()", t=t) == 2024
    assert value("t.getMonth()", t=t) == 2
    assert value("t.getDate()", t=t) == 10
    assert value("t.getDayOfMonth()", t=t) == 9
    assert value("t.getDayOfWeek()", t=t) == 0
    assert value("t.getDayOfYear()", t=t) == 69
    assert value("t.getHours()", t=t) == 14
    assert value("t.getMinutes()", t=t) == 5
    assert value("t.getSeconds()", t=t) == 6
    assert value("t.getMilliseconds()", t=t) == 789


def test_calendar_accessors_take_a_fixed_offset_or_utc() -> None:
    t = dt.datetime(2024, 1, 1, 23, 30, tzinfo=UTC)
    assert value('t.getHours("+05:30")', t=t) == 5
    assert value('t.getDate("+05:30")', t=t) == 2
    assert value('t.getHours("-01:00")', t=t) == 22
    assert value('t.getHours("UTC")', t=t) == 23


@pytest.mark.skipif("America/New_York" not in zoneinfo.available_timezones(),
                    reason="no time zone database on this machine")
def test_calendar_accessors_take_an_iana_time_zone() -> None:
    t = dt.datetime(2024, 1, 1, 23, 30, tzinfo=UTC)
    assert value('t.getHours("America/New_York")', t=t) == 18


def test_an_unknown_time_zone_is_an_error() -> None:
    t = dt.datetime(2024, 1, 1, tzinfo=UTC)
    assert failure('t.getHours("Nowhere/Special")', t=t).reason == (
        "unknown time zone 'Nowhere/Special'")


def test_duration_accessors_count_whole_units() -> None:
    assert value('duration("1h30m").getHours()') == 1
    assert value('duration("1h30m").getMinutes()') == 90
    assert value('duration("90s").getSeconds()') == 90
    assert value('duration("1.25s").getMilliseconds()') == 250
    assert value('duration("-90m").getHours()') == -1
