"""Applying rules to one node's facts: pure, except for the `api-call` action, whose GET goes
through an injected callable (discoverd's processing gives it one; a dry run gives none, and
the action is then only recorded)."""

from __future__ import annotations

from collections.abc import Sequence

from ironsight.discoverd.rules.model import ApiCall, Facts, MaskPolicy, Outcome, Rule


async def apply_rules(rules: Sequence[Rule], facts: Facts, *, mask: MaskPolicy,
                      api_call: ApiCall | None = None) -> Outcome:
    """Run `rules` (any order: sorted here by priority descending, stably) against `facts`
    (not modified) and return what they decided. A `fail` action stops the run."""
    raise NotImplementedError
