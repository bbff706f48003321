"""What each kind of booting machine is told, by discoverd's real dnsmasq, and fetches from its
TFTP server: the DHCP requests are the ones BIOS PXE ROMs, UEFI firmware (x86-64 and ARM64),
UEFI HTTP-boot clients and iPXE send (dhcp_probe.py), over DHCPv4 and DHCPv6; the TFTP
client is curl, from the client's namespace, so the transfers cross the test network."""

from __future__ import annotations

import asyncio
import logging
import subprocess
from pathlib import Path

import pytest

from . import dhcp_probe as probe
from .conftest import CLIENT_IF, PxeNet

MAC = "52:54:00:5e:01:01"
IPV6_RANGE = "fd5e:1::100,fd5e:1::1ff,slaac,64,10m"


def loaders(tmp_path: Path, *missing: str) -> dict[str, str]:
    """[pxe] loader_file_paths to files of the test's own (named as Debian's are, which the
    loaders module reads: shim loads grub next); `missing` ones are not written."""
    sources = {"undionly.kpxe": "undionly.kpxe", "snponly.efi": "snponly.efi",
               "bootx64.efi": "shimx64.efi.signed", "grubx64.efi": "grubnetx64.efi",
               "bootaa64.efi": "shimaa64.efi.signed", "grubaa64.efi": "grubnetaa64.efi"}
    for served, source in sources.items():
        if served not in missing:
            (tmp_path / source).write_bytes(f"loader {served} ".encode() * 3000)
    return {"loader_file_paths": ",".join(f"{served}:{tmp_path / source}"
                                          for served, source in sources.items())}


async def ask(net: PxeNet, client: probe.Client, v6: bool = False) -> probe.Answer | None:
    ask_ = probe.ask_v6 if v6 else probe.ask_v4
    return await asyncio.to_thread(ask_, net.client, CLIENT_IF, client)


async def tftp(net: PxeNet, url: str, out: Path) -> subprocess.CompletedProcess[bytes]:
    """curl as the node: from the client namespace, at GRUB's block size (in a thread: the
    TFTP server answers in this event loop)."""
    return await asyncio.to_thread(
        subprocess.run, ["ip", "netns", "exec", net.client, "curl", "-sS", "--max-time", "20",
                         "--tftp-blksize", "1024", "-o", str(out), url],
        capture_output=True, timeout=30)


def client_address(net: PxeNet, address: str) -> None:
    subprocess.run(["ip", "-n", net.client, "addr", "replace", address, "dev", CLIENT_IF],
                   check=True, capture_output=True, timeout=10)


async def test_each_kind_of_machine_is_told_its_boot_file_over_dhcpv4(
        pxe_net: PxeNet, make_pxe, tmp_path: Path) -> None:
    client_address(pxe_net, f"{pxe_net.subnet}.250/24")
    url = f"http://{pxe_net.subnet}.1:5050"
    async with make_pxe(known=set(), **loaders(tmp_path)):
        expected = [
            (probe.pxe_client(MAC, 0), "undionly.kpxe"),
            (probe.Client(MAC), "undionly.kpxe"),  # an old PXE ROM: no option 93
            (probe.pxe_client(MAC, 7), "bootx64.efi"),
            (probe.pxe_client(MAC, 9), "bootx64.efi"),
            (probe.http_client(MAC, 16), f"{url}/boot/efi/snponly.efi"),
            (probe.pxe_client(MAC, 11), "bootaa64.efi"),
            (probe.Client(MAC, 7, "PXEClient:Arch:00007:UNDI:003010", "iPXE"),
             f"{url}/boot.ipxe"),
        ]
        for client, boot_file in expected:
            answer = await ask(pxe_net, client)
            assert answer is not None, client
            assert answer.boot_file == boot_file, (client, answer)
            assert answer.server == f"{pxe_net.subnet}.1"  # where TFTP is
            # a UEFI HTTP-boot client takes only an offer that names HTTPClient
            assert (answer.vendor_class == b"HTTPClient") == (client.arch == 16), answer


