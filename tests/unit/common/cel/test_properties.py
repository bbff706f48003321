"""For random expressions over ints and bools, the compiled program agrees with a small
reference evaluator written here from the spec's rules: 64-bit overflow and division by zero
are errors, division truncates, the remainder follows the dividend, bool is no number, and
&& and || absorb errors commutatively."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ironsight.common.cel import CelEvalError, compile

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
ERROR = object()  # the reference's "evaluation fails"

Expr = tuple[Any, ...]

_literals = st.one_of(
    st.booleans(),
    st.integers(-10, 10),
    st.integers(INT_MIN, INT_MAX),
).map(lambda v: ("lit", v))


def _extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    operators = ["&&", "||", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%"]
    return st.one_of(
        st.tuples(st.just("not"), children),
        st.tuples(st.just("neg"), children),
        st.tuples(st.just("bin"), st.sampled_from(operators), children, children),
        st.tuples(st.just("cond"), children, children, children),
    )


expressions = st.recursive(_literals, _extend, max_leaves=12)


def render(expr: Expr) -> str:
    tag = expr[0]
    if tag == "lit":
        v = expr[1]
        return ("true" if v else "false") if isinstance(v, bool) else f"({v})"
    if tag == "not":
        return f"!({render(expr[1])})"
    if tag == "neg":
        return f"-({render(expr[1])})"
    if tag == "bin":
        return f"({render(expr[2])}) {expr[1]} ({render(expr[3])})"
    return f"({render(expr[1])}) ? ({render(expr[2])}) : ({render(expr[3])})"


def _int(v: object) -> bool:
    return type(v) is int


def _ranged(v: int) -> object:
    return v if INT_MIN <= v <= INT_MAX else ERROR


def reference(expr: Expr) -> object:
    tag = expr[0]
    if tag == "lit":
        return expr[1]
    if tag == "not":
        v = reference(expr[1])
        return (not v) if isinstance(v, bool) else ERROR
    if tag == "neg":
        v = reference(expr[1])
        return _ranged(-v) if type(v) is int else ERROR
    if tag == "cond":
        test = reference(expr[1])
        if test is True:
            return reference(expr[2])
        return reference(expr[3]) if test is False else ERROR
    op, left, right = expr[1], reference(expr[2]), reference(expr[3])
    if op in ("&&", "||"):
        winner = op == "||"
        if left is winner or right is winner:
            return winner
        return (not winner) if left is (not winner) and right is (not winner) else ERROR
    if left is ERROR or right is ERROR:
        return ERROR
    if op in ("==", "!="):
        same = type(left) is type(right) and left == right
        return same if op == "==" else not same
    if type(left) is not type(right):
        return ERROR
    a: Any = left
    b: Any = right
    if op in ("<", "<=", ">", ">="):
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if not _int(a):
        return ERROR
    if op == "+":
        return _ranged(a + b)
    if op == "-":
        return _ranged(a - b)
    if op == "*":
        return _ranged(a * b)
    if b == 0:
        return ERROR
    if op == "/":
        quotient = abs(a) // abs(b)
        return _ranged(quotient if (a < 0) == (b < 0) else -quotient)
    remainder = abs(a) % abs(b)
    return remainder if a >= 0 else -remainder


@settings(max_examples=300, deadline=None)
@given(expressions)
def test_the_program_agrees_with_the_reference_evaluator(expr: Expr) -> None:
    source = render(expr)
    expected = reference(expr)
    program = compile(source)
    if expected is ERROR:
        try:
            result = program.evaluate({})
        except CelEvalError:
            return
        raise AssertionError(f"{source} gave {result!r}, expected an error")
    result = program.evaluate({})
    assert result == expected
    assert type(result) is type(expected)


@settings(deadline=None)
@given(st.integers(INT_MIN, INT_MAX), st.integers(INT_MIN, INT_MAX).filter(bool))
def test_quotient_and_remainder_rebuild_the_dividend(a: int, b: int) -> None:
    program = compile("(a / b) * b + a % b == a")
    if (a, b) == (INT_MIN, -1):
        return  # the one quotient out of range
    assert program.evaluate({"a": a, "b": b}) is True
