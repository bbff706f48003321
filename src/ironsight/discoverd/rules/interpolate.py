"""Variables in rule arguments: `{node.<field>}`, `{inventory[...]}`, `{plugin_data[...]}`,
`{item}` (in loops) and, for rules of the inspector dialect, `{data[...]}`.

Upstream Ironic formats argument strings with Python's `str.format`, recursively into
objects and lists (object keys too), and when formatting fails it keeps the literal string
and only logs a warning. ironsight does the same, but records the warning so that it shows
in the rule's trace and the dry run: a typo in a reference is then visible instead of
silently comparing the literal text. Two deliberate differences (docs/rules.md):
- a string that is exactly one reference (`"{inventory[memory][physical_mb]}"`) yields the
  referenced value itself, keeping its type (a number, a list...), rather than its text;
- with `missing_as_none` (used by `is-empty` and `is-none`) a reference to something absent
  yields None instead of the literal string.
In loops, as upstream, a string is formatted a second time when the first pass left
references in it: an item may hold references, or a reference may be built from the item
(`"{{plugin_data[parsed_lldp][{item}][switch_port_id]}}"`).
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]
import functools
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ironsight.discoverd.fleet import document

_NO_ITEM = object()
_MISSING_ERRORS = (KeyError, IndexError, AttributeError)
_FORMAT_ERRORS = (*_MISSING_ERRORS, ValueError, TypeError)
_FIELD_PART = re.compile(r"\.([^.\[]+)|\[([^\]]*)\]")


class _NodeView(dict[str, Any]):
    """The node JSON, readable as `{node.properties[cpu_arch]}` (upstream's node is an
    object) and as `{node[properties]}`."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"the node has no field {name!r}") from None


@dataclass
class Scope:
    """What references resolve against. The caller gives masked views where the rule must
    not see secrets (masking.py)."""

    node: Mapping[str, Any]
    inventory: Mapping[str, Any]
    plugin_data: Mapping[str, Any]
    item: Any = _NO_ITEM
    inspector: bool = False
    _context: dict[str, Any] | None = field(default=None, repr=False)
    _document: dict[str, Any] | None = field(default=None, repr=False)

    def with_item(self, item: Any) -> Scope:
        return Scope(self.node, self.inventory, self.plugin_data, item, self.inspector,
                     _document=self._document)

    def document(self) -> dict[str, Any]:
        """The fleet queries' node document of this scope (`cel` conditions), built once."""
        if self._document is None:
            self._document = document.build(
                _plain(self.node), {**self.plugin_data, "inventory": self.inventory}, None)
        return self._document

    @property
    def has_item(self) -> bool:
        return self.item is not _NO_ITEM

    def context(self) -> dict[str, Any]:
        if self._context is None:
            ctx: dict[str, Any] = {"node": _NodeView(self.node), "inventory": self.inventory,
                                   "plugin_data": self.plugin_data}
            if self.inspector:
                # ironic-inspector formats with its processed data, the inventory inside it.
                ctx["data"] = {**self.plugin_data, "inventory": self.inventory}
            if self.item is not _NO_ITEM:
                ctx["item"] = self.item
            self._context = ctx
        return self._context


_FORMATTER = string.Formatter()


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, _NodeView) else value


class _Template:
    """A string's references, parsed once (`_template`): rules are applied to every report,
    and parsing the same argument strings again for each is most of what interpolation
    costs. `single`: the string is exactly one reference (`first`, then `parts`), whose value
    keeps its type; otherwise the string is formatted as a whole."""

    __slots__ = ("error", "first", "parts", "single")

    def __init__(self, text: str) -> None:
        self.single = False
        self.first: Any = None
        self.parts: tuple[tuple[bool, Any], ...] = ()
        self.error: str | None = None
        parsed = list(_FORMATTER.parse(text))  # ValueError: not a valid format string
        if (len(parsed) == 1 and parsed[0][0] == "" and parsed[0][1]
                and not parsed[0][2] and parsed[0][3] is None):
            self.single = True
            first, rest = _string.formatter_field_name_split(parsed[0][1])
            self.first = first
            parts = []
            try:
                for part in rest:
                    parts.append(part)
            except ValueError as exc:
                # string.Formatter reads the parts as it looks them up: the lookups before
                # a malformed part come first, so that something absent still reads as
                # absent (missing_as_none) rather than as the syntax error.
                self.error = str(exc)
            self.parts = tuple(parts)

    def resolve(self, ctx: Mapping[str, Any]) -> Any:
        """The referenced value, as string.Formatter.get_field finds it."""
        obj = ctx[self.first] if not isinstance(self.first, int) else ()[self.first]
        for is_attr, key in self.parts:
            obj = getattr(obj, key) if is_attr else obj[key]
        if self.error is not None:
            raise ValueError(self.error)
        return obj


