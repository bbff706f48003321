"""`architecture`: the `cpu_arch` property, from the inventory's `cpu.architecture`.

Ironic's split of the inspector-era `scheduler` hook, and one of Ironic's default hooks. As
upstream, a report without it fails the inspection; here it is refused in the first step,
naming the field, so the ramdisk is told at once.
"""

from __future__ import annotations

from ironsight.discoverd.plugins.base import HookError, ProcessingContext, ProcessingHook


def cpu_arch(ctx: ProcessingContext) -> str:
    value = (ctx.inventory.get("cpu") or {}).get("architecture")
    if not value:
        raise HookError("The ramdisk data lacks inventory.cpu.architecture")
    return str(value)


class Architecture(ProcessingHook):
    name = "architecture"

    def before_processing(self, ctx: ProcessingContext) -> None:
        if not ctx.data.get("error"):  # a ramdisk's own error is ramdisk_error's to report
            cpu_arch(ctx)

    def before_update(self, ctx: ProcessingContext) -> None:
        ctx.set_property("cpu_arch", cpu_arch(ctx))
