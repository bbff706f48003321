"""`cpu-capabilities`: capabilities from CPU flags, by `[processing] cpu_capabilities`.

Ironic's split of the inspector-era `capabilities` hook (with boot-mode); each configured
`flag:capability` whose flag the CPU has adds `capability:true`.
"""

from __future__ import annotations

import logging

from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins import capabilities
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook

LOG = logging.getLogger(__name__)


def parse_map(entries: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for entry in entries:
        flag, sep, capability = entry.partition(":")
        if not sep or not flag.strip() or not capability.strip():
            raise ConfigError(f"[processing] cpu_capabilities: {entry!r} is not "
                              "flag:capability")
        pairs.append((flag.strip(), capability.strip()))
    return pairs


class CpuCapabilities(ProcessingHook):
    name = "cpu-capabilities"

    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        self.flags = parse_map(conf.processing.cpu_capabilities)

    def before_update(self, ctx: ProcessingContext) -> None:
        flags = set((ctx.inventory.get("cpu") or {}).get("flags") or [])
        if not flags:
            LOG.warning("Node %s: no CPU flags in the report", ctx.node.get("uuid"))
            return
        capabilities.merge(ctx, {cap: "true" for flag, cap in self.flags if flag in flags})
