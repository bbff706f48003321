"""The building blocks of a compiled expression: one closure per node of the tree, each
calling its children's closures directly. Evaluation is then plain Python calls, with no tree
to walk and no dispatch on node types; the common cases (a chain of field selections, a
comparison with a literal) get closures of their own that try the fast path first.

Each closure that may fail knows where its node stands in the source and places the errors
raised below it that no deeper node placed (`CelEvalError.at`).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from .errors import CelEvalError, Location
from .values import (
    MISSING,
    NUMBER_TYPES,
    contained,
    equals,
    greater,
    greater_equal,
    less,
    less_equal,
    map_key,
    negate,
    no_overload,
    select,
    show,
)

Activation = Mapping[str, Any]
Evaluator = Callable[[Activation], Any]

# operator -> (its test on two values known to be comparable, its full CEL definition)
ORDERINGS: Final = MappingProxyType({
    "<": (operator.lt, less),
    "<=": (operator.le, less_equal),
    ">": (operator.gt, greater),
    ">=": (operator.ge, greater_equal),
})
# `c < x` is `x > c`: how a literal on the left is tested from the right.
MIRRORED: Final = MappingProxyType({"<": ">", "<=": ">=", ">": "<", ">=": "<="})


def constant(value: Any) -> Evaluator:
    def literal(activation: Activation) -> Any:
        return value

    return literal


def variable(name: str, where: Location) -> Evaluator:
    def read(activation: Activation) -> Any:
        try:
            return activation[name]
        except KeyError:
            raise CelEvalError(f"undeclared reference to '{name}'", *where) from None

    return read


def selection(base: Evaluator, fields: tuple[str, ...], wheres: tuple[Location, ...],
              root: str | None = None) -> Evaluator:
    """`base.f1.f2…` as one closure. The fast path chains `.get` (which only maps have, and
    which, unlike `[]`, never runs a defaultdict's factory); any miss falls back to `walk`,
    which finds the step that failed and raises its error there. `root` names `base` when it
    is an identifier, whose lookup is then made here rather than through a call."""

    def walk(value: Any) -> Any:
        for field, where in zip(fields, wheres, strict=True):
            try:
                value = select(value, field)
            except CelEvalError as exc:
                raise exc.at(where) from None
        return value

    if root is not None:
        return _root_selection(root, base, fields, walk)

    def select_fields(activation: Activation) -> Any:
        value = found = base(activation)
        try:
            for field in fields:
                found = found.get(field, MISSING)
        except AttributeError:
            return walk(value)
        return walk(value) if found is MISSING else found

    return select_fields


def _root_selection(root: str, base: Evaluator, fields: tuple[str, ...],
                    walk: Callable[[Any], Any]) -> Evaluator:
    def slow(activation: Activation) -> Any:
        return walk(base(activation))

    if len(fields) == 1:
        (first,) = fields

        def select_one(activation: Activation) -> Any:
            try:
                found = activation[root].get(first, MISSING)
            except (KeyError, AttributeError):
                return slow(activation)
            return slow(activation) if found is MISSING else found

        return select_one

    if len(fields) == 2:
        first, second = fields

        def select_two(activation: Activation) -> Any:
            try:
                found = activation[root].get(first, MISSING).get(second, MISSING)
            except (KeyError, AttributeError):
                return slow(activation)
            return slow(activation) if found is MISSING else found

        return select_two

    def select_many(activation: Activation) -> Any:
        try:
            found = activation[root]
            for field in fields:
                found = found.get(field, MISSING)
        except (KeyError, AttributeError):
            return slow(activation)
        return slow(activation) if found is MISSING else found

    return select_many


def call(impl: Callable[..., Any], args: list[Evaluator], where: Location) -> Evaluator:
    """A function applied to its evaluated arguments (the receiver first)."""
    if len(args) == 1:
        (only,) = args

        def call_one(activation: Activation) -> Any:
            try:
                return impl(only(activation))
            except CelEvalError as exc:
                raise exc.at(where) from None

        return call_one

    if len(args) == 2:
        first, second = args

        def call_two(activation: Activation) -> Any:
            try:
                return impl(first(activation), second(activation))
            except CelEvalError as exc:
                raise exc.at(where) from None

        return call_two

    def call_any(activation: Activation) -> Any:
        try:
            return impl(*[arg(activation) for arg in args])
        except CelEvalError as exc:
            raise exc.at(where) from None

    return call_any


def binary(impl: Callable[[Any, Any], Any], left: Evaluator, right: Evaluator,
           where: Location) -> Evaluator:
    def apply(activation: Activation) -> Any:
        try:
            return impl(left(activation), right(activation))
        except CelEvalError as exc:
            raise exc.at(where) from None

    return apply


def equality(left: Evaluator, right: Evaluator, negated: bool) -> Evaluator:
    """`==` and `!=` never fail once their operands are evaluated."""
    if negated:
        def differ(activation: Activation) -> bool:
            return not equals(left(activation), right(activation))

        return differ

    def same(activation: Activation) -> bool:
        return equals(left(activation), right(activation))

    return same


def equality_with(operand: Evaluator, value: Any, negated: bool) -> Evaluator:
    """`x == literal`: a value of the literal's own type compares with Python's `==`."""
    kind_of_value = type(value)
    if negated:
        def differs(activation: Activation) -> bool:
            found = operand(activation)
            if type(found) is kind_of_value:
                return bool(found != value)
            return not equals(found, value)

        return differs

    def is_same(activation: Activation) -> bool:
        found = operand(activation)
        if type(found) is kind_of_value:
            return bool(found == value)
        return equals(found, value)

    return is_same


def ordering_with(symbol: str, operand: Evaluator, value: Any, where: Location,
                  literal_first: bool = False) -> Evaluator:
    """`x < literal` (or `literal < x`) and friends: a value that compares with the literal
    directly (a number with a number, a string with a string…) skips the overload check."""
    test = ORDERINGS[MIRRORED[symbol] if literal_first else symbol][0]
    full = ORDERINGS[symbol][1]
    accepted = NUMBER_TYPES if type(value) in NUMBER_TYPES else frozenset({type(value)})

    def compare(activation: Activation) -> bool:
        found = operand(activation)
        if type(found) in accepted:
            return test(found, value)
        try:
            return full(value, found) if literal_first else full(found, value)
        except CelEvalError as exc:
            raise exc.at(where) from None

    return compare


def membership_in(operand: Evaluator, values: list[Any], where: Location) -> Evaluator:
    """`x in [literal, …]`: a hashed set when the literals are all strings or all numbers
    (bool excluded), for which Python's set membership is CEL's equality."""
    types = {type(value) for value in values}
    if types and (types == {str} or types <= NUMBER_TYPES):
        accepted = types if types == {str} else NUMBER_TYPES
        members = frozenset(values)

        def is_member(activation: Activation) -> bool:
            found = operand(activation)
            if type(found) in accepted:
                return found in members
            return contained(found, values)

        return is_member
    return binary(contained, operand, constant(values), where)


def _logical(left: Evaluator, right: Evaluator, where: Location, winner: bool) -> Evaluator:
    """`&&` (winner False) or `||` (winner True), commutative over errors: the winning value
    on either side wins over an error (or a non-bool) on the other; otherwise the left error
    comes first."""
    name = "_||_" if winner else "_&&_"
    loser = not winner

    def both(activation: Activation) -> Any:
        try:
            first = left(activation)
        except CelEvalError as exc:
            return _absorb(exc, right, activation, winner)
        if first is winner:
            return winner
        if first is not loser:
            return _absorb(no_overload(name, first).at(where), right, activation, winner)
        second = right(activation)
        if second is True or second is False:
            return second
        raise no_overload(name, first, second).at(where)

    return both


def logical_and(left: Evaluator, right: Evaluator, where: Location) -> Evaluator:
    return _logical(left, right, where, winner=False)


def logical_or(left: Evaluator, right: Evaluator, where: Location) -> Evaluator:
    return _logical(left, right, where, winner=True)


def logical_chain(operands: Sequence[Evaluator], winner: bool,
                  where: Location) -> Evaluator:
    """A run of three or more `&&` (winner False) or `||` (winner True), evaluated flat: a
    long chain (`name == "a" || name == "b" || ...`) is as deep as one operator, not one level
    per operand. The same rules as the two-operand forms: the winning value on any operand
    decides, whatever errors the others raised; otherwise the first error (or non-bool)."""
    name = "_||_" if winner else "_&&_"
    parts = tuple(operands)
    loser = not winner

    def run(activation: Activation) -> bool:
        error: CelEvalError | None = None
        for part in parts:
            try:
                value = part(activation)
            except CelEvalError as exc:
                error = error or exc
                continue
            if value is winner:
                return winner
            if value is not loser and error is None:
                error = no_overload(name, value).at(where)
        if error is not None:
            raise error
        return loser

    return run


def _absorb(error: CelEvalError, right: Evaluator, activation: Activation,
            winner: bool) -> bool:
    """The left side failed: the right side may still decide the result alone."""
    try:
        second = right(activation)
    except CelEvalError:
        raise error from None
    if second is winner:
        return winner
    raise error


def conditional(test: Evaluator, yes: Evaluator, no: Evaluator, where: Location) -> Evaluator:
    def choose(activation: Activation) -> Any:
        condition = test(activation)
        if condition is True:
            return yes(activation)
        if condition is False:
            return no(activation)
        raise no_overload("_?_:_", condition).at(where)

    return choose


def logical_not(operand: Evaluator, count: int, where: Location) -> Evaluator:
    """`!x`, `!!x`…: an even run only checks that x is a bool."""
    flip = count % 2 == 1

    def invert(activation: Activation) -> bool:
        value = operand(activation)
        if value is True or value is False:
            return value is not flip
        raise no_overload("!_", value).at(where)

    return invert


def negation(operand: Evaluator, count: int, where: Location) -> Evaluator:
    def negative(activation: Activation) -> Any:
        value = operand(activation)
        try:
            for _ in range(count):
                value = negate(value)
        except CelEvalError as exc:
            raise exc.at(where) from None
        return value

    return negative


def list_of(items: list[Evaluator]) -> Evaluator:
    def make_list(activation: Activation) -> list[Any]:
        return [item(activation) for item in items]

    return make_list


def map_of(entries: list[tuple[Evaluator, Evaluator, Location]]) -> Evaluator:
    """A map literal; its keys must be of a key type and distinct."""

    def make_map(activation: Activation) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key_of, value_of, where in entries:
            try:
                key = map_key(key_of(activation))
            except CelEvalError as exc:
                raise exc.at(where) from None
            if key in result:
                raise CelEvalError(f"duplicate map key: {show(key)}", *where)
            result[key] = value_of(activation)
        return result

    return make_map


def pattern_match(operand: Evaluator, pattern: re.Pattern[str], where: Location) -> Evaluator:
    """`s.matches(re)` with the pattern compiled once: true when it matches anywhere in s."""
    search = pattern.search

    def match(activation: Activation) -> bool:
        text = operand(activation)
        if isinstance(text, str):
            return search(text) is not None
        raise no_overload("matches", text, pattern.pattern).at(where)

    return match
