"""`raid-device`: the root device hint for a RAID volume created since the last inspection.

Two inspections find it: the first is stored as usual; the second compares its disks' serial
numbers with the previous inspection's raw report (which discoverd loads for this hook, see
`uses_previous_report`; kept while `[processing] store_data` is on). Exactly one new serial
becomes the node's `root_device` hint `{"serial": ...}`; none or several change nothing (a
warning in the log). A node that already has a `root_device` hint is left alone. Upstream's
use: inspect before and after building the root RAID volume on a BMC that does not say which
disk it made.
"""

from __future__ import annotations

import logging
from typing import Any

from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook

LOG = logging.getLogger(__name__)


def serials(report: dict[str, Any] | None) -> list[str]:
    inventory = (report or {}).get("inventory")
    disks = inventory.get("disks") if isinstance(inventory, dict) else None
    return [str(d["serial"]) for d in disks or [] if isinstance(d, dict) and d.get("serial")]


class RaidDevice(ProcessingHook):
    name = "raid-device"
    uses_previous_report = True

    def before_update(self, ctx: ProcessingContext) -> None:
        uuid = ctx.node.get("uuid")
        if "root_device" in (ctx.node.get("properties") or {}):
            LOG.info("Node %s: the root device is known already", uuid)
            return
        current = serials(ctx.data)
        if not current:
            LOG.warning("Node %s: no disk serial numbers in the report", uuid)
            return
        if ctx.previous is None:
            LOG.info("Node %s: no previous inspection's data to compare disks with", uuid)
            return
        before = set(serials(ctx.previous))
        new = [serial for serial in current if serial not in before]
        if len(new) != 1:
            LOG.warning("Node %s: root device not identified: %d new disks since the "
                        "previous inspection", uuid, len(new))
            return
        ctx.set_property("root_device", {"serial": new[0]})


class RaidDeviceInspector(RaidDevice):
    """ironic-inspector's name for it (which kept the serials in the node's `extra`)."""

    name = "raid_device"
