"""What the PXE side sees of a booting node, as phases of its attempt's timeline.

dnsmasq's log gives the DHCP request and the lease (with the address), the boot-file servers
give each fetch: a loader or iPXE's chain script, the node's own script (iPXE) or config
(GRUB), the kernel and the initramfs, with their bytes. A fetch names the client's address,
not its MAC: the leases dnsmasq logged (else its lease file) map one to the other, so only
the replica serving the network sees them, as it is the one the nodes fetch from by default
(`[pxe] http_url`). Only MACs of nodes under introspection are recorded (one lookup each,
in the background: a boot file is never held up, and a lost phase is only a missing line).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ironsight.common.clock import utcnow
from ironsight.common.exceptions import Invalid, NotFound
from ironsight.common.ratelimit import plain_address
from ironsight.discoverd import diagnosis
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe.dnsmasq import parse_lease

LOG = logging.getLogger(__name__)
_REQUEST = re.compile(r"DHCP(?:DISCOVER|REQUEST)\([^)]+\) (?:\S+ )?(?P<mac>[0-9a-fA-F:]{17})"
                      r"(?P<ignored> ignored)?\s*$")
ADDRESSES = 4096  # leases remembered (address -> MAC)
REPEAT = 5.0  # seconds in which the same phase of the same MAC is one (firmware retries)


class BootLog:
    def __init__(self, cache: NodeCache, leases_file: Callable[[], Path | None],
                 clock: Callable[[], float] = time.monotonic,
                 neighbour: Callable[[str], Awaitable[str | None]] | None = None) -> None:
        """`neighbour`: the MAC the neighbour table gives an IPv6 address (UEFI firmware
        often leases with a DUID that names no MAC, see tokens.py)."""
        self.cache = cache
        self.leases_file = leases_file
        self.clock = clock
        self.neighbour = neighbour
        self._macs: OrderedDict[str, str] = OrderedDict()  # address -> MAC, newest last
        self._last: OrderedDict[tuple[str, str], float] = OrderedDict()

    def dhcp_line(self, line: str) -> None:
        """One of dnsmasq's log lines: a request or a lease of a MAC is a phase."""
        lease = parse_lease(line)
        if lease is not None:
            mac, address = lease
            self._macs[address] = mac
            self._macs.move_to_end(address)
            while len(self._macs) > ADDRESSES:
                self._macs.popitem(last=False)
            self._note(diagnosis.DHCP_LEASE, mac, {"ip": address})
            return
        request = _REQUEST.search(line)
        if request is not None:
            # ignored: dnsmasq did not answer it (the PXE filter denies that MAC)
            self._note(diagnosis.DHCP_REQUEST, request["mac"].lower(),
                       {"ignored": True} if request["ignored"] else {})

    def fetched(self, phase: str, host: str | None, *, mac: str | None = None,
                **details: Any) -> None:
        """A boot file was served to `host` (its MAC when the request names one)."""
        address = plain_address(host)
        if mac is None and address is not None:
            mac = self.mac_of(str(address))
        shown = {"ip": str(address) if address else host, **details}
        if mac is None and address is not None and address.version == 6 and self.neighbour:
            self.cache.timeline.later(self._by_neighbour(phase, str(address), shown,
                                                         utcnow()))
            return
        if mac is None:
            LOG.debug("PXE: %s by %s: no lease names its MAC", phase, host)
            return
        self._note(phase, mac, shown)

    async def _by_neighbour(self, phase: str, address: str, details: dict[str, Any],
                            at: dt.datetime) -> None:
        assert self.neighbour is not None
        try:
            mac = await self.neighbour(address)
        except Exception as exc:
            LOG.debug("PXE: no neighbour entry for %s: %s", address, exc)
            return
        if mac is not None:
            await self._record(phase, mac, details, at)

    def mac_of(self, address: str) -> str | None:
        mac = self._macs.get(address)
        if mac is not None:
            return mac
        path = self.leases_file()
        return lease_mac(path, address) if path is not None else None

    def _note(self, phase: str, mac: str, details: dict[str, Any]) -> None:
        now = self.clock()
        key = (mac, phase)
        if now - self._last.get(key, -REPEAT) < REPEAT and "file" not in details:
            return
        self._last[key] = now
        self._last.move_to_end(key)
        while len(self._last) > ADDRESSES:
            self._last.popitem(last=False)
        self.cache.timeline.later(self._record(phase, mac, details, utcnow()))

    async def _record(self, phase: str, mac: str, details: dict[str, Any],
                      at: dt.datetime) -> None:
        try:
            uuid = await self.cache.lookup([mac], [])
        except (NotFound, Invalid):
            return  # not under introspection (or ambiguous): nothing of ours
        except Exception as exc:  # the database: a lost phase is a missing line
            LOG.debug("PXE: %s of %s not recorded: %s", phase, mac, exc)
            return
        await self.cache.timeline.record(uuid, phase, "pxe", {"mac": mac, **details}, at=at)


def lease_mac(leases_file: Path, address: str) -> str | None:
    """The MAC dnsmasq's lease file gives an IPv4 `address` (None: none, or unreadable)."""
    try:
        text = leases_file.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == address and ":" not in address:
            return fields[1].lower()
    return None
