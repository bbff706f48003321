"""What booting nodes fetch from discoverd: iPXE scripts, GRUB configs, loaders and the ramdisk,
over HTTP and TFTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from ironsight.common import config
from ironsight.common.exceptions import DatabaseUnavailable
from ironsight.common.ratelimit import RateLimiter
from ironsight.discoverd.pxe.bootfiles import (
    BootFiles,
    chain_script,
    grub_config,
    grub_node_config,
    ipxe_script,
    mac_of,
)
from ironsight.discoverd.pxe.tftp import TftpRefused
from ironsight.discoverd.service import DiscoverdService, upgrade_database

URL = "http://10.20.0.1:5050"


def test_ipxe_script_boots_the_ramdisk_with_callback_url_and_bootif() -> None:
    assert ipxe_script(URL, "console=ttyS0,115200") == (
        "#!ipxe\n"
        f"kernel {URL}/pxe/vmlinuz initrd=initramfs ironsight.callback_url={URL}/v1/continue "
        "BOOTIF=01-${netX/mac:hexhyp} console=ttyS0,115200\n"
        f"initrd --name initramfs {URL}/pxe/initramfs\n"
        "boot\n")


def test_ipxe_script_with_a_token_puts_it_next_to_the_callback_url() -> None:
    assert (f"ironsight.callback_url={URL}/v1/continue ironsight.callback_token=T0k-en_ "
            "BOOTIF=") in ipxe_script(URL, "", "T0k-en_")


def test_ipxe_script_without_extra_params_has_no_trailing_space() -> None:
    assert "hexhyp}\n" in ipxe_script(URL, "  ")


def test_chain_script_sends_each_node_to_the_script_of_the_mac_it_booted_from() -> None:
    assert chain_script(URL) == f"#!ipxe\nchain {URL}/boot/${{netX/mac:hexhyp}}.ipxe\n"


@pytest.mark.parametrize(("text", "mac"), [
    ("52-54-00-12-34-ab", "52:54:00:12:34:ab"), ("52:54:00:12:34:AB", "52:54:00:12:34:ab"),
    ("52-54-00-12-34", None), ("zz-54-00-12-34-ab", None), ("../../etc", None)])
def test_mac_of(text: str, mac: str | None) -> None:
    assert mac_of(text) == mac


def _conf(tmp_path: Path, pxe: bool) -> config.Config:
    return config.load(overrides={
        "DEFAULT": {"state_dir": str(tmp_path)},
        "pxe": {"enabled": str(pxe).lower(), "http_url": URL + "/",
                "ramdisk_dir": str(tmp_path / "ramdisk"), "kernel_params": "quiet"}})


async def _client(conf: config.Config) -> AsyncIterator[httpx.AsyncClient]:
    upgrade_database(conf)
    svc = DiscoverdService(conf)  # not started: the routes need no running service
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=svc.app),
                                     base_url="http://di.test") as client:
            yield client
    finally:
        await svc.db.close()


@pytest.fixture
async def di(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async for client in _client(_conf(tmp_path, pxe=True)):
        yield client


async def test_boot_script_chains_to_the_nodes_own_script(di: httpx.AsyncClient) -> None:
    resp = await di.get("/boot.ipxe")
    assert resp.status_code == 200
    assert resp.text == chain_script(URL)


async def test_node_script_names_the_configured_urls(di: httpx.AsyncClient) -> None:
    resp = await di.get("/boot/52-54-00-12-34-56.ipxe")
    assert resp.status_code == 200
    assert resp.text.startswith("#!ipxe\n")
    assert f"kernel {URL}/pxe/vmlinuz " in resp.text
    assert f"ironsight.callback_url={URL}/v1/continue " in resp.text
    assert resp.text.splitlines()[1].endswith(" quiet")
    assert f"initrd --name initramfs {URL}/pxe/initramfs\n" in resp.text
    assert "callback_token" not in resp.text  # not under introspection, not serving DHCP


async def test_node_script_of_something_not_a_mac_is_a_404(di: httpx.AsyncClient) -> None:
    resp = await di.get("/boot/not-a-mac.ipxe")
    assert resp.status_code == 404
    assert "Not a MAC address" in resp.text


async def test_kernel_and_initramfs_are_served_from_the_ramdisk_dir(
        di: httpx.AsyncClient, tmp_path: Path) -> None:
    ramdisk = tmp_path / "ramdisk"
    ramdisk.mkdir()
    (ramdisk / "vmlinuz").write_bytes(b"\x7fkernel" * 1000)
    (ramdisk / "initramfs").write_bytes(b"cpio")
    resp = await di.get("/pxe/vmlinuz")
    assert resp.status_code == 200
    assert resp.content == b"\x7fkernel" * 1000
    assert resp.headers["content-length"] == "7000"
    assert (await di.get("/pxe/initramfs")).content == b"cpio"


async def test_missing_ramdisk_is_a_404_that_says_how_to_build_it(di: httpx.AsyncClient,
                                                                  tmp_path: Path) -> None:
    resp = await di.get("/pxe/initramfs")
    assert resp.status_code == 404
    assert "ironsight ramdisk build" in resp.text
    assert str(tmp_path / "ramdisk" / "initramfs") in resp.text


async def test_without_pxe_there_are_no_boot_routes(tmp_path: Path) -> None:
    async for client in _client(_conf(tmp_path, pxe=False)):
        assert (await client.get("/boot.ipxe")).status_code == 404
        assert (await client.get("/pxe/vmlinuz")).status_code == 404


async def test_boot_scripts_are_rate_limited_per_address(tmp_path: Path) -> None:
    conf = config.load(overrides={
        "DEFAULT": {"state_dir": str(tmp_path)},
        "pxe": {"enabled": "true", "http_url": URL},
        "introspection": {"ramdisk_rate_limit": "1", "ramdisk_rate_burst": "2",
                          "ramdisk_rate_limit_exempt": ""}})
    async for client in _client(conf):
        assert (await client.get("/boot.ipxe")).status_code == 200
        assert (await client.get("/boot/52-54-00-12-34-56.ipxe")).status_code == 200
        refused = await client.get("/boot.ipxe")
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1


# --- GRUB over TFTP, loaders, IPv6 ------------------------------------------------------------

URL6 = "http://[fd20::1]:5050"
MAC = "52:54:00:12:34:56"


class Tokens:
    """Hands out a token to the node's leased address only, as BootTokens does."""

    def __init__(self, leased: str | None = "10.20.0.150", fail: bool = False) -> None:
        self.leased = leased
        self.fail = fail
        self.asked: list[tuple[str, str | None]] = []

    async def __call__(self, mac: str, host: str | None) -> str | None:
        self.asked.append((mac, host))
        if self.fail:
            raise DatabaseUnavailable("the database is down")
        return "T0k-en" if host == self.leased else None


