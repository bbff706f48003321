"""Timestamps (tz-aware UTC datetimes) and durations (timedeltas): parsing and printing them as
CEL does (RFC 3339; Go-style duration strings), their range, and the calendar accessors.

Python keeps microseconds, so nanoseconds in a literal are truncated."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from fractions import Fraction
from types import MappingProxyType
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import CelEvalError

UTC = dt.UTC
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
# google.protobuf.Duration's range: about ten thousand years either way.
MAX_DURATION = dt.timedelta(seconds=315_576_000_000)

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_NANOS: Final = MappingProxyType({"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000,
          "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000})
_FIXED_ZONE = re.compile(r"([+-])(\d{2}):(\d{2})")


def utc(value: dt.datetime) -> dt.datetime:
    """`value` in UTC; a naive datetime is taken to be UTC already (as the services store
    times), so that documents straight from the database compare with timestamp()."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def parse_timestamp(text: str) -> dt.datetime:
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise CelEvalError(f"invalid timestamp {text!r}: expected RFC 3339")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    micros = int((match[7] or "").ljust(6, "0")[:6])
    offset = dt.timedelta(0)
    if match[8] is None:
        offset = dt.timedelta(hours=int(match[10]), minutes=int(match[11]))
        offset = -offset if match[9] == "-" else offset
    try:
        local = dt.datetime(year, month, day, hour, minute, second, micros,
                            tzinfo=dt.timezone(offset))
        return local.astimezone(UTC)
    except (ValueError, OverflowError):
        raise CelEvalError(f"invalid timestamp {text!r}: out of range") from None


def timestamp_from_seconds(seconds: int) -> dt.datetime:
    try:
        return EPOCH + dt.timedelta(seconds=seconds)
    except OverflowError:
        raise CelEvalError("timestamp out of range") from None


def parse_duration(text: str) -> dt.timedelta:
    """Go's time.ParseDuration grammar: a sign, then numbers with units (`1h30m`, `1.5s`,
    `-720h`), or a bare `0`."""
    sign, body = (text[0], text[1:]) if text[:1] in ("+", "-") else ("+", text)
    if body == "0":
        return dt.timedelta(0)
    nanos = Fraction(0)
    position = 0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if match is None:
            raise CelEvalError(f"invalid duration {text!r}")
        nanos += Fraction(Decimal(match[1])) * _NANOS[match[2]]
        position = match.end()
    if not body:
        raise CelEvalError(f"invalid duration {text!r}")
    micros = int(nanos / 1000)  # toward zero: the magnitude is not negative yet
    return check_duration(dt.timedelta(microseconds=-micros if sign == "-" else micros))


def check_duration(value: dt.timedelta) -> dt.timedelta:
    if -MAX_DURATION <= value <= MAX_DURATION:
        return value
    raise CelEvalError("duration out of range")


def format_timestamp(value: dt.datetime) -> str:
    """RFC 3339 in UTC with a `Z`, fractional seconds only when there are some."""
    value = utc(value)
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text + "Z"


def format_duration(value: dt.timedelta) -> str:
    """Seconds with as many decimals as needed: `1.5s`, `3600s`, `-0.000001s`."""
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign = "-" if micros < 0 else ""
    whole, fraction = divmod(abs(micros), 1_000_000)
    text = f"{sign}{whole}"
    if fraction:
        text += f".{fraction:06d}".rstrip("0")
    return text + "s"


def in_zone(value: dt.datetime, zone: str | None) -> dt.datetime:
    """`value` seen from a time zone: an IANA name (`Europe/Paris`), `UTC`, or a fixed offset
    (`+05:30`); the calendar accessors read their fields from the result."""
    value = utc(value)
    if zone is None or zone == "UTC":
        return value
    fixed = _FIXED_ZONE.fullmatch(zone)
    if fixed is not None:
        offset = dt.timedelta(hours=int(fixed[2]), minutes=int(fixed[3]))
        return value.astimezone(dt.timezone(-offset if fixed[1] == "-" else offset))
    try:
        return value.astimezone(ZoneInfo(zone))
    except (ZoneInfoNotFoundError, ValueError):
        raise CelEvalError(f"unknown time zone {zone!r}") from None
