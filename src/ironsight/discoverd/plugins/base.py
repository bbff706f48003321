"""Processing hooks: the plugin API (docs/hooks.md is its operator and author guide).

A hook is a class registered under the `ironsight.processing_hooks` entry point group and
named in `[processing] processing_hooks`. It reads a ramdisk report (`ctx.data`, validated by
formats.py) and, once the node is known, its record (`ctx.node`, `ctx.ports`), and records
the changes it wants in `ctx.changes`. Hooks do no I/O: discoverd applies all changes with
as few bare-metal API requests as possible (one PATCH for all properties), which keeps each
hook a pure function that is easy to test, and a whole chain of hooks one round of requests.

Hooks hand each other data through typed *facts*, never through keys of the report: a hook
declares the facts it `provides` and the facts it `requires`, and `load_hooks` refuses a
chain in which a hook needs a fact that no earlier hook provides, naming both. A fact's value
is also what that hook adds to the stored processed data (`Fact.store`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, ClassVar, Generic, TypeVar

from ironsight.common import plugins
from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError, Invalid

GROUP = plugins.PROCESSING_HOOKS
LOG = logging.getLogger(__name__)
T = TypeVar("T")


class HookError(Invalid):
    """The report cannot be processed; the introspection ends with this message."""


class ReportedError(HookError):
    """An error the ramdisk itself reported: its message stands alone, without the name of
    the hook that raised it."""


@dataclass(frozen=True, eq=False)
class Fact(Generic[T]):
    """A typed piece of what processing found, handed from the hook that provides it to the
    hooks that require it. Facts compare by identity: two packages may not collide."""

    name: str
    type: type[T]
    doc: str
    # What the fact adds to the stored processed data (GET .../data): a flat mapping.
    store: Callable[[T], Mapping[str, Any]] = field(default=lambda _value: {})
    # Keys of the report that the stored form replaces (dropped from the processed data
    # when the fact is set): extra-hardware's `extra` replaces the raw `data`, as upstream.
    replaces: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"Fact({self.name!r})"


@dataclass
class Changes:
    """What the hooks want done to the node and its ports."""

    properties: dict[str, Any] = field(default_factory=dict)
    create_ports: dict[str, bool] = field(default_factory=dict)  # mac -> pxe_enabled
    delete_ports: list[str] = field(default_factory=list)  # port uuids
    port_patches: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # mac -> fields a port created in this run is created with (local_link_connection,
    # physical_network): hooks that fill ports need not run after `ports`, and a new port
    # costs one request. Unused for a MAC whose port is not created.
    port_fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def patch_port(self, port_uuid: str, *ops: dict[str, Any]) -> None:
        """Add JSON-patch operations for an existing port, after those of earlier hooks."""
        if ops:
            self.port_patches.setdefault(port_uuid, []).extend(ops)


@dataclass
class ProcessingContext:
    conf: Config
    data: dict[str, Any]  # the validated report, in the agent's shape; hooks only read it
    node: dict[str, Any] = field(default_factory=dict)
    ports: list[dict[str, Any]] = field(default_factory=list)
    changes: Changes = field(default_factory=Changes)
    # The raw report of the node's previous introspection, for hooks that compare with it
    # (`uses_previous_report`); None when no hook does or none is kept.
    previous: dict[str, Any] | None = None
    _facts: dict[Fact[Any], Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def inventory(self) -> dict[str, Any]:
        return dict(self.data.get("inventory") or {})

    def get(self, fact: Fact[T]) -> T:
        """A fact an earlier hook provided (`load_hooks` has checked one does)."""
        try:
            value: T = self._facts[fact]
            return value
        except KeyError:
            raise HookError(f"fact {fact.name!r} was not provided: the hook that provides "
                            "it did not set it") from None

    def set(self, fact: Fact[T], value: T) -> None:
        if not isinstance(value, fact.type):
            raise TypeError(f"fact {fact.name!r} takes a {fact.type.__name__}, "
                            f"not {type(value).__name__}")
        self._facts[fact] = value

    def has(self, fact: Fact[Any]) -> bool:
        return fact in self._facts

    def set_property(self, key: str, value: Any) -> None:
        """Fill a node property: only when missing, unless overwrite_existing is set."""
        current = (self.node.get("properties") or {}).get(key)
        may_write = current in (None, "") or self.conf.processing.overwrite_existing
        if may_write and current != value:
            self.changes.properties[key] = value

    def warn(self, message: str) -> None:
        """Something in the report was unusable and skipped: logged, and listed in the
        processed data's `changes.warnings`, so that an operator sees it for the node."""
        if message not in self.changes.warnings:  # two hooks may find the same problem
            LOG.warning("Node %s: %s", self.node.get("uuid", "(not looked up yet)"), message)
            self.changes.warnings.append(message)

    def processed_data(self) -> dict[str, Any]:
        """The report with what every fact stores: the processed data discoverd keeps."""
        processed = dict(self.data)
        for fact, value in self._facts.items():
            for key in fact.replaces:
                processed.pop(key, None)
            processed.update(fact.store(value))
        return processed


