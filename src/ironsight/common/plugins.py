"""Plugins are entry points: hardware types (`ironsight.hardware_types`), processing hooks
(`ironsight.processing_hooks`) and PXE filter drivers (`ironsight.pxe_filters`). A package
adds its own by declaring entry points in those groups; ironsight finds them by name."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from ironsight.common.exceptions import ConfigError

HARDWARE_TYPES = "ironsight.hardware_types"
PROCESSING_HOOKS = "ironsight.processing_hooks"
PXE_FILTERS = "ironsight.pxe_filters"


def names(group: str) -> tuple[str, ...]:
    return tuple(sorted({ep.name for ep in entry_points(group=group)}))


def load(group: str, name: str, option: str) -> Any:
    """The object the entry point `name` of `group` names; ConfigError naming `option` when
    there is none or it cannot be imported."""
    found = [ep for ep in entry_points(group=group) if ep.name == name]
    if not found:
        raise ConfigError(f"{option}: unknown plugin {name!r} (available: "
                          f"{', '.join(names(group))})")
    try:
        return found[0].load()
    except Exception as exc:
        raise ConfigError(f"{option}: plugin {name!r} ({found[0].value}) cannot be loaded: "
                          f"{exc}") from None
