"""`cpus`: the `cpus` property, from the inventory's `cpu.count`.

Ironic's split of the inspector-era `scheduler` hook. As upstream, a report without a CPU
count (or with 0) leaves the property alone, with a warning in the log.
"""

from __future__ import annotations

import logging

from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook

LOG = logging.getLogger(__name__)


class Cpus(ProcessingHook):
    name = "cpus"

    def before_update(self, ctx: ProcessingContext) -> None:
        count = (ctx.inventory.get("cpu") or {}).get("count")
        if not count:
            LOG.warning("Node %s: no CPU count in the report", ctx.node.get("uuid"))
            return
        ctx.set_property("cpus", int(count))
