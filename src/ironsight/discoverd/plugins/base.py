"""Processing hooks: small plugins that read a ramdisk report and decide node changes.

Hooks do no I/O. They read the report (`ctx.data`, which they may annotate for later hooks
and for the stored processed data) and, once the node is known, its record (`ctx.node`,
`ctx.ports`), and they record the changes they want in `ctx.changes`. discoverd then applies
all changes with as few bare-metal API requests as possible (one PATCH for all properties).
That keeps each hook a pure function, easy to test, and lets a whole batch of hooks cost one
round of requests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError, Invalid

GROUP = "ironsight.processing_hooks"


class HookError(Invalid):
    """The report cannot be processed; the introspection ends with this message."""


class ReportedError(HookError):
    """An error the ramdisk itself reported: its message stands alone, without the name of
    the hook that raised it."""


@dataclass
class Changes:
    """What the hooks want done to the node and its ports."""

    properties: dict[str, Any] = field(default_factory=dict)
    create_ports: dict[str, bool] = field(default_factory=dict)  # mac -> pxe_enabled
    delete_ports: list[str] = field(default_factory=list)  # port uuids
    port_patches: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass
class ProcessingContext:
    conf: Config
    data: dict[str, Any]
    node: dict[str, Any] = field(default_factory=dict)
    ports: list[dict[str, Any]] = field(default_factory=list)
    changes: Changes = field(default_factory=Changes)

    @property
    def inventory(self) -> dict[str, Any]:
        return dict(self.data.get("inventory") or {})

    def set_property(self, key: str, value: Any) -> None:
        """Fill a node property: only when missing, unless overwrite_existing is set."""
        current = (self.node.get("properties") or {}).get(key)
        may_write = current in (None, "") or self.conf.processing.overwrite_existing
        if may_write and current != value:
            self.changes.properties[key] = value


class ProcessingHook:
    """Base class; override one or both steps."""

    name = "base"

    def __init__(self, conf: Config) -> None:
        self.conf = conf

    def before_processing(self, ctx: ProcessingContext) -> None:
        """Check and annotate the report, before the node is looked up."""

    def before_update(self, ctx: ProcessingContext) -> None:
        """Decide node changes, once the node and its ports are known."""


def load_hooks(conf: Config) -> list[ProcessingHook]:
    """The configured hooks, in order; an unknown name stops the service at start."""
    available = {ep.name: ep for ep in entry_points(group=GROUP)}
    hooks = []
    for name in conf.processing.processing_hooks:
        if name not in available:
            raise ConfigError(f"[processing] processing_hooks: unknown hook {name!r} "
                              f"(available: {', '.join(sorted(available))})")
        cls = available[name].load()
        hooks.append(cls(conf))
    return hooks
