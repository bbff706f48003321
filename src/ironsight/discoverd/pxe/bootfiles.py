"""What iPXE fetches over HTTP from discoverd: the boot script, then the ramdisk's kernel and
initramfs (from `Config.ramdisk_dir`).

The script names the callback URL on the kernel command line and `BOOTIF` (the NIC iPXE booted
from, `${netX}`: on a machine with several NICs it need not be net0), which is how the ramdisk
knows where to report and which NIC is the PXE one. `initrd=initramfs` lets an EFI-stub kernel
find the initramfs iPXE loaded under that name (BIOS boots ignore it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

LOG = logging.getLogger(__name__)

KERNEL = "vmlinuz"
INITRAMFS = "initramfs"


def ipxe_script(http_url: str, kernel_params: str) -> str:
    params = " ".join(p for p in (
        f"initrd={INITRAMFS}", f"ironsight.callback_url={http_url}/v1/continue",
        "BOOTIF=01-${netX/mac:hexhyp}", kernel_params.strip()) if p)
    return (f"#!ipxe\n"
            f"kernel {http_url}/pxe/{KERNEL} {params}\n"
            f"initrd --name {INITRAMFS} {http_url}/pxe/{INITRAMFS}\n"
            f"boot\n")


class BootFiles:
    def __init__(self, ramdisk_dir: Path, kernel_params: str,
                 http_url: Callable[[], str]) -> None:
        """`http_url` gives the base URL nodes reach discoverd at ("": the request's)."""
        self.ramdisk_dir = ramdisk_dir
        self.kernel_params = kernel_params
        self.http_url = http_url

    def routes(self) -> list[Route]:
        return [Route("/boot.ipxe", self.script, methods=["GET"]),
                Route(f"/pxe/{KERNEL}", self.kernel, methods=["GET"]),
                Route(f"/pxe/{INITRAMFS}", self.initramfs, methods=["GET"])]

    async def script(self, request: Request) -> Response:
        base = self.http_url() or str(request.base_url).rstrip("/")
        return PlainTextResponse(ipxe_script(base, self.kernel_params))

    async def kernel(self, request: Request) -> Response:
        return self._file(KERNEL, "kernel")

    async def initramfs(self, request: Request) -> Response:
        return self._file(INITRAMFS, "initramfs")

    def _file(self, name: str, what: str) -> Response:
        path = self.ramdisk_dir / name
        if not path.is_file():
            message = (f"The discovery ramdisk's {what} is missing: {path} does not exist. "
                       f"Build it with `ironsight ramdisk build` (or set [pxe] ramdisk_dir).")
            LOG.error("A node asked for %s: %s", name, message)
            return PlainTextResponse(message + "\n", status_code=404)
        return FileResponse(path, media_type="application/octet-stream")
