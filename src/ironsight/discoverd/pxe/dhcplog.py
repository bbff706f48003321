"""What dnsmasq's DHCP log says about a machine discoverd cannot boot.

With `log-dhcp`, dnsmasq writes several lines per exchange, each starting with the exchange's
transaction id: the client's vendor class, the request with its MAC (or DHCPv6 DUID), the
tags the client earned (dnsmasq.py's class tags). Joined, they say what the machine is; when
that class has no loader (loaders.py), the operator reads which machine asked and why it got
no boot file, instead of a PXE timeout on the machine's console that nobody watches. Only
network-boot clients (vendor class PXEClient or HTTPClient) count: an operating system's DHCP
client asks for no boot file.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from ironsight.discoverd.pxe.dnsmasq import (
    ANY_ARCH,
    BIOS,
    EFI_AARCH64,
    EFI_X86_64,
    HTTP_CLIENT,
    IPXE,
    UEFI_ENTERPRISE,
    duid_mac,
)

_LINE = re.compile(r"^\S+: (?P<xid>\d+) (?P<text>.*)$")
_REQUEST = re.compile(r"^DHCP(?:DISCOVER|SOLICIT)\([^)]+\) (?:\S+ )?(?P<id>[0-9a-fA-F:]+)\s*$")
_ARCH = re.compile(r"Arch:(\d{5})")
KEEP = 256  # exchanges remembered: a burst of booting machines interleaves its lines
QUIET = 60.0  # seconds between two reports of the same machine (firmware retries quickly)


@dataclass
class _Exchange:
    mac: str | None = None
    vendor: str | None = None
    tags: set[str] | None = None
    reported: bool = False


@dataclass
class DhcpWatch:
    """Feed it dnsmasq's lines; it returns a message for the log when a network-boot client
    of an unserved class asked to boot. `unserved`: client class (loaders.CLASSES) -> why."""

    unserved: dict[str, str]
    clock: Callable[[], float] = time.monotonic
    _exchanges: OrderedDict[str, _Exchange] = field(default_factory=OrderedDict)
    _last: dict[str, float] = field(default_factory=dict)

    def feed(self, line: str) -> str | None:
        match = _LINE.match(line.strip())
        if match is None:
            return None
        xid, text = match["xid"], match["text"]
        exchange = self._exchanges.get(xid)
        if exchange is None:
            exchange = self._exchanges[xid] = _Exchange()
            while len(self._exchanges) > KEEP:
                self._exchanges.popitem(last=False)
        if text.startswith("vendor class: "):
            exchange.vendor = text.removeprefix("vendor class: ").strip()
        elif text.startswith("tags: "):
            exchange.tags = {tag.strip() for tag in text.removeprefix("tags: ").split(",")}
        elif (request := _REQUEST.match(text)) is not None:
            ident = request["id"].lower()
            exchange.mac = ident if len(ident) == 17 else duid_mac(ident)
        else:
            return None
        return self._verdict(exchange)

    def _verdict(self, exchange: _Exchange) -> str | None:
        if exchange.reported or exchange.mac is None or exchange.tags is None:
            return None
        vendor = exchange.vendor or ""
        # DHCPv6: dnsmasq logs only the vendor class's enterprise number, UEFI's 343
        if not vendor.startswith(("PXEClient", "HTTPClient", str(UEFI_ENTERPRISE))):
            return None
        kind = client_class(exchange.tags)
        why = self.unserved.get(kind) if kind else (
            f"its architecture ({_arch(vendor)}) is not one discoverd boots")
        if why is None:
            return None
        exchange.reported = True
        now = self.clock()
        if now - self._last.get(exchange.mac, -QUIET) < QUIET:
            return None
        self._last[exchange.mac] = now
        return (f"PXE: the machine with MAC {exchange.mac} asked to boot ({vendor}) and got "
                f"no boot file: {why}")


def client_class(tags: set[str]) -> str | None:
    """Which loaders.CLASSES entry a client with these dnsmasq tags is; "" for iPXE (always
    served: the boot script); None for a class no option covers."""
    if IPXE in tags:
        return ""
    http = HTTP_CLIENT in tags
    if "dhcpv6" in tags:  # only UEFI and iPXE boot over IPv6; the default is x86-64
        if http:
            return "uefi_http_ipv6"
        return "uefi_aarch64" if EFI_AARCH64 in tags else "uefi_x86_64"
    if BIOS in tags or ANY_ARCH not in tags:
        return "bios"
    if EFI_X86_64 in tags:
        return "uefi_http_x86_64" if http else "uefi_x86_64"
    if EFI_AARCH64 in tags:
        return "uefi_http_aarch64" if http else "uefi_aarch64"
    return None


def _arch(vendor: str) -> str:
    match = _ARCH.search(vendor)
    return f"option 93 = {int(match.group(1))}" if match else "unknown"
