"""What the PXE side sees of a booting node becomes phases of its attempt: dnsmasq's DHCP
lines, and each boot file served over HTTP or TFTP (mapped to the node by its lease)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from ironsight.discoverd import diagnosis as d
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe.bootfiles import BootFiles, tftp_phase
from ironsight.discoverd.pxe.bootlog import BootLog, lease_mac

from ..helpers import MAC1, MAC2, UUID1

DISCOVER = f"dnsmasq-dhcp[7]: 3411 DHCPDISCOVER(ens4) {MAC1}"
ACK = f"dnsmasq-dhcp[7]: 3411 DHCPACK(ens4) 10.20.0.150 {MAC1} node1"


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


async def introspected(cache: NodeCache) -> None:
    await cache.start(UUID1, manage_boot=True, macs=[MAC1], bmc_addresses=[])


async def phases(cache: NodeCache) -> list[dict[str, Any]]:
    await cache.timeline.drain()
    found = (await cache.timeline.attempts(UUID1))[-1]["phases"]
    return [p for p in found if p["source"] == "pxe"]


async def test_a_dhcp_request_and_its_lease_are_phases_with_the_address(
        cache: NodeCache) -> None:
    await introspected(cache)
    log = BootLog(cache, lambda: None)
    log.dhcp_line(DISCOVER)
    log.dhcp_line(ACK)
    seen = await phases(cache)
    assert [(p["phase"], p["mac"], p.get("ip")) for p in seen] == [
        (d.DHCP_REQUEST, MAC1, None), (d.DHCP_LEASE, MAC1, "10.20.0.150")]


async def test_a_request_dnsmasq_ignored_says_so(cache: NodeCache) -> None:
    await introspected(cache)
    log = BootLog(cache, lambda: None)
    log.dhcp_line(f"dnsmasq-dhcp[7]: DHCPDISCOVER(ens4) {MAC1} ignored")
    assert (await phases(cache))[0]["ignored"] is True


async def test_firmware_retries_within_seconds_are_one_request(cache: NodeCache) -> None:
    await introspected(cache)
    clock = Clock()
    log = BootLog(cache, lambda: None, clock=clock)
    log.dhcp_line(DISCOVER)
    clock.now += 1
    log.dhcp_line(DISCOVER)
    clock.now += 10
    log.dhcp_line(DISCOVER)
    assert [p["phase"] for p in await phases(cache)] == [d.DHCP_REQUEST, d.DHCP_REQUEST]


async def test_a_fetch_is_the_node_of_the_address_its_lease_gave(cache: NodeCache) -> None:
    await introspected(cache)
    log = BootLog(cache, lambda: None)
    log.dhcp_line(ACK)
    log.fetched(d.KERNEL_FETCHED, "::ffff:10.20.0.150", file="pxe/vmlinuz", bytes=7000)
    fetch = (await phases(cache))[-1]
    assert (fetch["phase"], fetch["mac"], fetch["ip"], fetch["bytes"]) == (
        d.KERNEL_FETCHED, MAC1, "10.20.0.150", 7000)


async def test_after_a_restart_the_lease_file_names_the_address(cache: NodeCache,
                                                                 tmp_path: Path) -> None:
    await introspected(cache)
    leases = tmp_path / "dnsmasq.leases"
    leases.write_text(f"1765000000 {MAC1.upper()} 10.20.0.151 node1 01:{MAC1}\n")
    log = BootLog(cache, lambda: leases)
    log.fetched(d.LOADER_FETCHED, "10.20.0.151", file="boot.ipxe")
    assert (await phases(cache))[-1]["mac"] == MAC1


async def test_a_fetch_from_an_address_no_lease_names_is_not_recorded(
        cache: NodeCache) -> None:
    await introspected(cache)
    BootLog(cache, lambda: None).fetched(d.KERNEL_FETCHED, "10.9.9.9", file="pxe/vmlinuz")
    assert await phases(cache) == []


async def test_machines_not_under_introspection_leave_nothing(cache: NodeCache) -> None:
    await introspected(cache)
    log = BootLog(cache, lambda: None)
    log.dhcp_line(f"dnsmasq-dhcp[7]: 1 DHCPACK(ens4) 10.20.0.160 {MAC2} other")
    log.fetched(d.KERNEL_FETCHED, "10.20.0.160", file="pxe/vmlinuz")
    assert await phases(cache) == []


def test_lease_mac_reads_ipv4_lines_only(tmp_path: Path) -> None:
    leases = tmp_path / "leases"
    leases.write_text("1 52:54:00:00:00:09 10.0.0.9 n *\n"
                      "1 1234 fd00::9 n 00:03:00:01:52:54:00:00:00:08\n")
    assert lease_mac(leases, "10.0.0.9") == "52:54:00:00:00:09"
    assert lease_mac(leases, "fd00::9") is None
    assert lease_mac(tmp_path / "none", "10.0.0.9") is None


def test_tftp_files_map_to_their_phases() -> None:
    assert [tftp_phase(f) for f in ("undionly.kpxe", "grub/grub.cfg",
                                    "grub/52-54-00-00-00-01.cfg", "pxe/vmlinuz",
                                    "pxe/initramfs")] == [
        d.LOADER_FETCHED, d.LOADER_FETCHED, d.SCRIPT_FETCHED, d.KERNEL_FETCHED,
        d.RAMDISK_FETCHED]


async def test_each_boot_file_served_over_http_is_told_with_its_phase(tmp_path: Path) -> None:
    (tmp_path / "vmlinuz").write_bytes(b"k" * 70)
    (tmp_path / "initramfs").write_bytes(b"i" * 30)
    told: list[tuple[str, str | None, str | None, dict[str, Any]]] = []

    def seen(phase: str, host: str | None, *, mac: str | None = None, **details: Any) -> None:
        told.append((phase, host, mac, details))

    boot = BootFiles(tmp_path, "", lambda: "http://10.20.0.1:5050", seen=seen)
    app = Starlette(routes=boot.routes())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=("10.20.0.150",
                                                                                 4000)),
                                 base_url="http://di.test") as client:
        for path in ("/boot.ipxe", "/boot/52-54-00-00-00-01.ipxe", "/pxe/vmlinuz",
                     "/pxe/initramfs"):
            assert (await client.get(path)).status_code == 200
    assert [(t[0], t[1], t[2]) for t in told] == [
        (d.LOADER_FETCHED, "10.20.0.150", None), (d.SCRIPT_FETCHED, "10.20.0.150", MAC1),
        (d.KERNEL_FETCHED, "10.20.0.150", None), (d.RAMDISK_FETCHED, "10.20.0.150", None)]
    assert told[2][3]["bytes"] == 70
    assert told[1][3]["token"] is False


async def test_an_ipv6_fetch_is_mapped_through_the_neighbour_table(cache: NodeCache) -> None:
    await introspected(cache)

    async def neighbour(address: str) -> str | None:
        return MAC1 if address == "fd20:20::1a" else None

    log = BootLog(cache, lambda: None, neighbour=neighbour)
    log.fetched(d.LOADER_FETCHED, "fd20:20::1a", file="bootx64.efi", via="tftp")
    log.fetched(d.LOADER_FETCHED, "fd20:20::99", file="bootx64.efi", via="tftp")
    assert [(p["mac"], p["ip"]) for p in await phases(cache)] == [(MAC1, "fd20:20::1a")]
