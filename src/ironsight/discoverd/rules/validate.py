"""Parsing rule bodies of both API dialects into the model, and showing rules back.

Validation happens here, once, at creation (and after a PATCH): a rule that is stored can
always be applied. Every error is an `InvalidRule` (400) naming the field at fault. The
Ironic dialect follows Ironic's schema (api/schemas/v1/inspection_rule.py: no unknown
fields, at least one action, description ≤ 255, phase "main", priority 0..9999 for user
rules) and checks each op's arguments as upstream does (missing or unexpected → 400); it
also refuses, when the rule is created, node and port paths the bare-metal API would refuse
at run time. The inspector dialect follows ironic-inspector's `/v1/rules` and is converted
into the same model (docs/rules.md, "The inspector dialect").

Both dialects keep the conditions and actions as posted in `Rule.source`, because both APIs
show a rule back as it was created (Ironic stores the JSON as given: a positional `args` list
stays a list), while the engine reads the named form of `Rule.conditions`/`Rule.actions`.
"""

from __future__ import annotations

import copy
import datetime as dt
import ipaddress
import re
import uuid as uuidlib
from collections.abc import Mapping
from typing import Any

from ironsight.common.cel import CelError
from ironsight.common.exceptions import Invalid
from ironsight.discoverd.rules import actions, conditions, paths
from ironsight.discoverd.rules.model import (
    MULTIPLE_VALUES,
    PHASES,
    USER_PRIORITY_MAX,
    USER_PRIORITY_MIN,
    Action,
    Condition,
    Rule,
)

_IRONIC_FIELDS = ("uuid", "description", "priority", "sensitive", "phase", "conditions",
                  "actions")
_CONDITION_FIELDS = ("op", "args", "loop", "multiple")
_ACTION_FIELDS = ("op", "args", "loop")
#: The comparison operators: `(values, force_strings=False)`.
_COMPARISONS = ("eq", "ne", "lt", "gt", "le", "ge")


