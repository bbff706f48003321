"""Reading inspection rules from what the upstream clients accept, and telling their dialect.

`baremetal inspection rule create --actions/--conditions` take JSON, a file, or `-` (stdin);
`openstack baremetal introspection rule import` takes a JSON or YAML file holding one rule or a
list. `ironsight rule` takes all of these, in either dialect:

- Ironic's (`/v1/inspection_rules`): conditions and actions are `{"op", "args", ...}`;
- the inspector's (`/v1/rules`): conditions carry a `field`, actions an `action`.

A rule is the inspector's when any of its conditions has a `field`, any of its actions an
`action`, or it has a `scope`; otherwise Ironic's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

import yaml  # type: ignore[import-untyped]

Dialect = Literal["ironic", "inspector"]


class RuleFileError(ValueError):
    """What was given is not a rule (or a list of rules); the message says where and why."""


def parse_document(text: str, source: str) -> Any:
    """JSON, or else YAML (JSON is tried first: its error messages are the clearer ones
    for a JSON file)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RuleFileError(f"{source}: neither JSON nor YAML: {exc}") from None


def read_source(spec: str) -> tuple[str, str]:
    """(text, name) of `-` (stdin) or a file path."""
    if spec == "-":
        return sys.stdin.read(), "stdin"
    try:
        return Path(spec).read_text(), spec
    except OSError as exc:
        raise RuleFileError(f"{spec}: cannot be read: {exc.strerror or exc}") from None


def load_rules(spec: str) -> list[dict[str, Any]]:
    """The rules of a file (or stdin): one rule or a list of them."""
    text, source = read_source(spec)
    doc = parse_document(text, source)
    rules = doc if isinstance(doc, list) else [doc]
    if not rules:
        raise RuleFileError(f"{source}: the list of rules is empty")
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict):
            where = f"{source}: rule {index}" if isinstance(doc, list) else source
            raise RuleFileError(f"{where}: a rule is a mapping (with at least `actions`), "
                                f"not {type(rule).__name__}")
    return rules


def json_arg(value: str, what: str) -> Any:
    """A `--conditions`/`--actions` value, as `baremetal` takes it: JSON (or YAML) text, a
    file holding it, or `-` for stdin."""
    if value == "-" or (not value.lstrip().startswith(("[", "{")) and Path(value).is_file()):
        text, source = read_source(value)
    else:
        text, source = value, what
    return parse_document(text, source)


def _has(items: Any, key: str) -> bool:
    return isinstance(items, list) and any(isinstance(i, dict) and key in i for i in items)


def dialect_of(rule: dict[str, Any]) -> Dialect:
    if ("scope" in rule or _has(rule.get("conditions"), "field")
            or _has(rule.get("actions"), "action")):
        return "inspector"
    return "ironic"
