"""`boot-mode`: the `boot_mode` and `secure_boot` capabilities from how the ramdisk booted.

Ironic's split of the inspector-era `capabilities` hook (with cpu-capabilities). Merged into
the node's `capabilities` like every capability hook (`capabilities.merge`). `secure_boot`
(Ironic's capability name, read by its deploy interfaces) comes from the agent's
`inventory.boot.secure_boot`; an unknown state (null, or a ramdisk that does not send it)
sets nothing, so that a node's recorded value is never replaced by a guess.
"""

from __future__ import annotations

import logging

from ironsight.discoverd.plugins import capabilities
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook

LOG = logging.getLogger(__name__)


class BootMode(ProcessingHook):
    name = "boot-mode"

    def before_update(self, ctx: ProcessingContext) -> None:
        found = capabilities.boot_capabilities(ctx.inventory)
        if "boot_mode" not in found:
            LOG.warning("Node %s: no boot mode in the report", ctx.node.get("uuid"))
        capabilities.merge(ctx, found)
