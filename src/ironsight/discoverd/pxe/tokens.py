"""Who gets a callback token: the node discoverd boots, and only from where it boots.

A request for `/boot/<MAC>.ipxe` (iPXE, over HTTP) or `grub/<MAC>.cfg` (GRUB, over TFTP)
gets a fresh token (node_cache.issue_token) when:
- that MAC is a lookup attribute of an introspection waiting for its ramdisk (`starting` or
  `waiting`), and
- the request comes from an address that belongs to that MAC: its IPv4 lease in dnsmasq's
  lease file; over IPv6, its DHCPv6 lease when the client's DUID is built from that MAC, or
  else the kernel's neighbour table on the provisioning interface (UEFI firmware often sends
  a DUID-UUID, which names no MAC, and releases its DHCPv6 lease before it runs the loader).
  Only the replica that serves the provisioning network runs dnsmasq and has the file; a
  request that reaches another replica gets no token (`[pxe] http_url` names the serving replica's
  address by default, see docs/security.md).
iPXE asks for the script right after its DHCP exchange, possibly before dnsmasq has written
the lease: a missing lease is looked for again for up to a second.

Anything else gets the script without a token: it boots the same ramdisk, whose report is
then accepted only where tokenless reports are allowed. The token is never logged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from ironsight.common.exceptions import Invalid, NotFound
from ironsight.common.ratelimit import plain_address
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe.dnsmasq import lease_addresses

LOG = logging.getLogger(__name__)
LEASE_CHECKS = 6
LEASE_WAIT = 0.2
Neighbour = Callable[[str], Awaitable[str | None]]


class BootTokens:
    def __init__(self, cache: NodeCache, leases_file: Callable[[], Path | None],
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 neighbour: Neighbour | None = None) -> None:
        """`leases_file`: dnsmasq's lease file while this replica serves the network, else
        None. `neighbour`: the MAC the neighbour table gives an IPv6 address."""
        self.cache = cache
        self.leases_file = leases_file
        self.sleep = sleep
        self.neighbour = neighbour

    async def __call__(self, mac: str, host: str | None) -> str | None:
        try:
            uuid = await self.cache.lookup([mac], [])
        except (NotFound, Invalid):
            return None  # not under introspection: the script without a token
        if not await self._holds_lease(uuid, mac, host):
            return None
        token = await self.cache.issue_token(uuid)
        if token is None:
            LOG.info("Node %s: boot script for MAC %s served without a callback token: the "
                     "introspection does not wait for a ramdisk now", uuid, mac)
            return None
        LOG.info("Node %s: boot script with a new callback token served to %s (MAC %s)",
                 uuid, host, mac)
        return token

    async def _holds_lease(self, uuid: str, mac: str, host: str | None) -> bool:
        address = plain_address(host)
        leased: set[str] = set()
        for attempt in range(LEASE_CHECKS):
            path = self.leases_file()
            if path is None:
                LOG.warning("Node %s: boot script for MAC %s served without a callback token: "
                            "this replica does not serve the provisioning network's DHCP, so "
                            "it cannot check that %s holds the lease", uuid, mac, host)
                return False
            leased = await asyncio.to_thread(lease_addresses, path, mac)
            if address is not None and address in {plain_address(a) for a in leased}:
                return True
            if (address is not None and address.version == 6 and self.neighbour is not None
                    and await self.neighbour(str(address)) == mac):
                return True
            if attempt + 1 < LEASE_CHECKS:
                await self.sleep(LEASE_WAIT)
        LOG.warning("Node %s: boot script for MAC %s served without a callback token: asked "
                    "from %s, but dnsmasq leased that MAC %s", uuid, mac, host,
                    ", ".join(sorted(leased)) or "no address")
        return False