def boot_files(tmp_path: Path, tokens: Tokens | None = None,
               limiter: RateLimiter | None = None) -> BootFiles:
    loader = tmp_path / "shimx64.efi.signed"
    loader.write_bytes(b"MZ shim")
    return BootFiles(tmp_path / "ramdisk", "console=ttyS0", lambda: URL,
                     http_url_ipv6=lambda: URL6, loaders=lambda: {"bootx64.efi": loader},
                     tokens=tokens or Tokens(), limiter=limiter)


def test_grub_config_goes_on_to_the_config_of_the_mac_grub_booted_from() -> None:
    config_text = grub_config()
    assert "configfile $prefix/${net_default_mac}.cfg\n" in config_text
    assert "set timeout=0\n" in config_text


def test_grub_node_config_loads_the_ramdisk_over_tftp_with_callback_url_and_bootif() -> None:
    text = grub_node_config(URL, "console=ttyS0", MAC, "T0k-en")
    assert (f"linux /pxe/vmlinuz ironsight.callback_url={URL}/v1/continue "
            "ironsight.callback_token=T0k-en BOOTIF=01-52-54-00-12-34-56 console=ttyS0\n"
            ) in text
    assert "initrd /pxe/initramfs\nboot\n" in text


async def test_tftp_serves_grubs_first_config_to_anyone(tmp_path: Path) -> None:
    found = await boot_files(tmp_path).tftp_file("grub/grub.cfg", "10.20.0.99")
    assert found is not None and found.data == grub_config().encode()


