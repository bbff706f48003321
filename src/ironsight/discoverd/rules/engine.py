"""Applying rules to one node's facts: pure, except for the `api-call` action, whose GET goes
through an injected callable (discoverd's processing gives it one; a dry run gives none, and
the action is then only recorded).

Semantics (upstream Ironic's, docs/rules.md): rules run by priority, highest first (a stable
sort: equal priorities keep the order given); a rule's conditions are ANDed and evaluation
stops at the first false one (an empty list matches); a matching rule's actions run in
order; a `fail` action, or a condition or action that cannot be carried out, stops the run
with `Outcome.failure` naming the rule. Each rule sees the changes of the rules before it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from ironsight.discoverd.rules import actions, conditions, masking, patches
from ironsight.discoverd.rules.interpolate import Scope, interpolate
from ironsight.discoverd.rules.model import (
    Action,
    ActionTrace,
    ApiCall,
    Condition,
    ConditionTrace,
    Facts,
    MaskPolicy,
    Outcome,
    Rule,
    RuleTrace,
)


class _Views:
    """The inventory and plugin data as a rule may read them: masked copies (the inventory's
    made once per run, the plugin data's again only when it changed) or working copies. Each
    copy is made on first need: a run whose rules all read masked values never copies the
    inventory twice."""

    def __init__(self, inventory: dict[str, Any], state: actions.RunState) -> None:
        self.inventory = inventory
        self.state = state
        self._masked_inventory: dict[str, Any] | None = None
        self._inventory_copy: dict[str, Any] | None = None
        self._masked_plugin: tuple[int, dict[str, Any]] | None = None
        # Scopes (each with its formatting context, a view of the node) shared by the
        # conditions of every rule until an action may have changed what they show.
        self._scopes: dict[tuple[bool, bool], Scope] = {}

    def changed(self) -> None:
        """An action ran: the node, ports or plugin data may differ from what the scopes
        made so far show."""
        self._scopes.clear()

    def scope(self, mask: bool, inspector: bool) -> Scope:
        scope = self._scopes.get((mask, inspector))
        if scope is None:
            scope = self._scopes[mask, inspector] = self._scope(mask, inspector)
        return scope

    def _scope(self, mask: bool, inspector: bool) -> Scope:
        if not mask:
            if self._inventory_copy is None:
                # A value read from it may end up in the plugin data, which actions change.
                self._inventory_copy = copy.deepcopy(self.inventory)
            return Scope(self.state.node, self._inventory_copy, self.state.plugin_data,
                         inspector=inspector)
        if self._masked_inventory is None:
            self._masked_inventory = masking.masked(self.inventory)
        version = self.state.plugin_data_version
        if self._masked_plugin is None or self._masked_plugin[0] != version:
            self._masked_plugin = (version, masking.masked(self.state.plugin_data))
        return Scope(self.state.node, self._masked_inventory, self._masked_plugin[1],
                     inspector=inspector)


def _op_name(condition: Condition) -> str:
    return ("!" if condition.invert else "") + condition.op


def _in_scope(rule: Rule, node: dict[str, Any]) -> bool:
    if rule.scope is None:
        return True
    properties = node.get("properties") or {}
    return isinstance(properties, dict) and properties.get("inspection_scope") == rule.scope


async def _run_action(action: Action, rule: Rule, state: actions.RunState,
                      scope: Scope, warnings: list[str]) -> tuple[dict[str, Any], list[Any]]:
    spec = actions.ACTIONS[action.op]
    items: list[Any]
    if not action.loop:
        items = [None]
    elif isinstance(action.loop, dict):
        items = [action.loop]
    else:
        items = list(action.loop)
    args: dict[str, Any] = {}
    changes: list[Any] = []
    for item in items:
        item_scope = scope if not action.loop else scope.with_item(item)
        args = {k: interpolate(v, item_scope, warnings)
                for k, v in {**spec.optional, **action.args}.items()}
        changes.extend(await spec.run(state, rule, args))
    return args, changes


def _shown(trace: RuleTrace) -> RuleTrace:
    """A sensitive rule's trace: what ran, not with which values."""
    for c in trace.conditions:
        c.args = masking.hidden(c.args)
    for a in trace.actions:
        a.args = masking.hidden(a.args)
        a.changes = [{k: (masking.hidden(v) if k == "value" else v) for k, v in change.items()}
                     for change in a.changes]
    trace.warnings = [f"(hidden: the rule is sensitive) warning {i + 1}"
                      for i in range(len(trace.warnings))]
    trace.masked = True
    return trace


class _Broken(str):
    """A failure the engine met (not a `fail` action's message, which is the operator's own
    and shown even for sensitive rules); `where` names the condition or action."""

    where: str

    def __new__(cls, where: str, cause: Exception | None = None) -> _Broken:
        text = f"{where} failed: {cause}" if cause is not None else where
        self = super().__new__(cls, text)
        self.where = where
        return self


async def _apply_rule(rule: Rule, state: actions.RunState, views: _Views,
                      mask: MaskPolicy, trace: RuleTrace) -> str | None:
    """Evaluate and, when it matches, apply one rule; the failure message, if any."""
    hide = masking.hides_secrets(mask, rule)
    inspector = rule.dialect == "inspector"
    trace.matched = True
    for index, condition in enumerate(rule.conditions):
        try:
            result, args = conditions.evaluate(condition, views.scope(hide, inspector),
                                               trace.warnings)
        except conditions.ConditionError as exc:
            trace.conditions.append(ConditionTrace(_op_name(condition),
                                                   dict(condition.args), None))
            trace.matched = False
            return _Broken(f"condition {index} ({_op_name(condition)})", exc)
        trace.conditions.append(ConditionTrace(_op_name(condition), args, result))
        if not result:
            trace.matched = False
            trace.false_condition = index
            if not trace.compact:
                trace.conditions.extend(ConditionTrace(_op_name(c), dict(c.args), None)
                                        for c in rule.conditions[index + 1:])
            return None
    for index, action in enumerate(rule.actions):
        warnings_before = len(state.warnings)
        action_trace = ActionTrace(action.op, dict(action.args))
        trace.actions.append(action_trace)
        try:
            action_trace.args, action_trace.changes = await _run_action(
                action, rule, state, views.scope(hide, inspector), trace.warnings)
        except actions.RuleFailed as exc:
            return str(exc)
        except actions.ActionError as exc:
            return _Broken(f"action {index} ({action.op})", exc)
        finally:
            views.changed()
            trace.warnings.extend(state.warnings[warnings_before:])
            del state.warnings[warnings_before:]
    return None


async def apply_rules(rules: Sequence[Rule], facts: Facts, *, mask: MaskPolicy,
                      api_call: ApiCall | None = None, compact: bool = False) -> Outcome:
    """Run `rules` (any order: sorted here by priority descending, stably) against `facts`
    (not modified) and return what they decided. A `fail` action stops the run.
    `compact`: the traces of rules that did not match keep only which condition was false
    (RuleTrace.compact), what processing stores for every report; a dry run wants them in
    full."""
    # The inventory is only read (through copies made by _Views): no copy of it here.
    state = actions.RunState(node=copy.deepcopy(facts.node),
                             plugin_data=copy.deepcopy(facts.plugin_data),
                             ports=copy.deepcopy(facts.ports), api_call=api_call,
                             inventory=facts.inventory)
    views = _Views(facts.inventory, state)
    outcome = Outcome(node=state.node, plugin_data=state.plugin_data, ports=state.ports)
    for rule in sorted(rules, key=lambda r: -r.priority):
        trace = RuleTrace(rule.uuid, rule.description, matched=False, compact=compact)
        outcome.traces.append(trace)
        if not _in_scope(rule, state.node):
            trace.skipped = f"out of scope {rule.scope!r}"
            continue
        failure = await _apply_rule(rule, state, views, mask, trace)
        if rule.sensitive:
            _shown(trace)
            if isinstance(failure, _Broken):
                failure = _Broken(f"{failure.where} failed (details hidden: the rule is "
                                  "sensitive)")
        outcome.warnings.extend(f"rule {rule.name}: {w}" for w in trace.warnings)
        if failure is not None:
            trace.failure = failure
            outcome.failure = f"rule {rule.name}: {failure}"
            break
    outcome.logs = state.logs
    _finish(outcome, facts)
    return outcome


def _finish(outcome: Outcome, facts: Facts) -> None:
    """The patches, from the working copies compared with the facts."""
    outcome.node_patch = patches.diff(facts.node, outcome.node, actions.NODE_FIELDS,
                                      actions.NODE_DICT_FIELDS)
    before = list(facts.node.get("traits") or [])
    after = list(outcome.node.get("traits") or [])
    outcome.traits_add = [t for t in after if t not in before]
    outcome.traits_remove = [t for t in before if t not in after]
    originals = {p.get("uuid"): p for p in facts.ports}
    for port in outcome.ports:
        ops = patches.diff(originals.get(port.get("uuid"), {}), port, actions.PORT_FIELDS,
                           actions.PORT_DICT_FIELDS)
        if ops:
            outcome.port_patches[str(port.get("uuid"))] = ops
