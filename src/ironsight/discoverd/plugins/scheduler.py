"""`scheduler`: the design's four scheduling properties, as integers (and cpu_arch).

Requires `root_disk` (its local_gb); provides `scheduling`.
"""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.base import HookError, ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import ROOT_DISK, SCHEDULING, Scheduling

MIB = 1024**2


_REPORT_FIELDS = {"cpus": "inventory.cpu.count", "cpu_arch": "inventory.cpu.architecture",
                  "memory_mb": "inventory.memory.physical_mb"}


class Scheduler(ProcessingHook):
    name = "scheduler"
    requires = (ROOT_DISK,)
    provides = (SCHEDULING,)

    def before_processing(self, ctx: ProcessingContext) -> None:
        """What the report itself must carry is checked before it is accepted, so that the
        ramdisk is told at once. A report of a ramdisk error is ramdisk_error's to refuse."""
        if not ctx.data.get("error"):
            self._check_reported(self._found(ctx))

    @staticmethod
    def _check_reported(found: dict[str, Any]) -> None:
        missing = [field for key, field in _REPORT_FIELDS.items()
                   if found.get(key) in (None, "")]
        if missing:
            raise HookError("The ramdisk data lacks " + ", ".join(missing))

    @staticmethod
    def _found(ctx: ProcessingContext) -> dict[str, Any]:
        inventory = ctx.inventory
        cpu = inventory.get("cpu") or {}
        memory = inventory.get("memory") or {}
        memory_mb = memory.get("physical_mb")
        if memory_mb is None and memory.get("total"):
            memory_mb = int(memory["total"]) // MIB
        return {"cpus": cpu.get("count"), "cpu_arch": cpu.get("architecture"),
                "memory_mb": memory_mb}

    def before_update(self, ctx: ProcessingContext) -> None:
        found = self._found(ctx)
        if not ctx.data.get("error"):
            self._check_reported(found)  # a reapplied report is checked again
        facts = Scheduling(cpus=int(found["cpus"]), cpu_arch=str(found["cpu_arch"]),
                           memory_mb=int(found["memory_mb"]),
                           local_gb=ctx.get(ROOT_DISK).local_gb)
        ctx.set(SCHEDULING, facts)
        for key, value in facts.store().items():
            ctx.set_property(key, value)
