"""What booting nodes fetch from discoverd: boot scripts and configs, loaders, and the
ramdisk's kernel and initramfs (from `Config.ramdisk_dir`), over HTTP, and over TFTP for what
firmware and GRUB fetch (tftp.py serves `tftp_file`).

iPXE (HTTP): `/boot.ipxe` (what dnsmasq points iPXE at) is the same for every node: it only
chains to the node's own script, `/boot/<MAC>.ipxe`, the MAC being that of the NIC iPXE booted
from (`${netX/mac:hexhyp}`: on a machine with several NICs it need not be net0).

GRUB (TFTP; the Secure Boot chain: shim, then Debian's signed GRUB, which can fetch over TFTP
only): it reads `grub/grub.cfg` under its prefix `/grub`, which goes on to the node's own
`grub/<MAC>.cfg` (`$net_default_mac`: the NIC GRUB booted from), which loads `pxe/vmlinuz`
and `pxe/initramfs` over TFTP too.

A node's own script or config names the callback URL on the kernel command line and, when the
node is under introspection and the request comes from the address its DHCP lease holds, a
fresh callback token (`ironsight.callback_token=`, see tokens.py); otherwise the same without
one. `BOOTIF` tells the ramdisk which NIC is the PXE one. `initrd=initramfs` lets an EFI-stub
kernel find the initramfs iPXE loaded under that name (BIOS boots ignore it). A client that
asked over IPv6 gets the IPv6 URLs (`[pxe] http_url_ipv6`), so its ramdisk reports over IPv6.

Loaders (`[pxe] loader_file_paths`) are served by name: over TFTP at the root, over HTTP under
`/boot/efi/` (UEFI HTTP boot). Nothing else of the host's file system can be fetched.

Scripts and configs are rate-limited per source address (429 with Retry-After over HTTP, an
access violation over TFTP); loaders, kernel and initramfs are not (a node fetches each once
per boot, and they are the same for everyone).
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from ironsight.common.exceptions import DatabaseUnavailable
from ironsight.common.ratelimit import RateLimiter, TooManyRequests
from ironsight.discoverd import diagnosis
from ironsight.discoverd.callback_token import KERNEL_PARAM
from ironsight.discoverd.pxe.dnsmasq import EFI_PATH
from ironsight.discoverd.pxe.tftp import TftpFile, TftpRefused

LOG = logging.getLogger(__name__)

KERNEL = "vmlinuz"
INITRAMFS = "initramfs"
GRUB_DIR = "grub"  # the prefix Debian's signed network GRUB has built in: /grub
GRUB_CONFIG = f"{GRUB_DIR}/grub.cfg"
_MAC = re.compile(r"^[0-9a-f]{2}([-:][0-9a-f]{2}){5}$")

# (MAC, the requester's address) -> a callback token for that node, or None.
TokenSource = Callable[[str, str | None], Awaitable[str | None]]


class Seen(Protocol):
    """Told of each boot file served over HTTP (bootlog.BootLog.fetched): a timeline phase."""

    def __call__(self, phase: str, host: str | None, *, mac: str | None = None,
                 **details: Any) -> None: ...


def tftp_phase(filename: str) -> str:
    """The timeline phase of a file fetched over TFTP."""
    if filename == f"pxe/{KERNEL}":
        return diagnosis.KERNEL_FETCHED
    if filename == f"pxe/{INITRAMFS}":
        return diagnosis.RAMDISK_FETCHED
    if filename.startswith(f"{GRUB_DIR}/") and filename != GRUB_CONFIG:
        return diagnosis.SCRIPT_FETCHED
    return diagnosis.LOADER_FETCHED


def chain_script(http_url: str) -> str:
    """The script every node gets first: on to its own, named by the MAC it booted from."""
    return f"#!ipxe\nchain {http_url}/boot/${{netX/mac:hexhyp}}.ipxe\n"


def kernel_args(http_url: str, kernel_params: str, token: str | None, bootif: str) -> str:
    return " ".join(p for p in (
        f"ironsight.callback_url={http_url}/v1/continue",
        f"{KERNEL_PARAM}={token}" if token else "",
        f"BOOTIF={bootif}" if bootif else "", kernel_params.strip()) if p)


def ipxe_script(http_url: str, kernel_params: str, token: str | None = None) -> str:
    args = kernel_args(http_url, kernel_params, token, "01-${netX/mac:hexhyp}")
    return (f"#!ipxe\n"
            f"kernel {http_url}/pxe/{KERNEL} initrd={INITRAMFS} {args}\n"
            f"initrd --name {INITRAMFS} {http_url}/pxe/{INITRAMFS}\n"
            f"boot\n")


def grub_config() -> str:
    """GRUB's first config, the same for every node: on to the node's own."""
    return ("# ironsight: the discovery ramdisk, through the node's own config\n"
            "set timeout=0\n"
            "configfile $prefix/${net_default_mac}.cfg\n"
            "echo \"ironsight: no boot config for ${net_default_mac}; rebooting\"\n"
            "sleep 10\n"
            "reboot\n")


def grub_node_config(http_url: str, kernel_params: str, mac: str,
                     token: str | None = None) -> str:
    """The kernel and initramfs over TFTP from where GRUB was loaded (`$root`)."""
    args = kernel_args(http_url, kernel_params, token, "01-" + mac.replace(":", "-"))
    return ("set timeout=0\n"
            "echo \"ironsight: loading the discovery ramdisk over TFTP\"\n"
            f"linux /pxe/{KERNEL} {args}\n"
            f"initrd /pxe/{INITRAMFS}\n"
            "boot\n")


def mac_of(text: str) -> str | None:
    """`aa-bb-cc-dd-ee-ff` (iPXE's hexhyp) or with colons, as the lookup attributes store
    MACs (`aa:bb:…`); None when it is not a MAC."""
    text = text.lower()
    return text.replace("-", ":") if _MAC.match(text) else None


def is_ipv6(host: str | None) -> bool:
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        return False
    return isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None


class BootFiles:
    def __init__(self, ramdisk_dir: Path, kernel_params: str,
                 http_url: Callable[[], str], *, http_url_ipv6: Callable[[], str] = str,
                 loaders: Callable[[], Mapping[str, Path]] = dict,
                 tokens: TokenSource | None = None,
                 limiter: RateLimiter | None = None, seen: Seen | None = None) -> None:
        """`http_url` gives the base URL nodes reach discoverd at ("": the request's),
        `http_url_ipv6` the one IPv6 clients get ("": the same), `loaders` the served loader
        files by name. `tokens` hands out callback tokens (None: scripts never carry one). `seen`
        hears of each file served over HTTP."""
        self.ramdisk_dir = ramdisk_dir
        self.kernel_params = kernel_params
        self.http_url = http_url
        self.http_url_ipv6 = http_url_ipv6
        self.loaders = loaders
        self.tokens = tokens
        self.limiter = limiter
        self.seen = seen

    def _saw(self, request: Request, phase: str, mac: str | None = None,
             **details: Any) -> None:
        if self.seen is not None:
            self.seen(phase, request.client.host if request.client else None, mac=mac,
                      **details)

    def routes(self) -> list[Route]:
        return [Route("/boot.ipxe", self.script, methods=["GET"]),
                Route("/boot/{mac}.ipxe", self.node_script, methods=["GET"]),
                Route(EFI_PATH + "/{name}", self.loader, methods=["GET", "HEAD"]),
                Route(f"/pxe/{KERNEL}", self.kernel, methods=["GET"]),
                Route(f"/pxe/{INITRAMFS}", self.initramfs, methods=["GET"])]

    def base_for(self, host: str | None) -> str:
        """The base URL a client at `host` reaches discoverd at ("": not configured)."""
        return (is_ipv6(host) and self.http_url_ipv6()) or self.http_url()

    def _base(self, request: Request) -> str:
        host = request.client.host if request.client else None
        return self.base_for(host) or str(request.base_url).rstrip("/")

    def _limited(self, host: str | None) -> TooManyRequests | None:
        if self.limiter is None:
            return None
        try:
            self.limiter.check(host)
        except TooManyRequests as exc:
            return exc
        return None

    def _refused(self, request: Request) -> Response | None:
        exc = self._limited(request.client.host if request.client else None)
        if exc is None:
            return None
        return PlainTextResponse(exc.message + "\n", status_code=429, headers=exc.headers)

    async def _token(self, mac: str, host: str | None) -> str | None:
        """Raises DatabaseUnavailable (the script is not served: the node retries)."""
        return await self.tokens(mac, host) if self.tokens is not None else None

    async def script(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        self._saw(request, diagnosis.LOADER_FETCHED, file="boot.ipxe", via="http")
        return PlainTextResponse(chain_script(self._base(request)))

    async def node_script(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        mac = mac_of(request.path_params["mac"])
        if mac is None:
            return PlainTextResponse("Not a MAC address: expected /boot/aa-bb-cc-dd-ee-ff.ipxe\n",
                                     status_code=404)
        try:
            token = await self._token(mac, request.client.host if request.client else None)
        except DatabaseUnavailable as exc:
            LOG.warning("Boot script for MAC %s not served: %s", mac, exc)
            return PlainTextResponse(f"{exc}\n", status_code=503)
        self._saw(request, diagnosis.SCRIPT_FETCHED, mac, file=f"boot/{mac}.ipxe", via="http",
                  token=token is not None)
        return PlainTextResponse(ipxe_script(self._base(request), self.kernel_params, token),
                                 headers={"Cache-Control": "no-store"})

    async def loader(self, request: Request) -> Response:
        name = request.path_params["name"]
        path = self.loaders().get(name)
        if path is None:
            return PlainTextResponse(f"No loader named {name!r} is served ([pxe] "
                                     "loader_file_paths)\n", status_code=404)
        if request.method == "GET":
            self._saw(request, diagnosis.LOADER_FETCHED, file=name, via="http")
        return FileResponse(path, media_type="application/efi")

    async def kernel(self, request: Request) -> Response:
        return self._file(request, KERNEL, "kernel", diagnosis.KERNEL_FETCHED)

    async def initramfs(self, request: Request) -> Response:
        return self._file(request, INITRAMFS, "initramfs", diagnosis.RAMDISK_FETCHED)

    def _missing(self, name: str, what: str) -> str | None:
        path = self.ramdisk_dir / name
        if path.is_file():
            return None
        message = (f"The discovery ramdisk's {what} is missing: {path} does not exist. "
                   f"Build it with `ironsight ramdisk build` (or set [pxe] ramdisk_dir).")
        LOG.error("A node asked for %s: %s", name, message)
        return message

    def _file(self, request: Request, name: str, what: str, phase: str) -> Response:
        message = self._missing(name, what)
        if message is not None:
            return PlainTextResponse(message + "\n", status_code=404)
        path = self.ramdisk_dir / name
        try:
            size: int | None = path.stat().st_size
        except OSError:
            size = None
        self._saw(request, phase, file=f"pxe/{name}", via="http", bytes=size)
        return FileResponse(path, media_type="application/octet-stream")

    # --- TFTP -----------------------------------------------------------------------------

    async def tftp_file(self, name: str, host: str) -> TftpFile | None:
        """What a TFTP read of `name` from `host` gets (tftp.py's resolver)."""
        if name in (f"pxe/{KERNEL}", f"pxe/{INITRAMFS}"):
            base = name.removeprefix("pxe/")
            if self._missing(base, "kernel" if base == KERNEL else "initramfs"):
                return None
            return TftpFile(path=self.ramdisk_dir / base)
        if name == GRUB_CONFIG:
            self._tftp_limit(host)
            return TftpFile(data=grub_config().encode())
        if name.startswith(f"{GRUB_DIR}/") and name.endswith(".cfg"):
            mac = mac_of(name.removeprefix(f"{GRUB_DIR}/").removesuffix(".cfg"))
            return await self._grub_node(mac, host) if mac else None
        path = self.loaders().get(name)
        return TftpFile(path=path) if path is not None else None

    def _tftp_limit(self, host: str) -> None:
        exc = self._limited(host)
        if exc is not None:
            raise TftpRefused(exc.message)

    async def _grub_node(self, mac: str, host: str) -> TftpFile:
        self._tftp_limit(host)
        try:
            token = await self._token(mac, host)
        except DatabaseUnavailable as exc:
            LOG.warning("GRUB config for MAC %s not served: %s", mac, exc)
            raise TftpRefused(f"not now: {exc}") from None
        base = self.base_for(host)
        if not base:
            raise TftpRefused("discoverd has no URL for this client's address family "
                              "([pxe] http_url / http_url_ipv6)")
        return TftpFile(data=grub_node_config(base, self.kernel_params, mac, token).encode())