async def test_an_arm64_machine_without_its_loader_gets_none_and_is_named_in_the_log(
        pxe_net: PxeNet, make_pxe, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    client_address(pxe_net, f"{pxe_net.subnet}.250/24")
    caplog.set_level(logging.INFO, logger="ironsight.discoverd")
    async with make_pxe(known=set(), **loaders(tmp_path, "bootaa64.efi")):
        answer = await ask(pxe_net, probe.pxe_client(MAC, 11))
        assert answer is not None and answer.boot_file is None
        assert (await ask(pxe_net, probe.pxe_client(MAC, 7)) or probe.Answer(None)
                ).boot_file == "bootx64.efi"
        for _ in range(50):  # dnsmasq's lines reach discoverd's log through a pipe
            named = [r for r in caplog.records if MAC in r.getMessage()
                     and "got no boot file" in r.getMessage()]
            if named:
                break
            await asyncio.sleep(0.1)
    assert len(named) == 1, [r.getMessage() for r in caplog.records]
    assert named[0].levelno == logging.WARNING
    assert "shimaa64.efi.signed does not exist" in named[0].getMessage()


async def test_uefi_and_ipxe_clients_get_boot_file_urls_over_dhcpv6(
        pxe_net: PxeNet, make_pxe, tmp_path: Path) -> None:
    async with make_pxe(known=set(), dhcp_range_ipv6=IPV6_RANGE, **loaders(tmp_path)) as pxe:
        assert pxe.http_url_ipv6 == "http://[fd5e:1::1]:5050"  # the interface's, http_url's port
        expected = [(probe.pxe_client(MAC, 7), "tftp://[fd5e:1::1]/bootx64.efi"),
                    (probe.pxe_client(MAC, 11), "tftp://[fd5e:1::1]/bootaa64.efi"),
                    (probe.Client(MAC, 7, None, "iPXE"), "http://[fd5e:1::1]:5050/boot.ipxe")]
        for client, url in expected:
            answer = await ask(pxe_net, client, v6=True)
            assert answer is not None and answer.boot_file == url, (client, answer)


async def test_loaders_are_fetched_over_tftp_from_the_interface_over_ipv4_and_ipv6(
        pxe_net: PxeNet, make_pxe, tmp_path: Path) -> None:
    client_address(pxe_net, f"{pxe_net.subnet}.250/24")
    client_address(pxe_net, "fd5e:1::250/64")
    async with make_pxe(known=set(), dhcp_range_ipv6=IPV6_RANGE, **loaders(tmp_path)):
        for server in (f"{pxe_net.subnet}.1", "[fd5e:1::1]"):
            out = tmp_path / "got"
            done = await tftp(pxe_net, f"tftp://{server}/bootx64.efi", out)
            assert done.returncode == 0, done.stderr
            assert out.read_bytes() == (tmp_path / "shimx64.efi.signed").read_bytes()
        missing = await tftp(pxe_net, f"tftp://{pxe_net.subnet}.1/shimx64.efi.signed",
                       tmp_path / "no")
        assert missing.returncode == 68, missing.stderr  # curl's "TFTP: file not found"


async def test_grub_gets_its_node_config_with_a_token_only_from_the_leased_address(
        pxe_net: PxeNet, make_pxe, introspections, tmp_path: Path) -> None:
    async with make_pxe(known={MAC}, tokens=True, **loaders(tmp_path)) as pxe:
        await introspections(pxe).start(MAC)
        leased = await pxe_net.dhcp(MAC)
        assert leased is not None
        config = f"tftp://{pxe_net.subnet}.1/grub/{MAC}.cfg"
        client_address(pxe_net, f"{leased}/24")  # the node, at the address it leased
        mine = await tftp(pxe_net, config, tmp_path / "mine.cfg")
        assert mine.returncode == 0, mine.stderr
        text = (tmp_path / "mine.cfg").read_text()
        assert "ironsight.callback_token=" in text
        assert f"ironsight.callback_url=http://{pxe_net.subnet}.1:5050/v1/continue" in text
        assert "BOOTIF=01-52-54-00-5e-01-01" in text
        subprocess.run(["ip", "-n", pxe_net.client, "addr", "flush", "dev", CLIENT_IF],
                       check=True, timeout=10)
        client_address(pxe_net, f"{pxe_net.subnet}.251/24")  # another host asks for it
        other = await tftp(pxe_net, config, tmp_path / "other.cfg")
        assert other.returncode == 0, other.stderr
        assert "callback_token" not in (tmp_path / "other.cfg").read_text()


async def as_machine(net: PxeNet, mac: str) -> None:
    """The client link takes `mac`, and the server's neighbour table learns it, as from the
    router solicitation UEFI firmware sends before DHCPv6: dnsmasq reads a DHCPv6 client's
    MAC there (its DUID need not hold one)."""
    for args in (("down",), ("address", mac), ("up",)):
        subprocess.run(["ip", "-n", net.client, "link", "set", CLIENT_IF, *args], check=True)
    await asyncio.to_thread(subprocess.run, ["ip", "netns", "exec", net.client, "ping", "-6",
                                             "-c", "1", "-W", "3", "fd5e:1::1"],
                            capture_output=True, timeout=10)


async def test_the_dnsmasq_filter_refuses_a_deployed_mac_over_dhcpv6_too(
        pxe_net: PxeNet, make_pxe, introspections, tmp_path: Path) -> None:
    deployed = "52:54:00:5e:01:02"
    async with make_pxe(known={MAC, deployed}, dhcp_range_ipv6=IPV6_RANGE,
                        **loaders(tmp_path)) as pxe:
        await introspections(pxe).start(MAC)
        await as_machine(pxe_net, deployed)
        assert await ask(pxe_net, probe.pxe_client(deployed, 7), v6=True) is None
        await as_machine(pxe_net, MAC)
        answer = await ask(pxe_net, probe.pxe_client(MAC, 7), v6=True)
        assert answer is not None and answer.boot_file == "tftp://[fd5e:1::1]/bootx64.efi"
