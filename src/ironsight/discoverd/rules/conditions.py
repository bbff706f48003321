"""Condition operators: what each accepts, and how a condition (with its loop) is evaluated.

The vocabulary is upstream Ironic's (eq, lt, gt, is-empty, in-net, matches, contains, one-of,
is-none, is-true, is-false) plus le, ge and ne, which upstream defines but does not
register (ironic-today.md §1.4.1; ironsight accepts them), and one extension: `cel`, whose
`expression` is a CEL expression over the node document the fleet queries read
(fleet/document.py, docs/fleet.md), `item` being the loop's item. One deliberate
difference: values that both read as numbers (numbers, or strings such as "8192" that
parse as one) compare as numbers, so `"8192" lt "16000"` holds even where upstream compares
strings (loops force strings upstream; interpolation always yields strings there).
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ironsight.common.cel import CelEvalError, Program
from ironsight.common.cel import compile as cel_compile
from ironsight.discoverd.rules.interpolate import Scope, expand, interpolate
from ironsight.discoverd.rules.model import Condition


class ConditionError(Exception):
    """A condition that cannot be evaluated (an invalid subnet, values that cannot be
    ordered); as upstream, it ends the run with an error naming the rule."""


def as_number(value: Any) -> int | float | None:
    """`value` as a number when it reads as one: an int or float (not a bool), or a string
    that parses as a decimal int or float (not NaN); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return None if isinstance(value, float) and math.isnan(value) else value
    if isinstance(value, str):
        return _text_number(value)
    return None


# What int() and float() accept may start with a digit, a sign, a dot, whitespace, a
# non-ASCII digit, or an i / n (inf, infinity, nan): any other ASCII letter first is no number.
_NOT_NUMBER_START = frozenset("abcdefghjklmopqrstuvwxyzABCDEFGHJKLMOPQRSTUVWXYZ")


@functools.lru_cache(maxsize=8192)
def _text_number(value: str) -> int | float | None:
    """as_number of a string; cached, and a cheap test first, because most texts rules
    compare are words (model names, architectures) and every failed int()/float() costs an
    exception."""
    if value[:1] in _NOT_NUMBER_START:
        return None
    text = value.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return None if math.isnan(number) else number


def _chain(compare: Callable[[Any, Any], bool], name: str) -> Callable[..., bool]:
    """eq/lt/...: compare adjacent pairs of `values` (a chain, as upstream: fewer than two
    values hold). Numbers compare as numbers; otherwise strings with `force_strings`, else the
    values as they are."""

    def check(values: Any, force_strings: Any = False) -> bool:
        if not isinstance(values, list):
            raise ConditionError(f"{name}: 'values' must be a list, not "
                                 f"{type(values).__name__}")
        for left, right in itertools.pairwise(values):
            a: Any = as_number(left)
            b: Any = as_number(right)
            if a is None or b is None:
                a, b = (str(left), str(right)) if force_strings else (left, right)
            try:
                if not compare(a, b):
                    return False
            except TypeError:
                raise ConditionError(f"{name}: cannot compare {left!r} with {right!r}") from None
        return True

    return check


def _equal(left: Any, right: Any) -> bool:
    a, b = as_number(left), as_number(right)
    return a == b if a is not None and b is not None else bool(left == right)


def _is_empty(value: Any) -> bool:
    return value is None or str(value) in ("", "None", "[]", "{}")


def _in_net(address: Any, subnet: Any) -> bool:
    try:
        network = ipaddress.ip_network(str(subnet), strict=False)
    except ValueError as exc:
        raise ConditionError(f"in-net: invalid subnet {subnet!r}: {exc}") from None
    try:
        return ipaddress.ip_address(str(address)) in network
    except ValueError:
        return False  # no address (e.g. an interface without IPv4): not in any network


