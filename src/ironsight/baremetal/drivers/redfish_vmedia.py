"""`boot_interface = redfish-virtual-media`: the inspection ramdisk from a CD the BMC mounts.

The conductor publishes the node's image (conductor/vmedia.py: the cached ISO with this
node's parameters) and hands its URL here; this interface only talks to the BMC: it puts the
URL in the first virtual drive that takes CDs (ejecting what was there), and takes it out
again at the end. The one-time boot from CD is the management interface's (`cdrom`).

The drive is looked for where Redfish puts it: under the system (newer BMCs), else under
the system's managers (sushy-tools, most BMCs today), as Ironic does.
"""

from __future__ import annotations

import logging
from typing import Any

import sushy
from sushy import exceptions as sushy_exc

from ironsight.baremetal.drivers.base import BootInterface, NodeContext
from ironsight.baremetal.drivers.redfish import BOOT_DEVICE_CDROM, _RedfishInterface

LOG = logging.getLogger(__name__)

CD_TYPES = (sushy.VirtualMediaType.CD, sushy.VirtualMediaType.DVD)


def _drives(system: Any) -> list[Any]:
    """The system's virtual drives: its own collection where it has one, else its
    managers'."""
    try:
        own = system.virtual_media.get_members()
    except (sushy_exc.MissingAttributeError, sushy_exc.ResourceNotFoundError, AttributeError):
        own = []
    if own:
        return list(own)
    return [media for manager in system.managers
            for media in manager.virtual_media.get_members()]


def _cd_drive(system: Any) -> Any:
    for media in _drives(system):
        if any(kind in CD_TYPES for kind in media.media_types or ()):
            return media
    raise sushy_exc.SushyError("the BMC has no virtual drive that takes a CD or DVD")


class RedfishVirtualMediaBoot(_RedfishInterface, BootInterface):
    name = "redfish-virtual-media"
    boot_device = BOOT_DEVICE_CDROM

    async def insert(self, node: NodeContext, url: str) -> None:
        def run(system: Any) -> None:
            drive = _cd_drive(system)
            if drive.inserted or drive.image:
                drive.eject_media()  # a medium left over (ours or another's) is replaced
                drive.refresh(force=True)
            drive.insert_media(url, inserted=True, write_protected=True)

        # the URL names a secret image: it is not in the error text (the BMC's words are)
        await self._call(node, "inserting the inspection ISO as a virtual CD", run)

    async def eject(self, node: NodeContext) -> None:
        def run(system: Any) -> bool:
            drive = _cd_drive(system)
            if not (drive.inserted or drive.image):
                return False
            drive.eject_media()
            return True

        if await self._call(node, "ejecting the virtual CD", run):
            LOG.info("Node %s: virtual CD ejected", node.uuid)
