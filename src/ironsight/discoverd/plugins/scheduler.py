"""`scheduler`: the four scheduling properties of the seed, as integers (and cpu_arch)."""

from __future__ import annotations

from ironsight.discoverd.plugins.base import HookError, ProcessingContext, ProcessingHook

MIB = 1024**2


class Scheduler(ProcessingHook):
    name = "scheduler"

    def before_update(self, ctx: ProcessingContext) -> None:
        inventory = ctx.inventory
        cpu = inventory.get("cpu") or {}
        memory = inventory.get("memory") or {}
        memory_mb = memory.get("physical_mb")
        if memory_mb is None and memory.get("total"):
            memory_mb = int(memory["total"]) // MIB
        found = {"cpus": cpu.get("count"), "cpu_arch": cpu.get("architecture"),
                 "memory_mb": memory_mb, "local_gb": ctx.data.get("local_gb")}
        missing = [f for f, v in found.items() if v in (None, "")]
        if missing:
            raise HookError("The ramdisk data lacks " + ", ".join(
                {"cpus": "inventory.cpu.count", "cpu_arch": "inventory.cpu.architecture",
                 "memory_mb": "inventory.memory.physical_mb",
                 "local_gb": "a root disk (inventory.disks / root_disk)"}[m] for m in missing))
        for key, value in found.items():
            ctx.data[key] = value if key == "cpu_arch" else int(value)  # type: ignore[arg-type]
            ctx.set_property(key, ctx.data[key])
