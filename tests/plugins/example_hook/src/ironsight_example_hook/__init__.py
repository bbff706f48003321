"""`nic_count`: an example of a third-party processing hook.

It needs the `interfaces` fact of ironsight's `validate_interfaces` hook (so it must be listed
after it in `[processing] processing_hooks`, or ironsight refuses to start, naming both),
fills the node property `nic_count`, and provides a fact of its own, `example.nic_count`,
which the stored processed data shows as `nic_count`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ironsight.discoverd.plugins.base import Fact, ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import INTERFACES


@dataclass(frozen=True)
class NicCount:
    total: int  # NICs with a valid MAC
    with_address: int  # of those, the ones with an IP address

    def store(self) -> dict[str, Any]:
        return {"nic_count": {"total": self.total, "with_address": self.with_address}}


NIC_COUNT = Fact("example.nic_count", NicCount, "the node's NICs, counted (nic_count)",
                 NicCount.store)


class NicCountHook(ProcessingHook):
    name = "nic_count"
    requires = (INTERFACES,)
    provides = (NIC_COUNT,)

    def before_update(self, ctx: ProcessingContext) -> None:
        nics = ctx.get(INTERFACES).all.values()
        count = NicCount(total=len(nics), with_address=sum(1 for nic in nics if nic.ip))
        ctx.set(NIC_COUNT, count)
        ctx.set_property("nic_count", count.total)
