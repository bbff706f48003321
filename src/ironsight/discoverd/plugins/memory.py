"""`memory`: the `memory_mb` property, from the inventory's `memory.physical_mb`.

Ironic's split of the inspector-era `scheduler` hook. As upstream, a report without
`physical_mb` fails the inspection; here it is refused in the first step, naming the field,
so the ramdisk is told at once.
"""

from __future__ import annotations

from ironsight.discoverd.plugins.base import HookError, ProcessingContext, ProcessingHook


def physical_mb(ctx: ProcessingContext) -> int:
    value = (ctx.inventory.get("memory") or {}).get("physical_mb")
    if value is None:
        raise HookError("The ramdisk data lacks inventory.memory.physical_mb")
    return int(value)


class Memory(ProcessingHook):
    name = "memory"

    def before_processing(self, ctx: ProcessingContext) -> None:
        if not ctx.data.get("error"):  # a ramdisk's own error is ramdisk_error's to report
            physical_mb(ctx)

    def before_update(self, ctx: ProcessingContext) -> None:
        ctx.set_property("memory_mb", physical_mb(ctx))
