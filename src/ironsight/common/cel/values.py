"""CEL's meaning of the operators over plain Python values.

Each function takes evaluated operands and raises CelEvalError (not yet located: the
compiled node that called it adds where). The common cases are tried first by exact type,
which is what makes evaluation fast; anything else goes through `kind`, which also accepts
subclasses, tuples for lists and any Mapping for maps.
"""

from __future__ import annotations

import datetime as dt
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from .errors import CelEvalError
from .literals import INT_MAX, INT_MIN
from .temporal import check_duration, utc


class _Missing:
    """The absent value of a map lookup: has no `get`, so a chain of lookups that meets it
    fails with AttributeError, which the fast selection paths catch."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = _Missing()

NUMBER_TYPES: Final = frozenset({int, float})
_PLAIN_TYPES: Final = frozenset({str, int, float, bool, bytes, type(None), dt.timedelta})
_ORDERED_TYPES: Final = frozenset({int, float, str, bytes, bool, dt.timedelta})
_NUMERIC_KINDS: Final = frozenset({"int", "double"})
_ORDERED_KINDS: Final = frozenset({"string", "bytes", "bool", "duration"})
_KEY_KINDS: Final = frozenset({"int", "bool", "string"})
_SIZED_TYPES: Final = frozenset({str, list, dict, bytes})


def kind(value: object) -> str:
    """The CEL type name of a value, or its Python type name when CEL has none for it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes | bytearray):
        return "bytes"
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dt.datetime):
        return "timestamp"
    if isinstance(value, dt.timedelta):
        return "duration"
    return type(value).__name__


def no_overload(function: str, *args: object) -> CelEvalError:
    kinds = ", ".join(kind(arg) for arg in args)
    return CelEvalError(f"no matching overload for '{function}' applied to ({kinds})")


def show(value: object) -> str:
    """A value as it reads in an error message (a map key, an index)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_int(value: int) -> int:
    if INT_MIN <= value <= INT_MAX:
        return value
    raise CelEvalError("integer overflow")


# --- equality ------------------------------------------------------------------------------

def equals(a: object, b: object) -> bool:
    """CEL's heterogeneous equality: numbers compare by value across int and double, bool is
    no number, values of different kinds are unequal (never an error), lists and maps compare
    element by element under these same rules, NaN equals nothing."""
    ta = type(a)
    if ta is type(b) and ta in _PLAIN_TYPES:
        return a == b
    return _equals_slow(a, b)


def _equals_slow(a: Any, b: Any) -> bool:
    ka, kb = kind(a), kind(b)
    if ka != kb:
        return ka in _NUMERIC_KINDS and kb in _NUMERIC_KINDS and bool(a == b)
    if ka == "list":
        return len(a) == len(b) and all(equals(x, y) for x, y in zip(a, b, strict=True))
    if ka == "map":
        if len(a) != len(b):
            return False
        for key, value in a.items():
            other = map_get(b, key)
            if other is MISSING or not equals(value, other):
                return False
        return True
    if ka == "timestamp":
        return utc(a) == utc(b)
    if ka in ("null", "bool", "int", "double", "string", "bytes", "duration"):
        return bool(a == b)
    return a is b


def not_equals(a: object, b: object) -> bool:
    return not equals(a, b)


# --- ordering ------------------------------------------------------------------------------

def _ordering(function: str, test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def compare(a: Any, b: Any) -> bool:
        ta, tb = type(a), type(b)
        if (ta is tb and ta in _ORDERED_TYPES) or (ta in NUMBER_TYPES and tb in NUMBER_TYPES):
            return test(a, b)
        ka, kb = kind(a), kind(b)
        if (ka == kb and ka in _ORDERED_KINDS) or (ka in _NUMERIC_KINDS
                                                   and kb in _NUMERIC_KINDS):
            return test(a, b)
        if ka == kb == "timestamp":
            return test(utc(a), utc(b))
        raise no_overload(function, a, b)

    compare.__name__ = compare.__qualname__ = function
    return compare


less = _ordering("_<_", operator.lt)
less_equal = _ordering("_<=_", operator.le)
greater = _ordering("_>_", operator.gt)
greater_equal = _ordering("_>=_", operator.ge)


# --- arithmetic ----------------------------------------------------------------------------

def add(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is int:
            result = a + b
            if INT_MIN <= result <= INT_MAX:
                return result
            raise CelEvalError("integer overflow")
        if ta is float or ta is str or ta is list or ta is bytes:
            return a + b
    ka, kb = kind(a), kind(b)
    if ka == kb:
        if ka == "int":
            return check_int(a + b)
        if ka in ("double", "string"):
            return a + b
        if ka == "bytes":
            return bytes(a) + bytes(b)
        if ka == "list":
            return [*a, *b]
        if ka == "duration":
            return check_duration(a + b)
    if ka == "timestamp" and kb == "duration":
        return _shift(a, b)
    if ka == "duration" and kb == "timestamp":
        return _shift(b, a)
    raise no_overload("_+_", a, b)


def subtract(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is int:
            result = a - b
            if INT_MIN <= result <= INT_MAX:
                return result
            raise CelEvalError("integer overflow")
        if ta is float:
            return a - b
    ka, kb = kind(a), kind(b)
    if ka == kb == "int":
        return check_int(a - b)
    if ka == kb == "double":
        return a - b
    if ka == kb == "duration":
        return check_duration(a - b)
    if ka == kb == "timestamp":
        return check_duration(utc(a) - utc(b))
    if ka == "timestamp" and kb == "duration":
        return _shift(a, -b)
    raise no_overload("_-_", a, b)


def multiply(a: Any, b: Any) -> Any:
    ka, _ = _numeric_pair("_*_", a, b)
    if ka == "int":
        return check_int(a * b)
    return a * b


def divide(a: Any, b: Any) -> Any:
    ka, _ = _numeric_pair("_/_", a, b)
    if ka == "int":
        if b == 0:
            raise CelEvalError("division by zero")
        quotient = abs(a) // abs(b)  # truncated toward zero, as in C and Go
        return check_int(-quotient if (a < 0) != (b < 0) else quotient)
    if b == 0:  # IEEE 754: a signed infinity, or NaN for 0/0 and NaN/0
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def modulo(a: Any, b: Any) -> Any:
    ka, kb = kind(a), kind(b)
    if ka != "int" or kb != "int":
        raise no_overload("_%_", a, b)
    if b == 0:
        raise CelEvalError("modulus by zero")
    remainder = abs(a) % abs(b)  # the sign follows the dividend
    return -remainder if a < 0 else remainder


def negate(a: Any) -> Any:
    if type(a) is int:
        return check_int(-a)
    if type(a) is float:
        return -a
    ka = kind(a)
    if ka == "int":
        return check_int(-a)
    if ka == "double":
        return -a
    raise no_overload("-_", a)


def _numeric_pair(function: str, a: Any, b: Any) -> tuple[str, str]:
    """Arithmetic takes two ints or two doubles, never a mix (CEL has no implicit
    conversions: `1 + 1.0` is an error, `double(1) + 1.0` is not)."""
    ka, kb = kind(a), kind(b)
    if ka == kb and ka in _NUMERIC_KINDS:
        return ka, kb
    raise no_overload(function, a, b)


def _shift(moment: dt.datetime, delta: dt.timedelta) -> dt.datetime:
    try:
        return utc(moment) + delta
    except OverflowError:
        raise CelEvalError("timestamp out of range") from None


# --- containers ----------------------------------------------------------------------------

def map_get(mapping: Mapping[Any, Any], key: object) -> Any:
    """The value under a CEL-equal key, or MISSING. Only string keys go through the hash:
    Python would also find `1` under `true` and `1.0` under `1`, which CEL tells apart (the
    first pair) or looks up numerically anyway (the second), so other keys are compared one
    by one."""
    if type(key) is str:
        return mapping.get(key, MISSING)
    for candidate, value in mapping.items():
        if equals(candidate, key):
            return value
    return MISSING


def select(value: Any, field: str) -> Any:
    """`value.field`: a map's string key; an error on anything else."""
    if isinstance(value, Mapping):
        found = value.get(field, MISSING)
        if found is MISSING:
            raise CelEvalError(f"no such key: {field}")
        return found
    raise CelEvalError(f"cannot select field '{field}' from {kind(value)}")


