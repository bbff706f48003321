"""The creation-time warning: a rule that reads an inventory path that none of the stored
inventories has (a typo such as `{inventory[memory][physical_gb]}` would otherwise only show
as a rule that never matches). Only a warning: the rule may be meant for hardware not yet
inspected."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from ironsight.discoverd.rules.model import Rule

# `{inventory[a][b]...}` in an interpolated string (the `[...]` keys of str.format).
_REFERENCE = re.compile(r"\{inventory((?:\[[^\[\]{}]*\])+)[^{}]*\}")
_KEY = re.compile(r"\[([^\[\]]*)\]")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def inventory_paths(rule: Rule) -> list[tuple[str, ...]]:
    """The inventory paths `rule`'s arguments interpolate, in order, without duplicates."""
    found: dict[tuple[str, ...], None] = {}
    parts = [*(c.args for c in rule.conditions), *(a.args for a in rule.actions)]
    for text in _strings([dict(p) for p in parts]):
        for match in _REFERENCE.finditer(text):
            found[tuple(_KEY.findall(match.group(1)))] = None
    return list(found)


def _has(inventory: Any, path: tuple[str, ...]) -> bool:
    node = inventory
    for key in path:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False
    return True


def missing_paths(rule: Rule, inventories: Iterable[Any]) -> list[str]:
    """Warnings for the paths no inventory of `inventories` has (none when there are no
    inventories to judge by)."""
    stored = [inv for inv in inventories if isinstance(inv, dict)]
    if not stored:
        return []
    return [f"inventory path {'.'.join(path)} is absent from every stored inventory "
            f"({len(stored)} checked)"
            for path in inventory_paths(rule) if not any(_has(inv, path) for inv in stored)]
