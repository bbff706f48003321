"""`capabilities`: boot mode, Secure Boot and CPU features, merged into the node's
`capabilities` string."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import CAPABILITIES, CapabilitySet


def parse(value: object) -> dict[str, str]:
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    found = {}
    for item in str(value or "").split(","):
        key, sep, val = item.partition(":")
        if sep and key.strip():
            found[key.strip()] = val.strip()
    return found


def render(caps: dict[str, str]) -> str:
    return ",".join(f"{k}:{v}" for k, v in caps.items())


def boot_capabilities(inventory: dict[str, Any]) -> dict[str, str]:
    """`boot_mode` (bios/uefi) and, when the ramdisk knows it, `secure_boot` (true/false):
    Ironic's capability names. The report's `boot` is open: a secure_boot that is not a
    bool (null, a string) is unknown and sets nothing, so a recorded value is never replaced
    by a guess."""
    boot = inventory.get("boot") or {}
    found: dict[str, str] = {}
    if boot.get("current_boot_mode"):
        found["boot_mode"] = str(boot["current_boot_mode"])
    if isinstance(boot.get("secure_boot"), bool):
        found["secure_boot"] = "true" if boot["secure_boot"] else "false"
    return found


def merge(ctx: ProcessingContext, found: dict[str, str]) -> None:
    """Merge capabilities found into the node's `capabilities` string, on top of what
    earlier hooks of the chain merged (several hooks add capabilities: capabilities,
    boot-mode, cpu-capabilities, pci-devices). The node's own keys are kept unless
    `[processing] overwrite_existing`."""
    if not found:
        return
    current = parse((ctx.node.get("properties") or {}).get("capabilities"))
    pending = ctx.changes.properties.get("capabilities")
    merged = parse(pending) if pending is not None else dict(current)
    for key, value in found.items():
        if key not in current or ctx.conf.processing.overwrite_existing:
            merged[key] = value
    if merged != current or pending is not None:
        ctx.changes.properties["capabilities"] = render(merged)


class Capabilities(ProcessingHook):
    name = "capabilities"
    provides = (CAPABILITIES,)

    def before_update(self, ctx: ProcessingContext) -> None:
        inventory = ctx.inventory
        discovered: dict[str, str] = {}
        if self.conf.processing.boot_mode_capability:
            discovered.update(boot_capabilities(inventory))
        flags = set((inventory.get("cpu") or {}).get("flags") or [])
        for entry in self.conf.processing.cpu_flags:
            flag, _, cap = entry.partition(":")
            if flag in flags and cap:
                discovered[cap] = "true"
        ctx.set(CAPABILITIES, CapabilitySet(discovered))
        merge(ctx, discovered)
