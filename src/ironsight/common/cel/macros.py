"""The macros: `has(e.f)` and the comprehensions `all`, `exists`, `exists_one`, `map` and
`filter` over a list's elements or a map's keys.

A comprehension evaluates its body against a copy of the activation made once per
evaluation, with the loop variable rebound in place for each element: the body's closures
read the variable like any other name, and the caller's activation is never touched.
"""

from __future__ import annotations

from typing import Any

from .closures import Activation, Evaluator
from .errors import CelEvalError, Location
from .values import has_field, iterate, kind

COMPREHENSIONS = frozenset({"all", "exists", "exists_one", "map", "filter"})


def has(operand: Evaluator, field: str, where: Location) -> Evaluator:
    def present(activation: Activation) -> bool:
        value = operand(activation)
        if type(value) is dict:
            return field in value
        try:
            return has_field(value, field)
        except CelEvalError as exc:
            raise exc.at(where) from None

    return present


def _elements(target: Evaluator, activation: Activation, where: Location) -> Any:
    try:
        return iterate(target(activation))
    except CelEvalError as exc:
        raise exc.at(where) from None


def _not_bool(macro: str, value: Any, where: Location) -> CelEvalError:
    return CelEvalError(f"the predicate of {macro}() gave {kind(value)}, not bool", *where)


def _quantifier(target: Evaluator, name: str, predicate: Evaluator, where: Location,
                macro: str, winner: bool) -> Evaluator:
    """`all` (winner False) or `exists` (winner True): the winning value on any element
    decides, whatever errors others raised (as `&&` and `||`); otherwise the first error, or
    the other value."""
    loser = not winner

    def quantified(activation: Activation) -> bool:
        frame = dict(activation)
        error: CelEvalError | None = None
        for element in _elements(target, activation, where):
            frame[name] = element
            try:
                result = predicate(frame)
            except CelEvalError as exc:
                error = error or exc
                continue
            if result is winner:
                return winner
            if result is not loser:
                error = error or _not_bool(macro, result, where)
        if error is not None:
            raise error
        return loser

    return quantified


def all_of(target: Evaluator, name: str, predicate: Evaluator, where: Location) -> Evaluator:
    """True when every predicate is true; a false one wins over errors elsewhere, as `&&`."""
    return _quantifier(target, name, predicate, where, "all", winner=False)


def exists(target: Evaluator, name: str, predicate: Evaluator, where: Location) -> Evaluator:
    """True when a predicate is true; a true one wins over errors elsewhere, as `||`."""
    return _quantifier(target, name, predicate, where, "exists", winner=True)


def exists_one(target: Evaluator, name: str, predicate: Evaluator,
               where: Location) -> Evaluator:
    """True when exactly one predicate is true; any error is the macro's error."""

    def exactly_one(activation: Activation) -> bool:
        frame = dict(activation)
        count = 0
        for element in _elements(target, activation, where):
            frame[name] = element
            result = predicate(frame)
            if result is True:
                count += 1
            elif result is not False:
                raise _not_bool("exists_one", result, where)
        return count == 1

    return exactly_one


def map_to(target: Evaluator, name: str, transform: Evaluator,
           predicate: Evaluator | None, where: Location) -> Evaluator:
    """The transform of each element (of those the predicate keeps, when there is one)."""

    def mapped(activation: Activation) -> list[Any]:
        frame = dict(activation)
        results = []
        for element in _elements(target, activation, where):
            frame[name] = element
            if predicate is not None:
                keep = predicate(frame)
                if keep is False:
                    continue
                if keep is not True:
                    raise _not_bool("map", keep, where)
            results.append(transform(frame))
        return results

    return mapped


def filter_by(target: Evaluator, name: str, predicate: Evaluator,
              where: Location) -> Evaluator:
    def kept(activation: Activation) -> list[Any]:
        frame = dict(activation)
        results = []
        for element in _elements(target, activation, where):
            frame[name] = element
            keep = predicate(frame)
            if keep is True:
                results.append(element)
            elif keep is not False:
                raise _not_bool("filter", keep, where)
        return results

    return kept
