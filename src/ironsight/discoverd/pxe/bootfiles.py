"""What iPXE fetches over HTTP from discoverd: the boot script, then the ramdisk's kernel and
initramfs (from `Config.ramdisk_dir`).

`/boot.ipxe` (what dnsmasq points iPXE at) is the same for every node: it only chains to the
node's own script, `/boot/<MAC>.ipxe`, the MAC being that of the NIC iPXE booted from
(`${netX/mac:hexhyp}`: on a machine with several NICs it need not be net0). The node's script
names the callback URL on the kernel command line and, when the node is under introspection
and the request comes from the address its DHCP lease holds, a fresh callback token
(`ironsight.callback_token=`, see tokens.py); otherwise the same script without one. `BOOTIF`
tells the ramdisk which NIC is the PXE one. `initrd=initramfs` lets an EFI-stub kernel find
the initramfs iPXE loaded under that name (BIOS boots ignore it).

Both scripts are rate-limited per source address (429 with Retry-After); the kernel and
initramfs are not (a node fetches each once per boot, and they are the same for everyone).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from ironsight.common.exceptions import DatabaseUnavailable
from ironsight.common.ratelimit import RateLimiter, TooManyRequests
from ironsight.discoverd.callback_token import KERNEL_PARAM

LOG = logging.getLogger(__name__)

KERNEL = "vmlinuz"
INITRAMFS = "initramfs"
_MAC = re.compile(r"^[0-9a-f]{2}([-:][0-9a-f]{2}){5}$")

# (MAC, the requester's address) -> a callback token for that node, or None.
TokenSource = Callable[[str, str | None], Awaitable[str | None]]


def chain_script(http_url: str) -> str:
    """The script every node gets first: on to its own, named by the MAC it booted from."""
    return f"#!ipxe\nchain {http_url}/boot/${{netX/mac:hexhyp}}.ipxe\n"


def ipxe_script(http_url: str, kernel_params: str, token: str | None = None) -> str:
    params = " ".join(p for p in (
        f"initrd={INITRAMFS}", f"ironsight.callback_url={http_url}/v1/continue",
        f"{KERNEL_PARAM}={token}" if token else "",
        "BOOTIF=01-${netX/mac:hexhyp}", kernel_params.strip()) if p)
    return (f"#!ipxe\n"
            f"kernel {http_url}/pxe/{KERNEL} {params}\n"
            f"initrd --name {INITRAMFS} {http_url}/pxe/{INITRAMFS}\n"
            f"boot\n")


def mac_of(text: str) -> str | None:
    """`aa-bb-cc-dd-ee-ff` (iPXE's hexhyp) or with colons, as the lookup attributes store
    MACs (`aa:bb:…`); None when it is not a MAC."""
    text = text.lower()
    return text.replace("-", ":") if _MAC.match(text) else None


class BootFiles:
    def __init__(self, ramdisk_dir: Path, kernel_params: str,
                 http_url: Callable[[], str], *, tokens: TokenSource | None = None,
                 limiter: RateLimiter | None = None) -> None:
        """`http_url` gives the base URL nodes reach discoverd at ("": the request's).
        `tokens` hands out callback tokens (None: scripts never carry one)."""
        self.ramdisk_dir = ramdisk_dir
        self.kernel_params = kernel_params
        self.http_url = http_url
        self.tokens = tokens
        self.limiter = limiter

    def routes(self) -> list[Route]:
        return [Route("/boot.ipxe", self.script, methods=["GET"]),
                Route("/boot/{mac}.ipxe", self.node_script, methods=["GET"]),
                Route(f"/pxe/{KERNEL}", self.kernel, methods=["GET"]),
                Route(f"/pxe/{INITRAMFS}", self.initramfs, methods=["GET"])]

    def _base(self, request: Request) -> str:
        return self.http_url() or str(request.base_url).rstrip("/")

    def _limited(self, request: Request) -> Response | None:
        if self.limiter is None:
            return None
        try:
            self.limiter.check(request.client.host if request.client else None)
        except TooManyRequests as exc:
            return PlainTextResponse(exc.message + "\n", status_code=429, headers=exc.headers)
        return None

    async def script(self, request: Request) -> Response:
        return self._limited(request) or PlainTextResponse(chain_script(self._base(request)))

    async def node_script(self, request: Request) -> Response:
        refused = self._limited(request)
        if refused is not None:
            return refused
        mac = mac_of(request.path_params["mac"])
        if mac is None:
            return PlainTextResponse("Not a MAC address: expected /boot/aa-bb-cc-dd-ee-ff.ipxe\n",
                                     status_code=404)
        token = None
        if self.tokens is not None:
            try:
                token = await self.tokens(mac, request.client.host if request.client else None)
            except DatabaseUnavailable as exc:
                LOG.warning("Boot script for MAC %s not served: %s", mac, exc)
                return PlainTextResponse(f"{exc}\n", status_code=503)
        return PlainTextResponse(ipxe_script(self._base(request), self.kernel_params, token),
                                 headers={"Cache-Control": "no-store"})

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
