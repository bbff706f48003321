"""The functions a CEL expression may call: CEL's standard ones (size, the string tests, the
type conversions, timestamps and durations) and the strings extension's lowerAscii,
upperAscii, trim, split and join. `matches` and the macros are the compiler's: their
arguments are read at compile time.

Each implementation takes evaluated arguments, the receiver first for the method style, and
raises CelEvalError for a type it has no overload for.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Final

from .errors import CelEvalError
from .literals import INT_MAX, INT_MIN, UINT_MAX
from .temporal import (
    EPOCH,
    check_duration,
    format_duration,
    format_timestamp,
    in_zone,
    parse_duration,
    parse_timestamp,
    timestamp_from_seconds,
    utc,
)
from .values import kind, no_overload, size


@dataclass(frozen=True, slots=True)
class Function:
    """An implementation and the argument counts it accepts in each call style (a method's
    count leaves out the receiver); an empty set means the style is not allowed."""

    impl: Callable[..., Any]
    global_arities: frozenset[int] = frozenset()
    method_arities: frozenset[int] = frozenset()


def _strings(function: str, *args: Any) -> None:
    if not all(isinstance(arg, str) for arg in args):
        raise no_overload(function, *args)


# --- strings -------------------------------------------------------------------------------

def _contains(text: Any, part: Any) -> bool:
    _strings("contains", text, part)
    return bool(part in text)


def _starts_with(text: Any, prefix: Any) -> bool:
    _strings("startsWith", text, prefix)
    return bool(text.startswith(prefix))


def _ends_with(text: Any, suffix: Any) -> bool:
    _strings("endsWith", text, suffix)
    return bool(text.endswith(suffix))


_LOWER: Final = MappingProxyType(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                               "abcdefghijklmnopqrstuvwxyz"))
_UPPER: Final = MappingProxyType({v: k for k, v in _LOWER.items()})
# Unicode's White_Space property, which the strings extension trims (str.strip() would also
# take the separators \x1c-\x1f).
_WHITE_SPACE: Final = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                       "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _lower_ascii(text: Any) -> str:
    _strings("lowerAscii", text)
    return str(text).translate(_LOWER)


def _upper_ascii(text: Any) -> str:
    _strings("upperAscii", text)
    return str(text).translate(_UPPER)


def _trim(text: Any) -> str:
    _strings("trim", text)
    return str(text).strip(_WHITE_SPACE)


def _split(text: Any, separator: Any, limit: Any = -1) -> list[str]:
    """At most `limit` parts (all of them when negative, none for 0); an empty separator
    splits into code points."""
    _strings("split", text, separator)
    if kind(limit) != "int":
        raise no_overload("split", text, separator, limit)
    if limit == 0:
        return []
    if separator == "":
        chars = list(text)
        if 0 < limit < len(chars):
            return [*chars[:limit - 1], "".join(chars[limit - 1:])]
        return chars
    return str(text).split(separator, limit - 1 if limit > 0 else -1)


def _join(items: Any, separator: Any = "") -> str:
    if kind(items) != "list" or not isinstance(separator, str):
        raise no_overload("join", items, separator)
    if not all(isinstance(item, str) for item in items):
        raise CelEvalError("join: every element must be a string")
    return separator.join(items)


# --- conversions ---------------------------------------------------------------------------

_DECIMAL_INT = re.compile(r"[+-]?[0-9]+")
_DECIMAL_UINT = re.compile(r"[0-9]+")
_DOUBLE = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     r"|inf|infinity|nan)", re.IGNORECASE)
_TRUE_WORDS: Final = frozenset({"1", "t", "T", "true", "True", "TRUE"})
_FALSE_WORDS: Final = frozenset({"0", "f", "F", "false", "False", "FALSE"})


def _to_int(value: Any) -> int:
    k = kind(value)
    if k == "int":
        result = int(value)
    elif k == "double":
        if not -(2.0**63) <= value < 2.0**63:  # NaN fails both
            raise CelEvalError("int(): double out of the int range")
        result = int(value)  # toward zero
    elif k == "string":
        if _DECIMAL_INT.fullmatch(value) is None:
            raise CelEvalError(f"int(): invalid integer {value!r}")
        result = int(value)
    elif k == "timestamp":
        return (utc(value) - EPOCH) // dt.timedelta(seconds=1)
    else:
        raise no_overload("int", value)
    if not INT_MIN <= result <= INT_MAX:
        raise CelEvalError("int(): value out of the int range")
    return result


def _to_uint(value: Any) -> int:
    k = kind(value)
    if k == "int":
        result = int(value)
    elif k == "double":
        if not 0 <= value < 2.0**64:
            raise CelEvalError("uint(): double out of the uint range")
        result = int(value)
    elif k == "string":
        if _DECIMAL_UINT.fullmatch(value) is None:
            raise CelEvalError(f"uint(): invalid unsigned integer {value!r}")
        result = int(value)
    else:
        raise no_overload("uint", value)
    if not 0 <= result <= UINT_MAX:
        raise CelEvalError("uint(): value out of the uint range")
    return result


def _to_double(value: Any) -> float:
    k = kind(value)
    if k in ("int", "double"):
        return float(value)
    if k == "string":
        if _DOUBLE.fullmatch(value) is None:
            raise CelEvalError(f"double(): invalid number {value!r}")
        return float(value)
    raise no_overload("double", value)


def _to_string(value: Any) -> str:
    k = kind(value)
    if k == "string":
        return str(value)
    if k == "bool":
        return "true" if value else "false"
    if k == "int":
        return str(int(value))
    if k == "double":
        return format_double(value)
    if k == "bytes":
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise CelEvalError("string(): bytes are not valid UTF-8") from None
    if k == "timestamp":
        return format_timestamp(value)
    if k == "duration":
        return format_duration(value)
    raise no_overload("string", value)


def format_double(value: float) -> str:
    """As Go's %g prints a float64 (cel-go's string() of a double): the shortest digits that
    read back the same, in exponent form below 1e-4 and from 1e6 up (`1e+06`)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + exponent  # where the decimal point falls within `digits`
    text = "-" if sign else ""
    if point - 1 < -4 or point - 1 >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{text}{mantissa}e{point - 1:+03d}"
    if point <= 0:
        return f"{text}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return text + digits + "0" * (point - len(digits))
    return f"{text}{digits[:point]}.{digits[point:]}"


