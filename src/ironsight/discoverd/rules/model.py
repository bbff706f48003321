"""The internal model of inspection rules, shared by both API dialects and the engine.

Both dialects (Ironic's `/v1/inspection_rules` and ironic-inspector's `/v1/rules`) are parsed
into these frozen dataclasses (validate.py), so that one engine (engine.py) applies all rules
the same way, whatever API created them. Everything a rule run reads is in `Facts`; everything
it decides is in `Outcome`: the engine itself changes nothing outside them, and discoverd's
processing (or a dry run) decides what to do with the outcome.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

#: The dialect a rule was created in; each API shows only the rules of its own dialect.
Dialect = Literal["ironic", "inspector"]
#: How a looping condition combines the results of its items.
Multiple = Literal["any", "all", "first", "last"]
MULTIPLE_VALUES: tuple[str, ...] = ("any", "all", "first", "last")
#: The only phase Ironic knows.
PHASES: tuple[str, ...] = ("main",)
#: User rules' priorities (Ironic's range); built-in rules may use any integer.
USER_PRIORITY_MIN = 0
USER_PRIORITY_MAX = 9999


class MaskPolicy(enum.StrEnum):
    """`[inspection_rules] mask_secrets`: which rules see secret values (passwords, tokens)
    of the inventory and plugin data. ALWAYS (the default, as Ironic's): no rule; NEVER: all
    rules; SENSITIVE: only rules flagged `sensitive`."""

    ALWAYS = "always"
    NEVER = "never"
    SENSITIVE = "sensitive"


@dataclass(frozen=True)
class Condition:
    """One condition: `op` without its "!" prefix (`invert` holds that), `args` named (a
    positional list is converted at validation), `loop` the items `{item}` ranges over (None:
    no loop), `multiple` how the items' results combine."""

    op: str
    invert: bool = False
    args: Mapping[str, Any] = field(default_factory=dict)
    loop: list[Any] | dict[str, Any] | None = None
    multiple: Multiple = "any"


@dataclass(frozen=True)
class Action:
    """One action: `op`, its named `args`, and an optional `loop` (the action runs once per
    item, with `{item}` bound)."""

    op: str
    args: Mapping[str, Any] = field(default_factory=dict)
    loop: list[Any] | dict[str, Any] | None = None


@dataclass(frozen=True)
class Rule:
    """A rule in either dialect. `scope` (inspector dialect only): the rule applies only to
    nodes whose `properties.inspection_scope` equals it. `source`: what the rule's API shows
    back as it was created: for inspector-dialect rules, the body as posted with the
    inspector's defaults filled in; for Ironic-dialect rules, `{"conditions", "actions"}` as
    posted (a positional `args` list stays a list, as Ironic stores the JSON as given), while
    `conditions`/`actions` here hold the named form the engine reads (None: rules stored
    before it was kept, shown in the named form). `created_at`/`updated_at` are set by
    storage (None before)."""

    uuid: str
    description: str | None = None
    priority: int = 0
    phase: str = "main"
    sensitive: bool = False
    conditions: tuple[Condition, ...] = ()
    actions: tuple[Action, ...] = ()
    dialect: Dialect = "ironic"
    scope: str | None = None
    built_in: bool = False
    created_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None
    source: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        """How messages name the rule: its description and UUID when it has a description."""
        if self.description:
            return f"{self.description!r} ({self.uuid})"
        return self.uuid


@dataclass
class Facts:
    """What rules read: `node` is the node JSON as the bare-metal API returns it (with the
    hooks' changes merged in), `inventory` the ramdisk's inventory, `plugin_data` the processed
    data, `ports` the node's ports as JSON. The engine works on copies: the caller's objects
    are never modified."""

    node: dict[str, Any]
    inventory: dict[str, Any]
    plugin_data: dict[str, Any] = field(default_factory=dict)
    ports: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ConditionTrace:
    """One condition's evaluation: its op (with "!" when inverted), its interpolated args (the
    first item's when looping), its result (None: not evaluated, an earlier condition was
    false)."""

    op: str
    args: dict[str, Any]
    result: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "args": self.args, "result": self.result}