def has_field(value: Any, field: str) -> bool:
    """`has(value.field)`: whether a map holds the key; an error on anything else."""
    if isinstance(value, Mapping):
        return field in value
    raise CelEvalError(f"cannot test field '{field}' of {kind(value)}")


def index(container: Any, key: Any) -> Any:
    """`container[key]`: a list by a non-negative int (an integral double will do), a map by
    a CEL-equal key."""
    if type(container) is list and type(key) is int:
        if 0 <= key < len(container):
            return container[key]
        raise CelEvalError(f"index out of range: {key} (size {len(container)})")
    if type(container) is dict and type(key) is str:
        found = container.get(key, MISSING)
        if found is MISSING:
            raise CelEvalError(f"no such key: {key}")
        return found
    kc, kk = kind(container), kind(key)
    if kc == "list":
        if kk == "double" and key.is_integer():
            key = int(key)
        elif kk != "int":
            raise no_overload("_[_]", container, key)
        if 0 <= key < len(container):
            return container[key]
        raise CelEvalError(f"index out of range: {key} (size {len(container)})")
    if kc == "map":
        found = map_get(container, key)
        if found is MISSING:
            raise CelEvalError(f"no such key: {show(key)}")
        return found
    raise no_overload("_[_]", container, key)


def contained(element: Any, container: Any) -> bool:
    """`element in container`: list membership by CEL equality, or a map's key."""
    if type(container) is list:
        if type(element) is str:  # only a string equals a string
            return element in container
        return any(equals(item, element) for item in container)
    kc = kind(container)
    if kc == "map":
        return map_get(container, element) is not MISSING
    if kc == "list":
        return any(equals(item, element) for item in container)
    raise no_overload("@in", element, container)


def iterate(value: Any) -> Iterable[Any]:
    """What a comprehension ranges over: a list's elements or a map's keys."""
    if type(value) is list:
        return value
    kv = kind(value)
    if kv == "list":
        return value
    if kv == "map":
        return list(value)
    raise CelEvalError(f"cannot range over {kv}")


def map_key(key: Any) -> Any:
    """A key of a map literal: CEL allows int, uint, bool and string."""
    if type(key) is str or kind(key) in _KEY_KINDS:
        return key
    raise CelEvalError(f"unsupported map key type: {kind(key)}")


def size(value: Any) -> int:
    if type(value) in _SIZED_TYPES:
        return len(value)
    if kind(value) in ("string", "bytes", "list", "map"):
        return len(value)
    raise no_overload("size", value)


def require_bool(function: str, value: Any) -> bool:
    if value is True or value is False:
        return value
    raise no_overload(function, value)
