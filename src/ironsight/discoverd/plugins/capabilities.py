"""`capabilities`: boot mode and CPU features, merged into the node's `capabilities` string."""

from __future__ import annotations

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
        boot_mode = (inventory.get("boot") or {}).get("current_boot_mode")
        if self.conf.processing.boot_mode_capability and boot_mode:
            discovered["boot_mode"] = str(boot_mode)
        flags = set((inventory.get("cpu") or {}).get("flags") or [])
        for entry in self.conf.processing.cpu_flags:
            flag, _, cap = entry.partition(":")
            if flag in flags and cap:
                discovered[cap] = "true"
        ctx.set(CAPABILITIES, CapabilitySet(discovered))
        merge(ctx, discovered)
