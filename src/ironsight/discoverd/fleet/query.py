"""A CEL expression over every node's document: the matching nodes, a page at a time.

A node whose document makes the expression fail (a key it lacks, a value of another type)
does not match; the failures are counted and the first few reported with their node, so that
an operator sees why a node they expected is missing rather than an empty answer.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ironsight.common.cel import CelEvalError, Program
from ironsight.common.dotted import pick
from ironsight.common.exceptions import Invalid

# What each matching node shows when no `fields` are asked for.
DEFAULT_FIELDS = ("uuid", "name", "provision_state", "power_state", "driver",
                  "resource_class", "hardware.vendor", "hardware.product",
                  "hardware.memory_gib", "hardware.cpu_count")
MAX_FIELDS = 50
ERROR_EXAMPLES = 5


def parse_fields(raw: str | None) -> tuple[str, ...]:
    if not raw:
        return DEFAULT_FIELDS
    names = tuple(dict.fromkeys(f.strip() for f in raw.split(",") if f.strip()))
    bad = [n for n in names if not all(part.isidentifier() for part in n.split("."))]
    if not names or bad or len(names) > MAX_FIELDS:
        raise Invalid(f"Invalid value for fields: {raw!r} (comma-separated dotted names of "
                      f"the node document, at most {MAX_FIELDS})")
    return ("uuid", *[n for n in names if n != "uuid"])


@dataclass
class Evaluated:
    """An expression's verdict over the whole fleet (docs in UUID order)."""

    matched: list[Mapping[str, Any]] = field(default_factory=list)
    evaluated: int = 0
    errors: int = 0
    examples: list[dict[str, str]] = field(default_factory=list)


def evaluate(program: Program, docs: Iterable[Mapping[str, Any]]) -> Evaluated:
    out = Evaluated()
    matches = program.matches
    for doc in docs:
        out.evaluated += 1
        try:
            if matches(doc):
                out.matched.append(doc)
        except CelEvalError as exc:
            out.errors += 1
            if len(out.examples) < ERROR_EXAMPLES:
                out.examples.append({"uuid": str(doc.get("uuid")), "error": str(exc)})
    return out


def _order(value: Any) -> tuple[int, int, Any]:
    """A sort key for any document value: numbers, then text, then the rest; nulls last."""
    if value is None:
        return (2, 0, 0)
    if isinstance(value, bool | int | float):
        return (0, 0, float(value))
    if isinstance(value, str):
        return (0, 1, value.casefold())
    if isinstance(value, list):
        return (0, 1, ",".join(map(str, value)).casefold())
    return (1, 0, str(value))


def parse_sort(raw: str | None) -> tuple[str, bool] | None:
    """`FIELD` or `-FIELD` (descending); None: UUID order."""
    if not raw:
        return None
    name = raw[1:] if raw.startswith("-") else raw
    if not name or not all(part.isidentifier() for part in name.split(".")):
        raise Invalid(f"Invalid value for sort: {raw!r} (a dotted name of the node document, "
                      "- in front for descending)")
    return name, raw.startswith("-")


def sorted_page(verdict: Evaluated, *, sort: tuple[str, bool], offset: int, limit: int,
                fields: Sequence[str] = DEFAULT_FIELDS) -> dict[str, Any]:
    """A page of the matching nodes in another order than their UUIDs': `offset` nodes
    skipped. Nulls sort last either way; ties keep UUID order."""
    name, descending = sort
    present = [d for d in verdict.matched if pick(d, name) is not None]
    absent = [d for d in verdict.matched if pick(d, name) is None]
    # stable, reverse too: ties keep the UUID order
    present.sort(key=lambda d: _order(pick(d, name)), reverse=descending)
    ordered = present + absent
    chosen = ordered[offset:offset + limit]
    return {"nodes": [{n: pick(doc, n) for n in fields} for doc in chosen],
            "matched": len(verdict.matched), "evaluated": verdict.evaluated,
            "errors": {"count": verdict.errors, "examples": verdict.examples},
            "offset": offset, "next_marker": None}


def page(verdict: Evaluated, *, limit: int, marker: str | None = None,
         fields: Sequence[str] = DEFAULT_FIELDS) -> dict[str, Any]:
    """The page after `marker` (a UUID) of at most `limit` matching nodes."""
    start = 0
    if marker is not None:
        start = bisect.bisect_right([str(d.get("uuid")) for d in verdict.matched], marker)
    chosen = verdict.matched[start:start + limit]
    more = start + limit < len(verdict.matched)
    return {"nodes": [{name: pick(doc, name) for name in fields} for doc in chosen],
            "matched": len(verdict.matched), "evaluated": verdict.evaluated,
            "errors": {"count": verdict.errors, "examples": verdict.examples},
            "next_marker": str(chosen[-1].get("uuid")) if more and chosen else None}
