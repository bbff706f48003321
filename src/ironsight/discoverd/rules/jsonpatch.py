"""RFC 6902 `add`, `replace` and `remove` (the ops Ironic's PATCH of an inspection rule
accepts) on a JSON document, with errors naming the op at fault. The result is a new document;
the input is never modified, so a patch that fails half-way changes nothing."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from ironsight.common.exceptions import Invalid

OPS = ("add", "replace", "remove")


def _tokens(path: Any, where: str) -> list[str]:
    if not isinstance(path, str) or not path.startswith("/"):
        raise Invalid(f"{where}.path: a JSON pointer starting with '/' is required")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _index(token: str, size: int, where: str, *, append: bool) -> int:
    if append and token == "-":
        return size
    if not (token.isdigit() and (token == "0" or not token.startswith("0"))):
        raise Invalid(f"{where}.path: {token!r} is not a list index")
    index = int(token)
    if index > size or (index == size and not append):
        raise Invalid(f"{where}.path: index {index} is out of range")
    return index


def apply(doc: dict[str, Any], ops: Any) -> dict[str, Any]:
    """`doc` patched by `ops`; Invalid ("patch[i]...: why") on a bad op or path."""
    if not isinstance(ops, list) or not ops:
        raise Invalid("patch: a non-empty list of JSON patch operations is required")
    result = copy.deepcopy(doc)
    for i, op in enumerate(ops):
        where = f"patch[{i}]"
        if not isinstance(op, dict):
            raise Invalid(f"{where}: an object is required")
        kind = op.get("op")
        if kind not in OPS:
            raise Invalid(f"{where}.op: {kind!r} is not supported (one of {', '.join(OPS)})")
        extra = set(op) - {"op", "path", "value"}
        if extra:
            raise Invalid(f"{where}: unexpected member(s) {', '.join(sorted(extra))}")
        if kind != "remove" and "value" not in op:
            raise Invalid(f"{where}.value: required for {kind}")
        tokens = _tokens(op.get("path"), where)
        _apply_one(result, tokens, kind, op.get("value"), where)
    return result


def _apply_one(doc: Any, tokens: Sequence[str], kind: str, value: Any, where: str) -> None:
    parent = doc
    for token in tokens[:-1]:
        if isinstance(parent, dict) and token in parent:
            parent = parent[token]
        elif isinstance(parent, list):
            parent = parent[_index(token, len(parent), where, append=False)]
        else:
            raise Invalid(f"{where}.path: {'/'.join(tokens)!r} does not exist")
    last = tokens[-1]
    if isinstance(parent, dict):
        if kind != "add" and last not in parent:
            raise Invalid(f"{where}.path: {'/'.join(tokens)!r} does not exist")
        if kind == "remove":
            del parent[last]
        else:
            parent[last] = copy.deepcopy(value)
    elif isinstance(parent, list):
        index = _index(last, len(parent), where, append=kind == "add")
        if kind == "add":
            parent.insert(index, copy.deepcopy(value))
        elif kind == "replace":
            parent[index] = copy.deepcopy(value)
        else:
            del parent[index]
    else:
        raise Invalid(f"{where}.path: {'/'.join(tokens)!r} does not exist")
