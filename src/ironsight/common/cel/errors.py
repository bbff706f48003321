"""The errors of CEL: each names where in the expression it arose, when that is known, so that
an operator can find the mistake in a long query."""

from __future__ import annotations

# (position, line, column): a 0-based offset and its 1-based line and column.
Location = tuple[int, int, int]


def locate(source: str, position: int) -> Location:
    """The line and column of an offset in `source`; a column counts code points."""
    line = source.count("\n", 0, position) + 1
    column = position - (source.rfind("\n", 0, position) + 1) + 1
    return position, line, column


class CelError(ValueError):
    """A CEL expression that cannot be compiled or evaluated.

    `reason` is the bare cause; `position` (0-based), `line` and `column` (1-based) say where,
    or are None when the error belongs to no one place.
    """

    label = "CEL error"

    def __init__(self, reason: str, position: int | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        self.reason = reason
        self.position = position
        self.line = line
        self.column = column
        if position is None:
            message = f"{self.label}: {reason}"
        else:
            message = (f"{self.label} at line {line}, column {column} "
                       f"(position {position}): {reason}")
        super().__init__(message)

    def __reduce__(self) -> tuple[type[CelError], tuple[str, int | None, int | None, int | None]]:
        """Pickled whole, place included (errors cross process boundaries in the workers)."""
        return type(self), (self.reason, self.position, self.line, self.column)


class CelSyntaxError(CelError):
    """The text is not a CEL expression."""

    label = "Syntax error"


class CelCompileError(CelError):
    """The text parses, but means nothing: an unknown function, a bad literal, too deep."""

    label = "Compile error"


class CelEvalError(CelError):
    """Evaluation failed: a missing key, no overload for these types, an overflow."""

    label = "Evaluation error"

    def at(self, where: Location) -> CelEvalError:
        """This error placed at `where`, unless a deeper node already placed it."""
        if self.position is not None:
            return self
        return CelEvalError(self.reason, *where)
