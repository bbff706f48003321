"""dnsmasq's configuration for the provisioning network, rewritten at every start, and how to
read what dnsmasq logs.

DHCP only (`port=0`: no DNS) and no router or DNS server handed out, so that booting nodes
cannot route anywhere from this segment. iPXE (user class `iPXE` or option 175) gets the HTTP
script; plain PXE ROMs get iPXE itself over TFTP, from a root that holds nothing else. Logs go
to stderr, which the supervisor forwards to discoverd's log (no log file to rotate).
"""

from __future__ import annotations

import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

CONF_NAME = "dnsmasq.conf"
LEASES_NAME = "dnsmasq.leases"
TFTP_DIR = "tftp"

_LEASE = re.compile(r"DHCPACK\((?P<iface>[^)]+)\) (?P<ip>\S+) (?P<mac>[0-9a-fA-F:]{17})")
_IGNORED = re.compile(r"DHCP\w+\([^)]+\) (?:\S+ )?(?P<mac>[0-9a-fA-F:]{17}) ignored")
_PROBLEM = re.compile(r"\b(failed|error|cannot|unknown interface|no address range|"
                      r"no address available|has no address|warning)\b", re.IGNORECASE)


@dataclass(frozen=True)
class DnsmasqSettings:
    interface: str
    dhcp_range: str
    http_url: str
    directory: Path  # <state dir>/pxe: config, leases, TFTP root
    ipxe_binary: Path | None  # None: no TFTP (only iPXE ROMs can boot)
    router_advertisements: bool
    filter_options: tuple[str, ...] = ()
    user: str | None = None
    ping_before_offer: bool = False

    @property
    def conf_file(self) -> Path:
        return self.directory / CONF_NAME

    @property
    def tftp_root(self) -> Path:
        return self.directory / TFTP_DIR


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
        "dhcp-userclass=set:ipxe,iPXE",
        "dhcp-match=set:ipxe,175",
        f"dhcp-boot=tag:ipxe,{s.http_url}/boot.ipxe",
    ]
    if s.ipxe_binary is not None:
        lines += [f"dhcp-boot=tag:!ipxe,{s.ipxe_binary.name}",
                  "enable-tftp",
                  f"tftp-root={s.tftp_root}"]
    lines += list(s.filter_options)
    if s.router_advertisements:
        # iPXE waits ~13 s for an IPv6 router advertisement before it fetches the script.
        lines += ["enable-ra", f"dhcp-range=::,constructor:{s.interface},ra-only"]
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


def prepare_tftp_root(root: Path, binary: Path | None) -> None:
    """Leave exactly the iPXE binary in the TFTP root: nothing else can be fetched."""
    root.mkdir(parents=True, exist_ok=True)
    keep = binary.name if binary is not None else None
    for entry in root.iterdir():
        if entry.name != keep or entry.is_symlink() or not entry.is_file():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    if binary is not None:
        target = root / binary.name
        data = binary.read_bytes()
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
            target.chmod(0o644)


def write_config(s: DnsmasqSettings) -> Path:
    s.directory.mkdir(parents=True, exist_ok=True)
    prepare_tftp_root(s.tftp_root, s.ipxe_binary)
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
    """The addresses dnsmasq's lease file (`expiry MAC IP name client-id` per line) gives
    `mac` (lower case, colons); none when the file is missing or unreadable."""
    try:
        text = leases_file.read_text(errors="replace")
    except OSError:
        return set()
    found = set()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[1].lower() == mac:
            found.add(fields[2])
    return found


def log_level(line: str) -> int:
    """Leases and refusals are worth INFO; problems WARNING; the DHCP chatter DEBUG."""
    if _LEASE.search(line) or _IGNORED.search(line):
        return logging.INFO
    if _PROBLEM.search(line):
        return logging.WARNING
    return logging.DEBUG
