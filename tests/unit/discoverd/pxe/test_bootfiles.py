"""The iPXE script and the ramdisk files, served by discoverd's own app when PXE is on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from ironsight.common import config
from ironsight.discoverd.pxe.bootfiles import chain_script, ipxe_script, mac_of
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
