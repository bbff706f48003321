"""Dotted names into nested maps (`hardware.memory_gib`): how fleet queries name a field of a
node document, in discoverd's answers and in the console's columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def pick(doc: Mapping[str, Any], name: str) -> Any:
    """The value at `name`; None where a part is missing or not a map."""
    value: Any = doc
    for part in name.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value
