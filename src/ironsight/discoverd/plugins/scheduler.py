"""`scheduler`: the four scheduling properties of the seed, as integers (and cpu_arch)."""

from __future__ import annotations

from ironsight.discoverd.plugins.base import HookError, ProcessingContext, ProcessingHook

MIB = 1024**2


_REPORT_FIELDS = {"cpus": "inventory.cpu.count", "cpu_arch": "inventory.cpu.architecture",
                  "memory_mb": "inventory.memory.physical_mb"}


class Scheduler(ProcessingHook):
    name = "scheduler"

    def before_processing(self, ctx: ProcessingContext) -> None:
        """What the report itself must carry is checked before it is accepted, so that the
        ramdisk is told at once. A report of a ramdisk error is ramdisk_error's to refuse."""
        if not ctx.data.get("error"):
            self._check_reported(self._found(ctx))

    @staticmethod
    def _check_reported(found: dict[str, object]) -> None:
        missing = [field for key, field in _REPORT_FIELDS.items()
                   if found.get(key) in (None, "")]
        if missing:
            raise HookError("The ramdisk data lacks " + ", ".join(missing))

    @staticmethod
    def _found(ctx: ProcessingContext) -> dict[str, object]:
        inventory = ctx.inventory
        cpu = inventory.get("cpu") or {}
        memory = inventory.get("memory") or {}
        memory_mb = memory.get("physical_mb")
        if memory_mb is None and memory.get("total"):
            memory_mb = int(memory["total"]) // MIB
        return {"cpus": cpu.get("count"), "cpu_arch": cpu.get("architecture"),
                "memory_mb": memory_mb}

    def before_update(self, ctx: ProcessingContext) -> None:
        found = {**self._found(ctx), "local_gb": ctx.data.get("local_gb")}
        if found["local_gb"] is None:
            raise HookError("The ramdisk data lacks a root disk (inventory.disks / root_disk)")
        if not ctx.data.get("error"):
            self._check_reported(found)  # a reapplied report is checked again
        for key, value in found.items():
            ctx.data[key] = value if key == "cpu_arch" else int(value)  # type: ignore[arg-type]
            ctx.set_property(key, ctx.data[key])
