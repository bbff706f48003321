"""JSON patches for the bare-metal API from what a run changed.

Actions change in-memory copies of the node and its ports; the patch is computed at the end
by comparing each with its original, one level inside object fields (`/properties/memory_mb`,
`/extra/x`), so that one PATCH per node (and per changed port) carries everything, and fields
the rules did not touch are never rewritten: a node's `driver_info` as the API shows it has
its secrets masked, and writing it back whole would store the masks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ironsight.discoverd.rules.paths import pointer


def diff(before: dict[str, Any], after: dict[str, Any], fields: Iterable[str],
         dict_fields: Iterable[str]) -> list[dict[str, Any]]:
    """Patch ops turning `before` into `after` for the top-level `fields`: object fields
    (`dict_fields`) key by key, others whole. Removed keys → "remove", others → "add"
    (which replaces, for an object member)."""
    ops: list[dict[str, Any]] = []
    objects = set(dict_fields)
    for name in sorted(fields):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if name in objects and isinstance(old, dict) and isinstance(new, dict):
            for key in old:
                if key not in new:
                    ops.append({"op": "remove", "path": pointer([name, key])})
            for key, value in new.items():
                if key not in old or old[key] != value:
                    ops.append({"op": "add", "path": pointer([name, key]), "value": value})
        elif new is None and name in after:
            ops.append({"op": "remove", "path": pointer([name])})
        else:
            ops.append({"op": "add", "path": pointer([name]), "value": new})
    return ops