@functools.lru_cache(maxsize=1024)
def _pattern(regex: str) -> re.Pattern[str]:
    """A condition's regular expression, compiled once (rules run on every report)."""
    try:
        return re.compile(regex)
    except re.error as exc:
        raise ConditionError(f"invalid regular expression {regex!r}: {exc}") from None


def _regex(value: Any, regex: Any, *, full: bool) -> bool:
    pattern = _pattern(str(regex))
    text = str(value)
    return bool(pattern.fullmatch(text) if full else pattern.search(text))


def _is_true(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    return isinstance(value, str) and value.lower() in ("yes", "true")


def _is_false(value: Any) -> bool:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return not value
    if isinstance(value, str):
        return value.lower() in ("no", "false")
    return value is None


def _one_of(value: Any, values: Any = ()) -> bool:
    if not isinstance(values, list | tuple):
        raise ConditionError(f"one-of: 'values' must be a list, not {type(values).__name__}")
    return any(_equal(value, v) for v in values)


@functools.lru_cache(maxsize=256)
def cel_program(expression: str) -> Program:
    """A `cel` condition's expression, compiled once (CelError when it does not compile)."""
    return cel_compile(expression)


def _cel(expression: str) -> bool:
    raise AssertionError("cel conditions are evaluated with their scope (_check_cel)")


def _check_cel(condition: Condition, scope: Scope, warnings: list[str]) -> bool:
    """The node document of the report being processed (no `inspected_at`: it is not stored
    yet); an expression that fails on it (a key this report lacks) does not hold, with a
    warning, as a fleet query counts such a node as not matching."""
    activation = scope.document()
    if scope.has_item:
        activation = {**activation, "item": scope.item}
    try:
        return cel_program(str(condition.args["expression"])).matches(activation)
    except CelEvalError as exc:
        warnings.append(f"cel: {exc}")
        return False


@dataclass(frozen=True)
class ConditionSpec:
    """An operator: its required and optional arguments (with defaults), its check, and
    whether a reference to something absent reads as None (is-empty, is-none)."""

    required: tuple[str, ...]
    check: Callable[..., bool]
    optional: Mapping[str, Any] = field(default_factory=dict)
    missing_as_none: bool = False


def _chain_spec(compare: Callable[[Any, Any], bool], name: str) -> ConditionSpec:
    return ConditionSpec(("values",), _chain(compare, name), {"force_strings": False})


OPERATORS: dict[str, ConditionSpec] = {
    "eq": _chain_spec(_equal, "eq"),
    "ne": _chain_spec(lambda a, b: not _equal(a, b), "ne"),
    "lt": _chain_spec(operator.lt, "lt"),
    "gt": _chain_spec(operator.gt, "gt"),
    "le": _chain_spec(operator.le, "le"),
    "ge": _chain_spec(operator.ge, "ge"),
    "is-empty": ConditionSpec(("value",), _is_empty, missing_as_none=True),
    "in-net": ConditionSpec(("address", "subnet"), _in_net),
    "matches": ConditionSpec(("value", "regex"), lambda value, regex: _regex(
        value, regex, full=True)),
    "contains": ConditionSpec(("value", "regex"), lambda value, regex: _regex(
        value, regex, full=False)),
    "one-of": ConditionSpec(("value",), _one_of, {"values": []}),
    "is-none": ConditionSpec(("value",), lambda value: value is None or str(value) == "None",
                             missing_as_none=True),
    "is-true": ConditionSpec(("value",), _is_true),
    "is-false": ConditionSpec(("value",), _is_false),
    "cel": ConditionSpec(("expression",), _cel),
}

#: Arguments not interpolated outside loops: braces are regular expression syntax there.
NOT_INTERPOLATED = frozenset({"regex"})


def parse_op(op: str) -> tuple[str, bool]:
    """"!eq", "! eq" → ("eq", True); "eq" → ("eq", False). ValueError for "!!eq"."""
    text = op.strip()
    if text.count("!") > 1:
        raise ValueError("only one '!' may invert an operator")
    invert = text.startswith("!")
    return text.lstrip("!").strip(), invert


def field_argument(condition: Condition) -> Any:
    """The argument holding an inspector-dialect condition's `field` reference."""
    if "values" in condition.args:
        values = condition.args["values"]
        return values[0] if isinstance(values, list) and values else None
    if "address" in condition.args:
        return condition.args["address"]
    return condition.args.get("value")


def _args(condition: Condition, scope: Scope, warnings: list[str]) -> dict[str, Any]:
    spec = OPERATORS[condition.op]
    args = {**spec.optional, **condition.args}
    return {k: (v if k in NOT_INTERPOLATED and not scope.has_item
                else interpolate(v, scope, warnings, missing_as_none=spec.missing_as_none))
            for k, v in args.items()}


def _with_field(condition: Condition, value: Any) -> Condition:
    """`condition` with its inspector field argument replaced by `value`."""
    args = dict(condition.args)
    if "values" in args:
        args["values"] = [value, *args["values"][1:]]
    elif "address" in args:
        args["address"] = value
    else:
        args["value"] = value
    return Condition(condition.op, condition.invert, args, None, condition.multiple)


def _check_wildcard(condition: Condition, values: list[Any], scope: Scope,
                    warnings: list[str]) -> tuple[bool, dict[str, Any]]:
    """An inspector condition whose field has wildcards: checked per value found, combined
    by `multiple` (any, all, first), as ironic-inspector does; no value → does not hold
    (is-empty: holds)."""
    if not values:
        return condition.op == "is-empty", dict(condition.args)
    results: list[bool] = []
    args: dict[str, Any] = {}
    for value in values:
        result, args = _check_once(_with_field(condition, value), scope, warnings)
        results.append(result)
        if condition.multiple == "first":
            break
    if condition.multiple == "all":
        return all(results), args
    return any(results), args


def _check_once(condition: Condition, scope: Scope,
                warnings: list[str]) -> tuple[bool, dict[str, Any]]:
    if condition.op == "cel":  # never interpolated: braces are CEL's maps
        return _check_cel(condition, scope, warnings) != condition.invert, dict(condition.args)
    spec = OPERATORS[condition.op]
    if scope.inspector:
        expanded = expand(field_argument(condition), scope)
        if expanded is not None:
            return _check_wildcard(condition, expanded, scope, warnings)
    if scope.inspector and condition.op != "is-empty":
        # ironic-inspector: a condition on a field the data lacks does not hold.
        reference = field_argument(condition)
        if interpolate(reference, scope, [], missing_as_none=True) is None:
            args = _args(condition, scope, [])
            return False, args
    args = _args(condition, scope, warnings)
    if scope.has_item and "force_strings" in spec.optional:
        args["force_strings"] = True  # upstream, in loops; numbers still compare as numbers
    try:
        result = spec.check(**args)
    except ConditionError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConditionError(f"{condition.op}: {exc}") from None
    return result != condition.invert, args


def evaluate(condition: Condition, scope: Scope,
             warnings: list[str]) -> tuple[bool, dict[str, Any]]:
    """Whether `condition` holds, and its interpolated arguments (the last item's, when
    looping). A loop evaluates the condition per item (a dict loop: once, the dict being the
    item) and combines the results by `multiple`: any, all, first (the first item's result),
    last (the last item's). An empty loop is no loop (as upstream)."""
    loop = condition.loop
    if not loop:
        return _check_once(condition, scope, warnings)
    if isinstance(loop, dict):
        return _check_once(condition, scope.with_item(loop), warnings)
    results: list[bool] = []
    args: dict[str, Any] = {}
    for item in loop:
        result, args = _check_once(condition, scope.with_item(item), warnings)
        results.append(result)
        if condition.multiple == "first":
            break
        if condition.multiple == "any" and result:
            break
        if condition.multiple == "all" and not result:
            break
    if condition.multiple == "all":
        return all(results), args
    if condition.multiple == "any":
        return any(results), args
    return results[-1], args