@functools.lru_cache(maxsize=4096)
def _template(text: str) -> _Template:
    return _Template(text)


def _format(text: str, scope: Scope, warnings: list[str], missing_as_none: bool) -> Any:
    if "{" not in text and "}" not in text:
        return text
    ctx = scope.context()
    try:
        template = _template(text)
        if template.single:
            return _plain(template.resolve(ctx))
        return text.format(**ctx)
    except _FORMAT_ERRORS as exc:
        if missing_as_none and isinstance(exc, _MISSING_ERRORS):
            return None
        detail = f"{exc.__class__.__name__}: {exc}"
        warnings.append(f"could not interpolate {text!r} ({detail}); its literal text is used")
        return text


def interpolate(value: Any, scope: Scope, warnings: list[str], *,
                missing_as_none: bool = False) -> Any:
    """`value` with every reference in its strings replaced, recursively; failures are
    appended to `warnings` and leave the literal string (or None, with `missing_as_none`)."""
    if isinstance(value, str):
        if "{" not in value and "}" not in value:
            return value  # most literals: nothing to parse
        result = _format(value, scope, warnings, missing_as_none)
        if scope.has_item and isinstance(result, str) and result != value and "{" in result:
            # Upstream formats twice in loops, so that an item may carry references
            # ({"value": "{inventory[bmc_address]}"}) or build one ("{{...[{item}]}}").
            result = _format(result, scope, warnings, missing_as_none)
        return result
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            new_key = _format(key, scope, warnings, False) if isinstance(key, str) else key
            result[str(new_key) if not isinstance(new_key, str) else new_key] = interpolate(
                item, scope, warnings, missing_as_none=missing_as_none)
        return result
    if isinstance(value, list):
        return [v if isinstance(v, int | float) else
                interpolate(v, scope, warnings, missing_as_none=missing_as_none)
                for v in value]
    return value


def references(value: Any) -> list[tuple[str, ...]]:
    """The references in `value`'s strings, each as (root, key, key...): e.g.
    `"{inventory[memory][physical_mb]}"` → ("inventory", "memory", "physical_mb"),
    `"{node.properties[cpu_arch]}"` → ("node", "properties", "cpu_arch"). Strings that are
    not valid format strings have none. (The API warns about inventory paths that no stored
    inventory has.)"""
    found: list[tuple[str, ...]] = []
    if isinstance(value, str):
        if "{" not in value:
            return found
        try:
            parsed = list(_FORMATTER.parse(value))
        except ValueError:
            return found
        for _literal, name, _spec, _conv in parsed:
            if name:
                found.append(_split_field(name))
    elif isinstance(value, dict):
        for key, item in value.items():
            found.extend(references(key))
            found.extend(references(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(references(item))
    return found


def _split_field(name: str) -> tuple[str, ...]:
    match = re.match(r"[^.\[]*", name)
    root = match.group(0) if match else name
    parts = [root]
    for attr, key in _FIELD_PART.findall(name[len(root):]):
        parts.append(attr or key)
    return tuple(parts)


WILDCARD = "*"


def expand(reference: str, scope: Scope) -> list[Any] | None:
    """The values a reference with `[*]` parts stands for (ironic-inspector's JSON path
    wildcards, `inventory.interfaces[*].ipv4_address`, converted to
    `{inventory[interfaces][*][ipv4_address]}`): each `[*]` ranges over a list's items (or an
    object's values); items lacking the rest of the path are left out. None when `reference`
    is not one wildcard reference."""
    text = reference.strip() if isinstance(reference, str) else ""
    if not (text.startswith("{") and text.endswith("}") and f"[{WILDCARD}]" in text):
        return None
    parts = _split_field(text[1:-1])
    root = scope.context().get(parts[0])
    if root is None:
        return []
    values: list[Any] = [root]
    for part in parts[1:]:
        found: list[Any] = []
        for value in values:
            if part == WILDCARD:
                if isinstance(value, list):
                    found.extend(value)
                elif isinstance(value, Mapping):
                    found.extend(value.values())
            elif isinstance(value, Mapping) and part in value:
                found.append(value[part])
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                found.append(value[int(part)])
            elif hasattr(value, part) and isinstance(value, _NodeView):
                found.append(getattr(value, part))
        values = found
    return [_plain(v) for v in values]