def _to_bool(value: Any) -> bool:
    k = kind(value)
    if k == "bool":
        return bool(value)
    if k == "string":
        if value in _TRUE_WORDS:
            return True
        if value in _FALSE_WORDS:
            return False
        raise CelEvalError(f"bool(): invalid bool {value!r}")
    raise no_overload("bool", value)


def _to_bytes(value: Any) -> bytes:
    k = kind(value)
    if k == "bytes":
        return bytes(value)
    if k == "string":
        return str(value).encode("utf-8")
    raise no_overload("bytes", value)


def _dyn(value: Any) -> Any:
    return value


def _to_timestamp(value: Any) -> dt.datetime:
    k = kind(value)
    if k == "timestamp":
        return utc(value)
    if k == "string":
        return parse_timestamp(value)
    if k == "int":
        return timestamp_from_seconds(value)
    raise no_overload("timestamp", value)


def _to_duration(value: Any) -> dt.timedelta:
    k = kind(value)
    if k == "duration":
        return check_duration(value)
    if k == "string":
        return parse_duration(value)
    raise no_overload("duration", value)


# --- timestamp and duration accessors ------------------------------------------------------

def _total(unit_micros: int) -> Callable[[dt.timedelta], int]:
    def total(value: dt.timedelta) -> int:
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
        whole = abs(micros) // unit_micros  # toward zero
        return -whole if micros < 0 else whole

    return total


def _milliseconds_part(value: dt.timedelta) -> int:
    millis = _total(1_000)(value)
    part = abs(millis) % 1000
    return -part if millis < 0 else part


def _accessor(name: str, field: Callable[[dt.datetime], int],
              duration_field: Callable[[dt.timedelta], int] | None = None) -> Function:
    """A timestamp's calendar field, in UTC or in the time zone given as the argument; some
    also read a duration (in total units)."""

    def access(value: Any, zone: Any = None) -> int:
        k = kind(value)
        if k == "timestamp" and (zone is None or isinstance(zone, str)):
            return field(in_zone(value, zone))
        if k == "duration" and duration_field is not None and zone is None:
            return duration_field(value)
        raise no_overload(name, value, *(() if zone is None else (zone,)))

    return Function(access, method_arities=frozenset({0, 1}))


def _method(impl: Callable[..., Any], *arities: int) -> Function:
    return Function(impl, method_arities=frozenset(arities))


def _conversion(impl: Callable[..., Any]) -> Function:
    return Function(impl, global_arities=frozenset({1}))


FUNCTIONS: Final[MappingProxyType[str, Function]] = MappingProxyType({
    "size": Function(size, global_arities=frozenset({1}), method_arities=frozenset({0})),
    "contains": _method(_contains, 1),
    "startsWith": _method(_starts_with, 1),
    "endsWith": _method(_ends_with, 1),
    "lowerAscii": _method(_lower_ascii, 0),
    "upperAscii": _method(_upper_ascii, 0),
    "trim": _method(_trim, 0),
    "split": _method(_split, 1, 2),
    "join": _method(_join, 0, 1),
    "int": _conversion(_to_int),
    "uint": _conversion(_to_uint),
    "double": _conversion(_to_double),
    "string": _conversion(_to_string),
    "bool": _conversion(_to_bool),
    "bytes": _conversion(_to_bytes),
    "dyn": _conversion(_dyn),
    "timestamp": _conversion(_to_timestamp),
    "duration": _conversion(_to_duration),
    "getFullYear": _accessor("getFullYear", lambda t: t.year),
    "getMonth": _accessor("getMonth", lambda t: t.month - 1),
    "getDate": _accessor("getDate", lambda t: t.day),
    "getDayOfMonth": _accessor("getDayOfMonth", lambda t: t.day - 1),
    "getDayOfWeek": _accessor("getDayOfWeek", lambda t: (t.weekday() + 1) % 7),
    "getDayOfYear": _accessor("getDayOfYear", lambda t: t.timetuple().tm_yday - 1),
    "getHours": _accessor("getHours", lambda t: t.hour, _total(3_600_000_000)),
    "getMinutes": _accessor("getMinutes", lambda t: t.minute, _total(60_000_000)),
    "getSeconds": _accessor("getSeconds", lambda t: t.second, _total(1_000_000)),
    "getMilliseconds": _accessor("getMilliseconds", lambda t: t.microsecond // 1000,
                                 _milliseconds_part),
})
