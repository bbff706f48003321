"""Fault injection: break one lab VM's boots in a named way, in the network, so that an
inspection's failure codes and deadlines can be shown and tested against real boots.

Each fault is an nft rule in the lab's namespace, on what the VM (matched by its MAC) sends to
the namespace's own services: dnsmasq and discoverd's ramdisk side, where every boot file and
every callback of the VMs goes (one HTTP port). An HTTP request is told by the first bytes of
its request line, which open the first segment of each request:

* `no-dhcp`: its DHCP and DHCPv6 requests are dropped: nothing answers them;
* `no-kernel`, `no-ramdisk`: its HTTP request for the kernel or the initramfs is dropped, so
  the transfer never starts and iPXE gives up (TFTP boots, the UEFI ones, fetch them over
  TFTP: these two faults do not apply to them);
* `no-agent`: every call of its ramdisk to discoverd (hello, beats, report) is dropped: to
  discoverd, an agent that never started;
* `wrong-callback`: the same calls are refused with a TCP reset, as a wrong callback address
  or port refuses them: the agent sees its calls fail.

A fault lasts until `clear` (it breaks every boot meanwhile, the next one included). The
faults of all VMs are one table, replaced whole in one nft transaction at each change, and
kept in the lab's state (`faults`), so that `ironsight lab status` shows them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping

from ironsight.lab import firmware
from ironsight.lab.network import COMMAND_TIMEOUT, NFT, LabNetwork, NetworkError, nft_unavailable
from ironsight.lab.state import NS_RAMDISK_PORT, Lab, LabError

KINDS = ("no-dhcp", "no-kernel", "no-ramdisk", "no-agent", "wrong-callback")
CLEAR = "clear"
BOOT_FILE_FAULTS = ("no-kernel", "no-ramdisk")
# firmwares whose network boot takes the kernel over TFTP (GRUB), not iPXE's HTTP
TFTP_FIRMWARE = (firmware.UEFI, firmware.UEFI_SECUREBOOT)
NFT_TABLE = "ironsight_lab_faults"
# discoverd's boot file paths (discoverd/pxe/bootfiles.py) and its callbacks' prefix
KERNEL_REQUEST = "GET /pxe/vmlinuz "
RAMDISK_REQUEST = "GET /pxe/initramfs "
CALLBACK_REQUEST = "POST /v1/"
MAX_MATCH = 16  # bytes one nft raw payload match compares at most


def _request(http_port: int, line: str) -> str:
    """nft's match of a TCP segment to `http_port` whose payload starts with `line`."""
    data = line.encode()
    parts = [f"tcp dport {http_port}"]
    for offset in range(0, len(data), MAX_MATCH):
        chunk = data[offset:offset + MAX_MATCH]
        parts.append(f"@ih,{offset * 8},{len(chunk) * 8} 0x{chunk.hex()}")
    return " ".join(parts)


def rule(kind: str, mac: str, http_port: int) -> str:
    """The nft rule of one VM's fault."""
    who = f"ether saddr {mac.lower()}"
    if kind == "no-dhcp":
        return f"{who} udp dport {{ 67, 547 }} drop"
    if kind == "no-kernel":
        return f"{who} {_request(http_port, KERNEL_REQUEST)} drop"
    if kind == "no-ramdisk":
        return f"{who} {_request(http_port, RAMDISK_REQUEST)} drop"
    if kind == "no-agent":
        return f"{who} {_request(http_port, CALLBACK_REQUEST)} drop"
    if kind == "wrong-callback":
        return f"{who} {_request(http_port, CALLBACK_REQUEST)} reject with tcp reset"
    raise ValueError(f"unknown fault {kind!r} (one of {', '.join(KINDS)})")


def ruleset(faults: Mapping[str, str], http_port: int) -> str:
    """nft's script replacing the faults table: `faults` maps a VM's MAC to its fault."""
    table = f"inet {NFT_TABLE}"
    rules = "".join(f"        {rule(kind, mac, http_port)}\n"
                    for mac, kind in sorted(faults.items()))
    return (f"table {table}\ndelete table {table}\ntable {table} {{\n"
            "    chain faults_in {\n"
            "        type filter hook input priority filter - 10; policy accept;\n"
            f"{rules}    }}\n}}\n")


def apply(net: LabNetwork, faults: Mapping[str, str], http_port: int) -> None:
    """Make the namespace's faults table `faults` (none: an empty table), atomically."""
    why = nft_unavailable()
    if why:
        raise NetworkError(why)
    argv = [*net.prefix, NFT, "-f", "-"]
    try:
        proc = subprocess.run(argv, input=ruleset(faults, http_port), capture_output=True,
                              text=True, timeout=COMMAND_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NetworkError(f"{' '.join(argv)}: {exc}") from None
    if proc.returncode != 0:
        raise NetworkError(f"`{' '.join(argv)}` failed: {proc.stderr.strip()}")


def inject(lab: Lab, name: str, kind: str) -> dict[str, str]:
    """Give VM `name` the fault `kind` (CLEAR: none), replacing any fault it had; the lab's
    faults after it, by VM."""
    try:
        vm = lab.vm(name)
    except KeyError:
        raise LabError(f"no VM named {name!r} in the lab "
                       f"({', '.join(v.spec.name for v in lab.vms)})") from None
    if kind != CLEAR and kind not in KINDS:
        raise LabError(f"unknown fault {kind!r} (one of {', '.join((*KINDS, CLEAR))})")
    if kind in BOOT_FILE_FAULTS and vm.spec.firmware in TFTP_FIRMWARE:
        raise LabError(f"{name} fetches its kernel and initramfs over TFTP ({vm.spec.firmware} "
                       f"firmware): {kind} applies to HTTP boots only")
    if kind in (*BOOT_FILE_FAULTS, "no-dhcp") and vm.virtual_media:
        raise LabError(f"{name} boots from virtual media, with no DHCP or boot files of "
                       f"discoverd's: {kind} does not apply")
    faults = dict(lab.state.get("faults") or {})
    if kind == CLEAR:
        faults.pop(name, None)
    else:
        faults[name] = kind
    apply(lab.network, {lab.vm(n).spec.mac: k for n, k in faults.items()}, NS_RAMDISK_PORT)
    lab.state["faults"] = faults
    lab.save()
    return faults
