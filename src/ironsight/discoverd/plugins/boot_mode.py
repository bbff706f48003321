"""`boot-mode`: the `boot_mode` capability from the boot mode the ramdisk booted in.

Ironic's split of the inspector-era `capabilities` hook (with cpu-capabilities). Merged into
the node's `capabilities` like every capability hook (`capabilities.merge`).
"""

from __future__ import annotations

import logging

from ironsight.discoverd.plugins import capabilities
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook

LOG = logging.getLogger(__name__)


class BootMode(ProcessingHook):
    name = "boot-mode"

    def before_update(self, ctx: ProcessingContext) -> None:
        mode = (ctx.inventory.get("boot") or {}).get("current_boot_mode")
        if not mode:
            LOG.warning("Node %s: no boot mode in the report", ctx.node.get("uuid"))
            return
        capabilities.merge(ctx, {"boot_mode": str(mode)})
