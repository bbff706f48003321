"""What the CEL tests ask of an expression: its value, or the error it fails with."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.common.cel import CelCompileError, CelEvalError, CelSyntaxError, compile


def value(source: str, **activation: Any) -> Any:
    return compile(source).evaluate(activation)


def failure(source: str, **activation: Any) -> CelEvalError:
    with pytest.raises(CelEvalError) as caught:
        compile(source).evaluate(activation)
    return caught.value


def compile_error(source: str) -> CelCompileError:
    with pytest.raises(CelCompileError) as caught:
        compile(source)
    return caught.value


def syntax_error(source: str) -> CelSyntaxError:
    with pytest.raises(CelSyntaxError) as caught:
        compile(source)
    return caught.value