class InvalidRule(Invalid):
    """A rule body that cannot be accepted; `field` names where (e.g. "actions[0].args.path")."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"Invalid inspection rule: {field}: {message}")
        self.field = field
        self.detail = message


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number", type(None): "null"}.get(
                type(value), type(value).__name__)


def _uuid(body: Mapping[str, Any]) -> str:
    value = body.get("uuid")
    if value is None:
        return str(uuidlib.uuid4())
    if not isinstance(value, str):
        raise InvalidRule("uuid", f"must be a string, not {_type_name(value)}")
    try:
        return str(uuidlib.UUID(value))
    except ValueError:
        raise InvalidRule("uuid", f"{value!r} is not a UUID") from None


def _description(body: Mapping[str, Any], name: str = "description") -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise InvalidRule(name, f"must be a string or null, not {_type_name(value)}")
    if value is not None and len(value) > 255:
        raise InvalidRule(name, f"is {len(value)} characters long; at most 255 are allowed")
    return value


def _unknown(obj: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    extra = sorted(set(obj) - set(allowed))
    if extra:
        prefix = f"{where}." if where else ""
        raise InvalidRule(f"{prefix}{extra[0]}",
                          f"unexpected field (allowed: {', '.join(allowed)})")


def _named_args(op: str, args: Any, required: tuple[str, ...], optional: Mapping[str, Any],
                where: str) -> dict[str, Any]:
    """`args` (a dict, or a list of positional values: required ones first, then optional
    ones in order, as upstream) as a dict; missing or unexpected arguments → 400."""
    if isinstance(args, list):
        names = [*required, *optional]
        if len(args) > len(names):
            raise InvalidRule(f"{where}.args", f"{op} takes at most {len(names)} "
                              f"argument(s) ({', '.join(names)}), got {len(args)}")
        args = dict(zip(names, args, strict=False))
    if not isinstance(args, dict):
        raise InvalidRule(f"{where}.args", f"must be an object or a list, not "
                          f"{_type_name(args)}")
    missing = [name for name in required if name not in args]
    if missing:
        raise InvalidRule(f"{where}.args.{missing[0]}",
                          f"{op} needs argument(s) {', '.join(missing)}")
    unexpected = sorted(set(args) - set(required) - set(optional))
    if unexpected:
        allowed = ", ".join([*required, *optional])
        raise InvalidRule(f"{where}.args.{unexpected[0]}",
                          f"unexpected argument for {op} (allowed: {allowed})")
    return dict(args)


def _loop(item: Mapping[str, Any], where: str) -> list[Any] | dict[str, Any] | None:
    loop = item.get("loop")
    if loop is not None and not isinstance(loop, list | dict):
        raise InvalidRule(f"{where}.loop", f"must be a list or an object, not "
                          f"{_type_name(loop)}")
    return loop


def _literal(value: Any) -> bool:
    """Whether `value` is known at creation (no reference to interpolate)."""
    return not (isinstance(value, str) and "{" in value)


def _check_condition_args(op: str, args: dict[str, Any], where: str, *,
                          positional: bool = False) -> None:
    """The checks of named arguments beyond their names. A positional list for a comparison
    is checked for its length only, as upstream: Ironic maps `["{inventory[x]}", 4096]` onto
    values="{inventory[x]}", force_strings=4096 and accepts it (the condition then fails
    when evaluated, as upstream's does; `positional_warnings` says so at creation)."""
    if op in _COMPARISONS:
        if positional:
            return
        if not isinstance(args["values"], list) and _literal(args["values"]):
            raise InvalidRule(f"{where}.args.values",
                              f"must be a list, not {_type_name(args['values'])}")
        if not isinstance(args.get("force_strings", False), bool):
            raise InvalidRule(f"{where}.args.force_strings", "must be a boolean")
    elif op == "one-of":
        if not isinstance(args.get("values", []), list) and _literal(args["values"]):
            raise InvalidRule(f"{where}.args.values", "must be a list")
    elif op == "cel":
        expression = args["expression"]
        if not isinstance(expression, str):
            raise InvalidRule(f"{where}.args.expression", f"must be a string, not "
                              f"{_type_name(expression)}")
        try:
            conditions.cel_program(expression)
        except CelError as exc:
            raise InvalidRule(f"{where}.args.expression", str(exc)) from None
    elif op == "in-net":
        subnet = args["subnet"]
        if _literal(subnet):
            try:
                ipaddress.ip_network(str(subnet), strict=False)
            except ValueError:
                raise InvalidRule(f"{where}.args.subnet",
                                  f"{subnet!r} is not a network (e.g. 192.0.2.0/24)") from None
    elif op in ("matches", "contains"):
        regex = args["regex"]
        if not isinstance(regex, str):
            raise InvalidRule(f"{where}.args.regex", f"must be a string, not "
                              f"{_type_name(regex)}")
        try:
            re.compile(regex)
        except re.error as exc:
            raise InvalidRule(f"{where}.args.regex",
                              f"invalid regular expression: {exc}") from None


def _op_and_args(item: Any, fields: tuple[str, ...], where: str) -> None:
    """The shape conditions and actions share: an object of known fields with op and args."""
    if not isinstance(item, dict):
        raise InvalidRule(where, f"must be an object, not {_type_name(item)}")
    _unknown(item, fields, where)
    for name in ("op", "args"):
        if name not in item:
            raise InvalidRule(f"{where}.{name}", "is required")


def _condition(item: Any, where: str) -> Condition:
    _op_and_args(item, _CONDITION_FIELDS, where)
    if not isinstance(item["op"], str):
        raise InvalidRule(f"{where}.op", f"must be a string, not {_type_name(item['op'])}")
    try:
        op, invert = conditions.parse_op(item["op"])
    except ValueError as exc:
        raise InvalidRule(f"{where}.op", str(exc)) from None
    spec = conditions.OPERATORS.get(op)
    if spec is None:
        raise InvalidRule(f"{where}.op", f"unknown condition operator {op!r} (known: "
                          f"{', '.join(conditions.OPERATORS)}, each optionally with '!')")
    args = _named_args(op, item["args"], spec.required, spec.optional, where)
    _check_condition_args(op, args, where, positional=isinstance(item["args"], list))
    multiple = item.get("multiple", "any")
    if multiple not in MULTIPLE_VALUES:
        raise InvalidRule(f"{where}.multiple",
                          f"{multiple!r} is not one of {', '.join(MULTIPLE_VALUES)}")
    return Condition(op=op, invert=invert, args=args, loop=_loop(item, where),
                     multiple=multiple)


def _check_action_args(op: str, args: dict[str, Any], where: str) -> None:
    checks = {"set-attribute": actions.node_field, "extend-attribute": actions.node_field,
              "del-attribute": actions.node_field, "set-port-attribute": actions.port_field,
              "extend-port-attribute": actions.port_field,
              "del-port-attribute": actions.port_field, "set-plugin-data": paths.split,
              "extend-plugin-data": paths.split, "unset-plugin-data": paths.split}
    try:
        if op in checks and _literal(args["path"]):
            checks[op](args["path"])
        if op == "api-call":
            actions.check_api_call_args(args)
    except (actions.ActionError, paths.PathError) as exc:
        field = "path" if op != "api-call" else "url"
        message = str(exc)
        for name in ("timeout", "retries", "backoff_factor", "headers", "proxies"):
            if message.startswith(name):
                field = name
        raise InvalidRule(f"{where}.args.{field}", message) from None
    if op == "log" and _literal(args.get("level", "info")):
        level = str(args.get("level", "info")).lower()
        if level not in actions.LOG_LEVELS:
            raise InvalidRule(f"{where}.args.level", f"{level!r} is not one of "
                              f"{', '.join(actions.LOG_LEVELS)}")
    if "unique" in args and not isinstance(args["unique"], bool):
        raise InvalidRule(f"{where}.args.unique", "must be a boolean")


def _action(item: Any, where: str) -> Action:
    _op_and_args(item, _ACTION_FIELDS, where)
    op = item["op"]
    spec = actions.ACTIONS.get(op) if isinstance(op, str) else None
    if spec is None:
        raise InvalidRule(f"{where}.op", f"unknown action {op!r} (known: "
                          f"{', '.join(actions.ACTIONS)})")
    args = _named_args(op, item["args"], spec.required, spec.optional, where)
    _check_action_args(op, args, where)
    return Action(op=op, args=args, loop=_loop(item, where))


def _list(body: Mapping[str, Any], name: str, *, required: bool) -> list[Any]:
    value = body.get(name)
    if value is None:
        if required:
            raise InvalidRule(name, "is required (at least one action)")
        return []
    if not isinstance(value, list):
        raise InvalidRule(name, f"must be a list, not {_type_name(value)}")
    if required and not value:
        raise InvalidRule(name, "needs at least one action")
    return value


def _as_posted(item: Mapping[str, Any], *, condition: bool) -> dict[str, Any]:
    """A (valid) condition or action as Ironic shows it back: `op` and `args` as posted, plus
    `loop` (and a condition's `multiple`) only when it loops, as upstream's
    convert_conditions/convert_actions."""
    shown: dict[str, Any] = {"op": item["op"], "args": copy.deepcopy(item["args"])}
    if item.get("loop"):
        shown["loop"] = copy.deepcopy(item["loop"])
        if condition:
            shown["multiple"] = item.get("multiple", "any")
    return shown


def parse_ironic(body: dict[str, Any], *, built_in: bool = False) -> Rule:
    """An Ironic-dialect body (POST /v1/inspection_rules, or a built-in rules file entry;
    `built_in` lifts the priority range) → a Rule (uuid generated when absent). The
    conditions and actions as they will be shown back (as posted) are kept in
    `Rule.source`."""
    if not isinstance(body, dict):
        raise InvalidRule("body", f"must be an object, not {_type_name(body)}")
    _unknown(body, _IRONIC_FIELDS, "")
    phase = body.get("phase")
    if phase is None:
        phase = "main"
    if not isinstance(phase, str) or phase not in PHASES:
        raise InvalidRule("phase", f"invalid phase {phase!r}; valid phases are: "
                          f"{', '.join(PHASES)}")
    priority = body.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise InvalidRule("priority", f"must be an integer, not {_type_name(priority)}")
    if not built_in and not USER_PRIORITY_MIN <= priority <= USER_PRIORITY_MAX:
        raise InvalidRule("priority", f"{priority} is out of range: user rules have "
                          f"priorities {USER_PRIORITY_MIN}..{USER_PRIORITY_MAX} (others are "
                          "reserved for built-in rules)")
    sensitive = body.get("sensitive")
    if sensitive is not None and not isinstance(sensitive, bool):
        raise InvalidRule("sensitive", f"must be a boolean, not {_type_name(sensitive)}")
    rule_uuid, description = _uuid(body), _description(body)
    posted_conditions = _list(body, "conditions", required=False)
    parsed_conditions = tuple(_condition(c, f"conditions[{i}]")
                              for i, c in enumerate(posted_conditions))
    posted_actions = _list(body, "actions", required=True)
    parsed_actions = tuple(_action(a, f"actions[{i}]") for i, a in enumerate(posted_actions))
    source = {"conditions": [_as_posted(c, condition=True) for c in posted_conditions],
              "actions": [_as_posted(a, condition=False) for a in posted_actions]}
    return Rule(
        uuid=rule_uuid, description=description, priority=priority, phase=phase,
        sensitive=bool(sensitive), conditions=parsed_conditions, actions=parsed_actions,
        dialect="ironic", built_in=built_in, source=source)


def positional_warnings(rule: Rule) -> list[str]:
    """Warnings for the comparisons whose `values` is a literal that is not a list, which
    only a positional `args` list yields (upstream maps `["a", 4096]` onto values="a",
    force_strings=4096): such a condition fails the inspection when it is evaluated, as in
    Ironic, so the API accepts the rule (as Ironic does) but says so at creation."""
    found = []
    for i, condition in enumerate(rule.conditions):
        values = condition.args.get("values")
        if (condition.op in _COMPARISONS and not isinstance(values, list)
                and _literal(values)):
            names = ", ".join(f"{k}={v!r}" for k, v in condition.args.items())
            found.append(f"conditions[{i}].args: a list maps onto {condition.op}'s "
                         f"(values, force_strings) in order, giving {names}; values is not "
                         f"a list, so this condition fails the inspection when evaluated "
                         f"(as in Ironic). Write {{\"values\": [...]}} instead")
    return found


# --- the inspector dialect -----------------------------------------------------------------

_INSPECTOR_FIELDS = ("uuid", "description", "conditions", "actions", "scope")
#: Inspector condition ops and the parameters they take besides op/field/multiple/invert.
_INSPECTOR_CONDITIONS: dict[str, tuple[str, ...]] = {
    "eq": ("value",), "ne": ("value",), "lt": ("value",), "gt": ("value",),
    "le": ("value",), "ge": ("value",), "in-net": ("value",), "matches": ("value",),
    "contains": ("value",), "is-empty": (),
}
_INSPECTOR_MULTIPLE = ("any", "all", "first")
#: Inspector actions: (model op, {inspector parameter: model argument}, optional ones).
_INSPECTOR_ACTIONS: dict[str, tuple[str, dict[str, str], tuple[str, ...]]] = {
    "fail": ("fail", {"message": "msg"}, ()),
    "set-attribute": ("set-attribute", {"path": "path", "value": "value"}, ()),
    "set-capability": ("set-capability", {"name": "name", "value": "value"}, ()),
    "extend-attribute": ("extend-attribute",
                         {"path": "path", "value": "value", "unique": "unique"}, ("unique",)),
    "add-trait": ("add-trait", {"name": "name"}, ()),
    "remove-trait": ("remove-trait", {"name": "name"}, ()),
}
_JSONPATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]|\[['\"]([^'\"]+)['\"]\]")


def _reference(field: Any, where: str) -> str:
    """An inspector `field` (a JSON path, optionally `data://` or `node://`) → the Ironic
    dialect's reference: data://inventory.x → {inventory[x]}, data://x → {plugin_data[x]},
    node://properties.x → {node.properties[x]}."""
    if not isinstance(field, str) or not field.strip():
        raise InvalidRule(f"{where}.field", "is required: a JSON path such as "
                          "'data://inventory.memory.physical_mb' or 'node://properties.x'")
    source, text = "data", field.strip()
    for prefix in ("data://", "node://"):
        if text.startswith(prefix):
            source, text = prefix[:4], text[len(prefix):]
    text = text.removeprefix("$").removeprefix(".")
    parts: list[str] = []
    position = 0
    for match in _JSONPATH_PART.finditer(text):
        between = text[position:match.start()]
        if between not in ("", "."):
            break
        parts.append(match.group(1) or match.group(2) or match.group(3))
        position = match.end()
    if not parts or position != len(text) or parts[0] == "*":
        raise InvalidRule(f"{where}.field", f"{field!r}: only plain paths are supported "
                          "(keys, list indexes and [*], e.g. "
                          "inventory.interfaces[*].mac_address; no filters or slices)")
    keys = "".join(f"[{p}]" for p in parts[1:])
    if source == "node":
        return f"{{node.{parts[0]}{keys}}}"
    if parts[0] == "inventory":
        return f"{{inventory{keys}}}" if keys else "{inventory}"
    return f"{{plugin_data[{parts[0]}]{keys}}}"


def _inspector_condition(item: Any, where: str) -> tuple[Condition, dict[str, Any]]:
    if not isinstance(item, dict):
        raise InvalidRule(where, f"must be an object, not {_type_name(item)}")
    op = item.get("op")
    if op not in _INSPECTOR_CONDITIONS:
        raise InvalidRule(f"{where}.op", f"unknown condition {op!r} (known: "
                          f"{', '.join(_INSPECTOR_CONDITIONS)})")
    params = _INSPECTOR_CONDITIONS[op]
    _unknown(item, ("op", "field", "multiple", "invert", *params), where)
    for name in params:
        if name not in item:
            raise InvalidRule(f"{where}.{name}", f"{op} needs a {name}")
    multiple = item.get("multiple", "any")
    if multiple not in _INSPECTOR_MULTIPLE:
        raise InvalidRule(f"{where}.multiple", f"{multiple!r} is not one of "
                          f"{', '.join(_INSPECTOR_MULTIPLE)}")
    invert = item.get("invert", False)
    if not isinstance(invert, bool):
        raise InvalidRule(f"{where}.invert", "must be a boolean")
    reference = _reference(item.get("field"), where)
    value = item.get("value")
    args: dict[str, Any]
    if op == "in-net":
        args = {"address": reference, "subnet": value}
    elif op in ("matches", "contains"):
        args = {"value": reference, "regex": value}
    elif op == "is-empty":
        args = {"value": reference}
    else:
        args = {"values": [reference, value]}
    try:
        _check_condition_args(op, args, where)
    except InvalidRule as exc:  # the inspector's parameter is `value`, whatever the model's
        raise InvalidRule(f"{where}.value", exc.detail) from None
    shown = {"op": op, "field": item["field"], "multiple": multiple, "invert": invert,
             **{name: item[name] for name in params}}
    return Condition(op=op, invert=invert, args=args, multiple=multiple), shown


def _inspector_action(item: Any, where: str) -> tuple[Action, dict[str, Any]]:
    if not isinstance(item, dict):
        raise InvalidRule(where, f"must be an object, not {_type_name(item)}")
    name = item.get("action")
    if name not in _INSPECTOR_ACTIONS:
        raise InvalidRule(f"{where}.action", f"unknown action {name!r} (known: "
                          f"{', '.join(_INSPECTOR_ACTIONS)})")
    op, params, optional = _INSPECTOR_ACTIONS[name]
    _unknown(item, ("action", *params), where)
    for param in params:
        if param not in item and param not in optional:
            raise InvalidRule(f"{where}.{param}", f"{name} needs a {param}")
    args = {params[p]: item[p] for p in params if p in item}
    spec = actions.ACTIONS[op]
    try:
        _check_action_args(op, {**spec.optional, **args}, where)
    except InvalidRule as exc:  # name the inspector's parameter, not the model's argument
        raise InvalidRule(exc.field.replace(".args.", "."), exc.detail) from None
    return Action(op=op, args=args), {"action": name, **item}


def parse_inspector(body: dict[str, Any]) -> Rule:
    """An ironic-inspector-dialect body (POST /v1/rules) → a Rule (priority 0). The body as
    it will be shown back (with the inspector's defaults) is kept in `Rule.source`. A
    `links` field (from a rule exported with `GET`) is ignored."""
    if not isinstance(body, dict):
        raise InvalidRule("body", f"must be an object, not {_type_name(body)}")
    body = {k: v for k, v in body.items() if k != "links"}
    _unknown(body, _INSPECTOR_FIELDS, "")
    rule_uuid = _uuid(body)
    description = _description(body)
    scope = _description(body, "scope")
    parsed_conditions = [_inspector_condition(c, f"conditions[{i}]")
                         for i, c in enumerate(_list(body, "conditions", required=False))]
    parsed_actions = [_inspector_action(a, f"actions[{i}]")
                      for i, a in enumerate(_list(body, "actions", required=True))]
    source = {"uuid": rule_uuid, "description": description, "scope": scope,
              "conditions": [shown for _c, shown in parsed_conditions],
              "actions": [shown for _a, shown in parsed_actions]}
    return Rule(uuid=rule_uuid, description=description, priority=0, phase="main",
                conditions=tuple(c for c, _shown in parsed_conditions),
                actions=tuple(a for a, _shown in parsed_actions),
                dialect="inspector", scope=scope, source=source)


# --- showing rules -------------------------------------------------------------------------

def _time(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def condition_body(condition: Condition) -> dict[str, Any]:
    """A condition as the Ironic dialect shows it: op (with "!") and args, plus loop and
    multiple when it loops (as upstream's `convert_conditions`)."""
    body: dict[str, Any] = {"op": ("!" if condition.invert else "") + condition.op,
                            "args": dict(condition.args)}
    if condition.loop is not None:
        body["loop"] = condition.loop
        body["multiple"] = condition.multiple
    return body


def action_body(action: Action) -> dict[str, Any]:
    body: dict[str, Any] = {"op": action.op, "args": dict(action.args)}
    if action.loop is not None:
        body["loop"] = action.loop
    return body


def to_ironic(rule: Rule, *, hide_sensitive: bool = True) -> dict[str, Any]:
    """A rule as Ironic's API shows it (without `links`, which the API adds): uuid,
    description, priority, sensitive, phase, conditions, actions, created_at, updated_at
    (ISO 8601 or None), built_in. Conditions and actions are shown as posted (`Rule.source`;
    the named form for rules stored without it). Sensitive rules' conditions/actions are
    None unless `hide_sensitive` is false (for PATCH, which edits the shown body)."""
    hidden = rule.sensitive and hide_sensitive
    source = rule.source if rule.dialect == "ironic" else None
    shown_conditions: list[Any] | None = None
    shown_actions: list[Any] | None = None
    if source is not None and not hidden:
        shown_conditions = copy.deepcopy(list(source["conditions"]))
        shown_actions = copy.deepcopy(list(source["actions"]))
    elif not hidden:
        shown_conditions = [condition_body(c) for c in rule.conditions]
        shown_actions = [action_body(a) for a in rule.actions]
    return {
        "uuid": rule.uuid,
        "description": rule.description,
        "priority": rule.priority,
        "sensitive": rule.sensitive,
        "phase": rule.phase,
        "conditions": shown_conditions,
        "actions": shown_actions,
        "created_at": _time(rule.created_at),
        "updated_at": _time(rule.updated_at),
        "built_in": rule.built_in,
    }


def to_inspector(rule: Rule) -> dict[str, Any]:
    """A rule as ironic-inspector's API shows it (without `links`): uuid, description,
    scope, conditions (with `multiple`, `invert`, `field` defaults), actions. Rules created
    in the inspector dialect are shown as posted (`Rule.source`); others (not listed by the
    inspector API, but a dry run may show them) in the Ironic dialect's terms."""
    if rule.dialect == "inspector" and rule.source is not None:
        source = dict(rule.source)
        source.update(uuid=rule.uuid, description=rule.description, scope=rule.scope)
        return source
    return {"uuid": rule.uuid, "description": rule.description, "scope": rule.scope,
            "conditions": [condition_body(c) for c in rule.conditions],
            "actions": [action_body(a) for a in rule.actions]}
