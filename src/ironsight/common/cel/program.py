"""A compiled expression: what it reads, and its evaluation against an activation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .closures import Evaluator
from .errors import CelEvalError
from .values import kind


class Program:
    """One compiled CEL expression. Immutable and free of per-evaluation state, so one
    Program may be evaluated from many threads at once."""

    __slots__ = ("_evaluator", "roots", "source")

    def __init__(self, source: str, roots: frozenset[str], evaluator: Evaluator) -> None:
        self.source = source
        #: The top-level names the expression reads (comprehension variables excluded):
        #: what an activation must bind, e.g. {"inventory", "traits"}.
        self.roots = roots
        self._evaluator = evaluator

    def __repr__(self) -> str:
        return f"Program({self.source!r})"

    def evaluate(self, activation: Mapping[str, Any]) -> Any:
        """The expression's value with its names bound by `activation`. Raises only
        CelEvalError: a failure of our own is reported as one too, for a query must never
        take its caller down with an unexpected exception."""
        try:
            return self._evaluator(activation)
        except CelEvalError:
            raise
        except RecursionError:
            raise CelEvalError("value nested too deeply to evaluate") from None
        except Exception as exc:
            raise CelEvalError(f"internal error: {type(exc).__name__}: {exc}") from exc

    def matches(self, activation: Mapping[str, Any]) -> bool:
        """Whether the expression is true for `activation`: a filter's question. A result
        that is not a bool is an error, not a false: a query that does not ask a yes-or-no
        question is a mistake to report."""
        result = self.evaluate(activation)
        if result is True or result is False:
            return result
        raise CelEvalError(f"expected a bool result, got {kind(result)}")
