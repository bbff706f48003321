"""dnsmasq's configuration for the provisioning network, rewritten at every start, and how to
read what dnsmasq logs.

DHCP only (`port=0`: no DNS) and no router or DNS server handed out, so that booting nodes
cannot route anywhere from this segment. What a client is told to boot depends on what it is,
from its DHCP request (docs/pxe.md has the table):
- iPXE (user class `iPXE` or option 175): the boot script over HTTP;
- a BIOS PXE ROM (option 93 = 0, or no option 93): iPXE's BIOS loader over TFTP;
- x86-64 UEFI (option 93 = 7 or 9): the UEFI loader over TFTP (shim, by default);
- a UEFI HTTP-boot client (vendor class `HTTPClient`): a loader's URL, and option 60 echoed
  back, which the firmware requires before it accepts the offer;
- ARM64 UEFI (option 93 = 11): its loader when one is installed, else nothing;
- over DHCPv6 (`[pxe] dhcp_range_ipv6`), iPXE and UEFI PXE the same as URLs in option 59.
TFTP is discoverd's own (tftp.py), not dnsmasq's. Logs go to stderr, which the supervisor
forwards to discoverd's log (no log file to rotate).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

CONF_NAME = "dnsmasq.conf"
LEASES_NAME = "dnsmasq.leases"
EFI_PATH = "/boot/efi"  # where the HTTP server serves loaders by name

# dnsmasq's tags for the client classes (docs/pxe.md)
IPXE, ANY_ARCH, BIOS, EFI_X86_64, EFI_AARCH64, HTTP_CLIENT = (
    "ipxe", "arch", "bios", "efi-x86_64", "efi-aarch64", "httpclient")
# DHCP option 93 (RFC 4578, IANA "Processor Architecture Types") per tag
ARCH_CODES = {BIOS: (0,), EFI_X86_64: (7, 9, 16), EFI_AARCH64: (11, 19)}
HTTP_ARCH_CODES = (16, 19)  # the HTTP-boot variants of x86-64 and ARM64 UEFI
UEFI_ENTERPRISE = 343  # Intel's IANA number: the DHCPv6 vendor class of UEFI clients

_LEASE = re.compile(r"DHCPACK\((?P<iface>[^)]+)\) (?P<ip>\S+) (?P<mac>[0-9a-fA-F:]{17})")
_IGNORED = re.compile(r"DHCP\w+\([^)]+\) (?:\S+ )?(?P<mac>[0-9a-fA-F:]{17}) ignored")
_PROBLEM = re.compile(r"\b(failed|error|cannot|unknown interface|no address range|"
                      r"no address available|has no address|warning)\b", re.IGNORECASE)


@dataclass(frozen=True)
class BootPrograms:
    """The loader (a served name) each class of client gets; None: that class is not
    served."""

    bios: str | None = None
    uefi_x86_64: str | None = None
    uefi_http_x86_64: str | None = None  # fetched by URL, {http_url}/boot/efi/<name>
    uefi_aarch64: str | None = None


@dataclass(frozen=True)
class DnsmasqSettings:
    interface: str
    dhcp_range: str
    http_url: str
    directory: Path  # <state dir>/pxe: config, leases
    programs: BootPrograms
    router_advertisements: bool
    filter_options: tuple[str, ...] = ()
    user: str | None = None
    ping_before_offer: bool = False
    dhcp_range_ipv6: str = ""  # empty: no DHCPv6
    http_url_ipv6: str = ""
    tftp_ipv6: str = ""  # the address IPv6 clients fetch loaders from over TFTP

    @property
    def conf_file(self) -> Path:
        return self.directory / CONF_NAME


def render(s: DnsmasqSettings) -> str:
    lines = [
        "# Written by discoverd at each start; edits are lost.",
        "port=0",
        f"interface={s.interface}",
        "bind-interfaces",
        f"dhcp-range={s.dhcp_range}",
        f"dhcp-leasefile={s.directory / LEASES_NAME}",
        # Empty options: dnsmasq would otherwise offer itself as router and DNS server.
        "dhcp-option=option:router",
        "dhcp-option=option:dns-server",
        *_classes(),
        *_boot_ipv4(s),
    ]
    if s.dhcp_range_ipv6:
        lines += [f"dhcp-range={s.dhcp_range_ipv6}", *_boot_ipv6(s)]
    lines += list(s.filter_options)
    if s.router_advertisements:
        # iPXE waits ~13 s for an IPv6 router advertisement before it fetches the script.
        lines.append("enable-ra")
        if not s.dhcp_range_ipv6:  # a DHCPv6 range is advertised already
            lines.append(f"dhcp-range=::,constructor:{s.interface},ra-only")
    if not s.ping_before_offer:
        lines.append("no-ping")  # the ~3 s duplicate-address probe delays every first boot
    lines += ["log-dhcp", "log-facility=-", "pid-file="]
    if s.user:
        # dnsmasq must read the hosts dir after it drops privileges; the state directory
        # may not be readable by its default user (nobody). Its group too: a change of
        # credentials would clear the parent-death signal that ends dnsmasq with discoverd
        # (supervisor.py), and an orphan would keep the network from the next owner.
        lines += [f"user={s.user}", f"group={s.user}"]
    return "\n".join(lines) + "\n"


def _classes() -> list[str]:
    """Tags for what a client is (the user class tags iPXE over DHCPv6 too)."""
    lines = [f"dhcp-userclass=set:{IPXE},iPXE", f"dhcp-match=set:{IPXE},175",
             f"dhcp-match=set:{ANY_ARCH},option:client-arch"]
    lines += [f"dhcp-match=set:{tag},option:client-arch,{code}"
              for tag, codes in ARCH_CODES.items() for code in codes]
    lines.append(f"dhcp-vendorclass=set:{HTTP_CLIENT},HTTPClient")
    return lines


def _boot_ipv4(s: DnsmasqSettings) -> list[str]:
    """One dhcp-boot per class, on mutually exclusive tags (dnsmasq takes the first match)."""
    p = s.programs
    lines = [f"dhcp-boot=tag:{IPXE},{s.http_url}/boot.ipxe"]
    if p.bios:
        lines += [f"dhcp-boot=tag:!{IPXE},tag:{BIOS},{p.bios}",
                  f"dhcp-boot=tag:!{IPXE},tag:!{ANY_ARCH},{p.bios}"]
    if p.uefi_x86_64:
        lines.append(f"dhcp-boot=tag:!{IPXE},tag:{EFI_X86_64},tag:!{HTTP_CLIENT},"
                     f"{p.uefi_x86_64}")
    if p.uefi_http_x86_64:
        # An HTTP-boot client takes an offer only when it names HTTPClient in option 60.
        lines += [f"dhcp-option-force=tag:{HTTP_CLIENT},option:vendor-class,HTTPClient",
                  f"dhcp-boot=tag:!{IPXE},tag:{EFI_X86_64},tag:{HTTP_CLIENT},"
                  f"{s.http_url}{EFI_PATH}/{p.uefi_http_x86_64}"]
    if p.uefi_aarch64:
        lines.append(f"dhcp-boot=tag:!{IPXE},tag:{EFI_AARCH64},tag:!{HTTP_CLIENT},"
                     f"{p.uefi_aarch64}")
    return lines


def _boot_ipv6(s: DnsmasqSettings) -> list[str]:
    """Option 59 (a URL) per class: only UEFI firmware and iPXE PXE-boot over IPv6. UEFI
    HTTP boot over IPv6 is not served: EDK2-based firmware takes an answer for an HTTP one
    only when it echoes the vendor class (option 16: enterprise number, then the class),
    which dnsmasq 2.90 cannot write (it sends option 16 as a list of strings)."""
    p = s.programs
    url = "option6:bootfile-url"
    # option 61 (RFC 5970) carries option 93's codes; option 16 is vendor class with the
    # vendor's enterprise number first
    lines = [f"dhcp-match=set:{tag},option6:61,{code >> 8:02x}:{code & 0xFF:02x}"
             for tag, codes in ARCH_CODES.items() if tag != BIOS for code in codes]
    lines += [f"dhcp-vendorclass=set:{HTTP_CLIENT},enterprise:{UEFI_ENTERPRISE},HTTPClient",
              f"dhcp-option=tag:{IPXE},{url},{s.http_url_ipv6}/boot.ipxe"]
    tftp = f"tftp://[{s.tftp_ipv6}]"
    if p.uefi_x86_64:
        lines.append(f"dhcp-option=tag:!{IPXE},tag:!{EFI_AARCH64},tag:!{HTTP_CLIENT},"
                     f"{url},{tftp}/{p.uefi_x86_64}")
    if p.uefi_aarch64:
        lines.append(f"dhcp-option=tag:!{IPXE},tag:{EFI_AARCH64},tag:!{HTTP_CLIENT},"
                     f"{url},{tftp}/{p.uefi_aarch64}")
    return lines


def write_config(s: DnsmasqSettings) -> Path:
    s.directory.mkdir(parents=True, exist_ok=True)
    s.conf_file.write_text(render(s))
    return s.conf_file


def command(dnsmasq: str, conf_file: Path) -> list[str]:
    """The supervised command line; the config file argument comes last (it identifies
    a dnsmasq left over by a previous discoverd)."""
    return [dnsmasq, "--keep-in-foreground", f"--conf-file={conf_file}"]


def parse_lease(line: str) -> tuple[str, str] | None:
    """(MAC, IP) of a lease dnsmasq granted, from one of its log lines."""
    match = _LEASE.search(line)
    return (match["mac"].lower(), match["ip"]) if match else None


def lease_addresses(leases_file: Path, mac: str) -> set[str]:
    """The addresses dnsmasq's lease file gives `mac` (lower case, colons); none when the
    file is missing or unreadable. IPv4 lines are `expiry MAC IP name client-id`; DHCPv6
    ones `expiry IAID IP name DUID`, whose DUID names the MAC when it is link-layer based
    (types 1 and 3, what UEFI firmware sends); a DUID-UUID names none."""
    try:
        text = leases_file.read_text(errors="replace")
    except OSError:
        return set()
    found = set()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        if ":" in fields[2]:
            if len(fields) >= 5 and duid_mac(fields[4]) == mac:
                found.add(fields[2])
        elif fields[1].lower() == mac:
            found.add(fields[2])
    return found


def duid_mac(duid: str) -> str | None:
    """The Ethernet MAC in a DUID-LLT or DUID-LL (`00:01:00:01:<time>:<mac>`,
    `00:03:00:01:<mac>`), else None."""
    octets = duid.lower().split(":")
    if octets[:1] != ["00"] or len(octets) < 10 or octets[2:4] != ["00", "01"]:
        return None
    if octets[1] == "01" and len(octets) == 14:
        return ":".join(octets[8:])
    if octets[1] == "03" and len(octets) == 10:
        return ":".join(octets[4:])
    return None


def log_level(line: str) -> int:
    """Leases and refusals are worth INFO; problems WARNING; the DHCP chatter DEBUG."""
    if _LEASE.search(line) or _IGNORED.search(line):
        return logging.INFO
    if _PROBLEM.search(line):
        return logging.WARNING
    return logging.DEBUG