@dataclass
class ActionTrace:
    """One action's run: its op, its interpolated args (per item when looping: the last
    item's), and what it changed (JSON-patch-like records: {"op", "path", "value"?} with the
    path prefixed by what it changed: /node, /plugin_data, /ports/<uuid>, /traits, /logs)."""

    op: str
    args: dict[str, Any]
    changes: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "args": self.args, "changes": self.changes}


@dataclass
class RuleTrace:
    """What happened to one rule in a run, for processed data's `rules` list, the node's
    history and the dry run. For sensitive rules (`masked`), args and changed values are
    replaced by "***". `skipped`: why the rule was not evaluated (an inspector-dialect scope
    the node is not in). `false_condition`: the index of the condition that did not hold.
    `compact`: when the rule did not match (and did not fail), `to_dict` gives only its
    identity, `false_condition`, `skipped` and its warnings: processing stores a trace of
    every rule for every report, and the arguments of rules that did not apply are most of
    their size."""

    uuid: str
    description: str | None
    matched: bool
    conditions: list[ConditionTrace] = field(default_factory=list)
    actions: list[ActionTrace] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failure: str | None = None
    masked: bool = False
    skipped: str | None = None
    false_condition: int | None = None
    compact: bool = False

    def to_dict(self) -> dict[str, Any]:
        if self.compact and not self.matched and self.failure is None:
            doc: dict[str, Any] = {"uuid": self.uuid, "description": self.description,
                                   "matched": False}
            if self.skipped is not None:
                doc["skipped"] = self.skipped
            else:
                doc["false_condition"] = self.false_condition
            if self.warnings:
                doc["warnings"] = list(self.warnings)
            return doc
        return {
            "uuid": self.uuid,
            "description": self.description,
            "matched": self.matched,
            "skipped": self.skipped,
            "conditions": [c.to_dict() for c in self.conditions],
            "actions": [a.to_dict() for a in self.actions],
            "warnings": list(self.warnings),
            "failure": self.failure,
        }


@dataclass
class LogEntry:
    """A `log` action's message (or a warning the engine records), with the rule it came
    from; discoverd writes these to its log and the node's history."""

    rule: str
    level: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "level": self.level, "message": self.message}


@dataclass
class Outcome:
    """What a run of the rules decided. `node_patch`: JSON patch ops for
    `PATCH /v1/nodes/{uuid}` (already applied to `node`, the resulting node JSON);
    `traits_add`/`traits_remove`: trait names (net: a trait added then removed is in neither);
    `port_patches`: port UUID → JSON patch ops (already applied to `ports`); `plugin_data`:
    the new processed data; `failure`: a `fail` action's message prefixed with its rule's name
    (the run stopped there); `logs`: `log` actions' messages; `traces`: one per rule
    considered, in the order they ran; `warnings`: every trace's warnings, prefixed by rule."""

    node: dict[str, Any]
    plugin_data: dict[str, Any]
    ports: list[dict[str, Any]]
    node_patch: list[dict[str, Any]] = field(default_factory=list)
    traits_add: list[str] = field(default_factory=list)
    traits_remove: list[str] = field(default_factory=list)
    port_patches: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    failure: str | None = None
    logs: list[LogEntry] = field(default_factory=list)
    traces: list[RuleTrace] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether anything is to be written to the bare-metal service."""
        return bool(self.node_patch or self.traits_add or self.traits_remove
                     or any(self.port_patches.values()))


@dataclass(frozen=True)
class ApiResponse:
    """The answer to one GET of the `api-call` action."""

    status: int
    body: bytes = b""


#: The injected transport of the `api-call` action: one GET of `url` with `headers`,
#: `proxies` (scheme → proxy URL) and a `timeout` in seconds; raises OSError (or
#: TimeoutError) when the server cannot be reached. The engine does the retries.
ApiCall = Callable[[str, Mapping[str, str], Mapping[str, str], float], Awaitable[ApiResponse]]
