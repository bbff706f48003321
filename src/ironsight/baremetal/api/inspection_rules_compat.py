"""What python-ironicclient's `baremetal inspection rule` commands send that Ironic's schema
refuses, made to mean what the user typed (ironic-today.md §1.4 item 4), before forwarding.

Only requests that could mean nothing else are rewritten; a well-formed request passes as it
is. Documented in docs/rules.md ("Differences from upstream"):

- `create --priority 100 --sensitive true` sends both as strings: a string of digits becomes
  the integer, an Ironic boolean spelling ("true", "False", "1", "off"...) the boolean.
  Without `--conditions` it sends `"conditions": null`: read as no conditions.
- `unset --action K` / `--condition K` sends `remove /action/K` (`/condition/K`): with K a list
  index, it is `/actions/K` (`/conditions/K`); several are removed highest index first, so
  that each index names the item the user saw (JSON patch would shift the later ones).
- `delete all` (meant to delete every rule; the client sends `DELETE .../all`): "all" is no
  rule's UUID, so it is the collection's DELETE (every non-built-in rule).
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from ironsight.baremetal import fields

DELETE_ALL = "all"
_CLIENT_LIST_PATH = re.compile(r"/(action|condition)/([0-9]+)")


def create_body(body: Any) -> Any:
    if not isinstance(body, dict):
        return body
    fixed = dict(body)
    if isinstance(fixed.get("priority"), str) and re.fullmatch(r"-?[0-9]+",
                                                                fixed["priority"].strip()):
        fixed["priority"] = int(fixed["priority"])
    if isinstance(fixed.get("sensitive"), str):
        with contextlib.suppress(ValueError):  # else left for discoverd to refuse, named
            fixed["sensitive"] = fields.ironic_bool(fixed["sensitive"])
    if "conditions" in fixed and fixed["conditions"] is None:
        del fixed["conditions"]
    return fixed


def patch_body(patch: Any) -> Any:
    if not isinstance(patch, list):
        return patch
    kept: list[Any] = []
    removals: list[tuple[str, int]] = []
    for op in patch:
        found = (_CLIENT_LIST_PATH.fullmatch(op["path"])
                 if isinstance(op, dict) and op.get("op") == "remove"
                 and isinstance(op.get("path"), str) else None)
        if found:
            removals.append((f"{found.group(1)}s", int(found.group(2))))
        else:
            kept.append(op)
    removals.sort(key=lambda item: (item[0], -item[1]))
    return kept + [{"op": "remove", "path": f"/{name}/{index}"} for name, index in removals]


def sub_path(method: str, rest: str) -> str:
    """The sub-path to forward: `DELETE .../all` is the collection's DELETE."""
    return "" if method == "DELETE" and rest == DELETE_ALL else rest
