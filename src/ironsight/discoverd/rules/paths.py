"""Paths into nested JSON documents, as rule actions name them: `/a/b/0` or `a.b.0`.

Upstream accepts both spellings (a path with a "/" is slash-separated, otherwise
dot-separated); so does ironsight, for node and port attributes and plugin data alike. A part
that is a decimal number indexes a list; "-" past a list's end appends (as in JSON pointer).
"""

from __future__ import annotations

from typing import Any


class PathError(Exception):
    """A path that does not lead where an action needs it to (a missing key when deleting, a
    list where an object is needed...); its message names the path."""


def split(path: str) -> list[str]:
    """`/a/b` or `a.b` → ["a", "b"]; JSON pointer escapes (~0, ~1) are decoded in the slash
    form. An empty path is refused."""
    if not isinstance(path, str):
        raise PathError(f"a path must be a string, not {type(path).__name__}")
    if "/" in path:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path.strip("/").split("/")]
    else:
        parts = path.split(".")
    if not parts or any(p == "" for p in parts):
        raise PathError(f"invalid path {path!r}: empty part")
    return parts


def pointer(parts: list[str]) -> str:
    """The JSON pointer of `parts` (for JSON patch ops and traces)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _child(container: Any, part: str, path: str) -> Any:
    if isinstance(container, dict):
        if part not in container:
            raise PathError(f"{path}: no {part!r}")
        return container[part]
    if isinstance(container, list):
        index = _index(container, part, path)
        if index >= len(container):
            raise PathError(f"{path}: index {part} out of range")
        return container[index]
    raise PathError(f"{path}: {part!r} is inside a {type(container).__name__}, not an object")


def _index(container: list[Any], part: str, path: str) -> int:
    if part == "-":
        return len(container)
    if not part.isdigit():
        raise PathError(f"{path}: {part!r} is not an index of a list")
    return int(part)


def get(doc: Any, parts: list[str]) -> Any:
    """The value at `parts`; PathError when absent."""
    path = pointer(parts)
    current = doc
    for part in parts:
        current = _child(current, part, path)
    return current


def _parent(doc: Any, parts: list[str], *, create: bool) -> Any:
    """The container holding the last part; with `create`, missing objects on the way are
    created (as upstream's setdefault does)."""
    path = pointer(parts)
    current = doc
    for part in parts[:-1]:
        if create and isinstance(current, dict) and part not in current:
            current[part] = {}
        current = _child(current, part, path)
    return current


def set_value(doc: Any, parts: list[str], value: Any) -> None:
    """Set the value at `parts`, creating missing objects on the way."""
    parent = _parent(doc, parts, create=True)
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        index = _index(parent, last, pointer(parts))
        if index == len(parent):
            parent.append(value)
        elif index < len(parent):
            parent[index] = value
        else:
            raise PathError(f"{pointer(parts)}: index {last} out of range")
    else:
        raise PathError(f"{pointer(parts)}: the parent is a {type(parent).__name__}, "
                        "not an object")


def delete(doc: Any, parts: list[str]) -> bool:
    """Delete the value at `parts`; False (nothing changed) when it is absent."""
    try:
        parent = _parent(doc, parts, create=False)
    except PathError:
        return False
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
        return True
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
        return True
    return False


def extend(doc: Any, parts: list[str], value: Any, *, unique: bool = False) -> bool:
    """Append `value` to the list at `parts` (created when absent); with `unique`, not when
    it is already there. Returns whether the list changed; PathError when the value there is
    not a list."""
    try:
        current = get(doc, parts)
    except PathError:
        current = None
    if current is None:
        current = []
        set_value(doc, parts, current)
    if not isinstance(current, list):
        raise PathError(f"{pointer(parts)} is a {type(current).__name__}, not a list: "
                        "it cannot be extended")
    if unique and value in current:
        return False
    current.append(value)
    return True