class ProcessingHook:
    """Base class; override one or both steps. Every `before_processing` of the chain runs
    before any `before_update`."""

    name: ClassVar[str] = "base"
    requires: ClassVar[Sequence[Fact[Any]]] = ()
    provides: ClassVar[Sequence[Fact[Any]]] = ()
    # True: discoverd loads the node's previous raw report into `ctx.previous` first.
    uses_previous_report: ClassVar[bool] = False

    def __init__(self, conf: Config) -> None:
        self.conf = conf

    def before_processing(self, ctx: ProcessingContext) -> None:
        """Check the report, before the node is looked up: a failure here is told to the
        ramdisk at once and changes no node."""

    def before_update(self, ctx: ProcessingContext) -> None:
        """Decide node changes, once the node and its ports are known."""


def registered() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def _load_class(ep: EntryPoint) -> type[ProcessingHook]:
    try:
        cls = ep.load()
    except Exception as exc:
        raise ConfigError(f"[processing] processing_hooks: hook {ep.name!r} cannot be loaded "
                          f"({ep.value}): {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, ProcessingHook)):
        raise ConfigError(f"[processing] processing_hooks: {ep.name!r} ({ep.value}) is not a "
                          "ProcessingHook")
    return cls


def load_hooks(conf: Config) -> list[ProcessingHook]:
    """The configured hooks, in order. An unknown hook, or one that needs a fact no earlier
    hook provides, stops the service at start with a message naming both."""
    available = registered()
    names = conf.processing.processing_hooks
    classes: dict[str, type[ProcessingHook]] = {}
    for name in names:
        if name not in available:
            raise ConfigError(f"[processing] processing_hooks: unknown hook {name!r} "
                              f"(available: {', '.join(sorted(available))})")
        classes[name] = _load_class(available[name])
    provided: dict[Fact[Any], str] = {}
    for name in names:
        cls = classes[name]
        for fact in cls.requires:
            if fact not in provided:
                raise ConfigError(_missing(name, fact, names, classes, available))
        for fact in cls.provides:
            if fact in provided:
                raise ConfigError(f"[processing] processing_hooks: hooks {provided[fact]!r} "
                                  f"and {name!r} both provide {fact.name!r}; keep one")
            provided[fact] = name
    return [classes[name](conf) for name in names]


def _missing(name: str, fact: Fact[Any], names: Sequence[str],
             classes: Mapping[str, type[ProcessingHook]],
             available: Mapping[str, EntryPoint]) -> str:
    where = "[processing] processing_hooks"
    later = [n for n in names[names.index(name) + 1:] if fact in classes[n].provides]
    if later:
        return (f"{where}: hook {name!r} needs {fact.name!r}, which hook {later[0]!r} "
                f"provides, but {later[0]!r} comes after it; list {later[0]!r} first")
    providers = " or ".join(repr(n) for n, ep in sorted(available.items())
                            if n not in classes and _provides(ep, fact))
    if providers:
        return (f"{where}: hook {name!r} needs {fact.name!r}, which hook {providers} "
                f"provides; add {providers} before {name!r}")
    return f"{where}: hook {name!r} needs {fact.name!r}, which no available hook provides"


def _provides(ep: EntryPoint, fact: Fact[Any]) -> bool:
    try:
        return fact in _load_class(ep).provides
    except ConfigError:
        return False  # a broken plugin that is not configured is not our concern here