async def test_tftp_node_config_carries_a_token_only_for_the_leased_address(
        tmp_path: Path) -> None:
    tokens = Tokens()
    files = boot_files(tmp_path, tokens)
    mine = await files.tftp_file(f"grub/{MAC}.cfg", "10.20.0.150")
    other = await files.tftp_file(f"grub/{MAC}.cfg", "10.20.0.151")
    assert mine is not None and mine.data is not None and other is not None
    assert b"ironsight.callback_token=T0k-en " in mine.data
    assert other.data is not None and b"callback_token" not in other.data
    assert tokens.asked == [(MAC, "10.20.0.150"), (MAC, "10.20.0.151")]


async def test_tftp_node_config_for_an_ipv6_client_names_the_ipv6_urls(tmp_path: Path
                                                                         ) -> None:
    found = await boot_files(tmp_path, Tokens("fd20::1da")).tftp_file(f"grub/{MAC}.cfg",
                                                                       "fd20::1da")
    assert found is not None and found.data is not None
    assert f"ironsight.callback_url={URL6}/v1/continue ironsight.callback_token=".encode() \
        in found.data


async def test_tftp_node_config_is_refused_while_the_database_is_down(tmp_path: Path) -> None:
    with pytest.raises(TftpRefused, match="database is unavailable"):
        await boot_files(tmp_path, Tokens(fail=True)).tftp_file(f"grub/{MAC}.cfg",
                                                                "10.20.0.150")


async def test_tftp_configs_are_rate_limited_per_address(tmp_path: Path) -> None:
    files = boot_files(tmp_path, limiter=RateLimiter(per_minute=1, burst=1))
    assert await files.tftp_file("grub/grub.cfg", "10.20.0.150") is not None
    with pytest.raises(TftpRefused, match=r"(?i)too many"):
        await files.tftp_file(f"grub/{MAC}.cfg", "10.20.0.150")
    assert await files.tftp_file("bootx64.efi", "10.20.0.150") is not None  # loaders are not


@pytest.mark.parametrize("name", ["grub/x86_64-efi/grub.cfg", "grub/not-a-mac.cfg",
                                  "grub/x86_64-efi/command.lst", "shimx64.efi.signed",
                                  "etc/passwd", "pxe/other"])
async def test_tftp_serves_nothing_else(tmp_path: Path, name: str) -> None:
    assert await boot_files(tmp_path).tftp_file(name, "10.20.0.150") is None


async def test_tftp_serves_loaders_by_their_served_name(tmp_path: Path) -> None:
    found = await boot_files(tmp_path).tftp_file("bootx64.efi", "10.20.0.150")
    assert found is not None and found.path == tmp_path / "shimx64.efi.signed"


async def test_tftp_serves_the_ramdisk_when_it_is_built(tmp_path: Path) -> None:
    files = boot_files(tmp_path)
    assert await files.tftp_file("pxe/vmlinuz", "10.20.0.150") is None
    (tmp_path / "ramdisk").mkdir()
    (tmp_path / "ramdisk" / "vmlinuz").write_bytes(b"kernel")
    found = await files.tftp_file("pxe/vmlinuz", "10.20.0.150")
    assert found is not None and found.path == tmp_path / "ramdisk" / "vmlinuz"


async def test_http_serves_loaders_under_boot_efi_and_nothing_else(tmp_path: Path) -> None:
    app = Starlette(routes=boot_files(tmp_path).routes())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://di.test") as client:
        found = await client.get("/boot/efi/bootx64.efi")
        assert found.status_code == 200 and found.content == b"MZ shim"
        assert (await client.get("/boot/efi/shimx64.efi.signed")).status_code == 404
        assert (await client.get("/boot/efi/..%2f..%2fetc%2fpasswd")).status_code == 404


@pytest.mark.parametrize(("host", "base"), [("10.20.0.150", URL), ("fd20::1da", URL6),
                                            ("::ffff:10.20.0.150", URL), (None, URL)])
def test_clients_get_the_base_url_of_their_address_family(tmp_path: Path, host: str | None,
                                                          base: str) -> None:
    assert boot_files(tmp_path).base_for(host) == base
