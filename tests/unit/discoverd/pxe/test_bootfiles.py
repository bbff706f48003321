"""The iPXE script and the ramdisk files, served by discoverd's own app when PXE is on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from ironsight.common import config
from ironsight.discoverd.pxe.bootfiles import ipxe_script
from ironsight.discoverd.service import DiscoverdService

URL = "http://10.20.0.1:5050"


def test_ipxe_script_boots_the_ramdisk_with_callback_url_and_bootif() -> None:
    assert ipxe_script(URL, "console=ttyS0,115200") == (
        "#!ipxe\n"
        f"kernel {URL}/pxe/vmlinuz initrd=initramfs ironsight.callback_url={URL}/v1/continue "
        "BOOTIF=01-${netX/mac:hexhyp} console=ttyS0,115200\n"
        f"initrd --name initramfs {URL}/pxe/initramfs\n"
        "boot\n")


def test_ipxe_script_without_extra_params_has_no_trailing_space() -> None:
    assert "hexhyp}\n" in ipxe_script(URL, "  ")


def _conf(tmp_path: Path, pxe: bool) -> config.Config:
    return config.load(overrides={
        "DEFAULT": {"state_dir": str(tmp_path)},
        "pxe": {"enabled": str(pxe).lower(), "http_url": URL + "/",
                "ramdisk_dir": str(tmp_path / "ramdisk"), "kernel_params": "quiet"}})


async def _client(conf: config.Config) -> AsyncIterator[httpx.AsyncClient]:
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


async def test_boot_script_names_the_configured_urls(di: httpx.AsyncClient) -> None:
    resp = await di.get("/boot.ipxe")
    assert resp.status_code == 200
    assert resp.text.startswith("#!ipxe\n")
    assert f"kernel {URL}/pxe/vmlinuz " in resp.text
    assert f"ironsight.callback_url={URL}/v1/continue " in resp.text
    assert resp.text.splitlines()[1].endswith(" quiet")
    assert f"initrd --name initramfs {URL}/pxe/initramfs\n" in resp.text


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
