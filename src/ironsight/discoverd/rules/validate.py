"""Parsing rule bodies of both API dialects into the model, and showing rules back.

Validation happens here, once, at creation (and after a PATCH): a rule that is stored can
always be applied. Every error is an `InvalidRule` (400) naming the field at fault.
"""

from __future__ import annotations

from typing import Any

from ironsight.common.exceptions import Invalid
from ironsight.discoverd.rules.model import Rule


class InvalidRule(Invalid):
    """A rule body that cannot be accepted; `field` names where (e.g. "actions[0].args.path")."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"Invalid inspection rule: {field}: {message}")
        self.field = field


def parse_ironic(body: dict[str, Any], *, built_in: bool = False) -> Rule:
    """An Ironic-dialect body (POST /v1/inspection_rules, or a built-in rules file entry;
    `built_in` lifts the priority range) → a Rule (uuid generated when absent)."""
    raise NotImplementedError


def parse_inspector(body: dict[str, Any]) -> Rule:
    """An ironic-inspector-dialect body (POST /v1/rules) → a Rule (priority 0)."""
    raise NotImplementedError


def to_ironic(rule: Rule, *, hide_sensitive: bool = True) -> dict[str, Any]:
    """A rule as Ironic's API shows it (without `links`, which the API adds): uuid,
    description, priority, sensitive, phase, conditions, actions, created_at, updated_at
    (ISO 8601 or None), built_in. Sensitive rules' conditions/actions are None unless
    `hide_sensitive` is false (for PATCH, which edits the real body)."""
    raise NotImplementedError


def to_inspector(rule: Rule) -> dict[str, Any]:
    """A rule as ironic-inspector's API shows it (without `links`): uuid, description,
    scope, conditions (with `multiple`, `invert`, `field` defaults), actions."""
    raise NotImplementedError
