"""The virtual media a conductor publishes for the nodes it boots from a CD.

One ISO of the inspection ramdisk is built per ramdisk version (ramdisk/iso.py) and shared by
every node. What differs per node, the kernel parameters with its callback token, lives only
in memory here and reaches the node as a block patched into the ISO while it is served
(api/vmedia.py): no file anywhere holds a token. Each attempt publishes the image under a
new random name (256 bits): the URL is the only credential a BMC needs (BMCs fetch media
without ours), and it dies with the attempt (`withdraw`).

A conductor that restarts forgets what it published: a BMC that fetches after that gets
404, the boot fails and the inspection ends at its `inspect wait` timeout, to be run again.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from ironsight.common.config import Config
from ironsight.common.exceptions import InvalidParameterValue, IronsightError
from ironsight.ramdisk import RamdiskError
from ironsight.ramdisk.iso import BootIso, build_iso, params_block

LOG = logging.getLogger(__name__)

PATH_PREFIX = "/vmedia"
NAME_BYTES = 32


@dataclass(frozen=True)
class Published:
    """A node's image: the digest of its name (constant-time checked), its parameter block."""

    name_digest: str
    block: bytes


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def base_url(conf: Config) -> str:
    """Where BMCs fetch media: `[redfish] vmedia_url`, else the API listener's address;
    InvalidParameterValue when that is a wildcard address, which no BMC can reach."""
    if conf.redfish.vmedia_url:
        return conf.redfish.vmedia_url.rstrip("/")
    host = conf.api.host
    try:
        unspecified = ipaddress.ip_address(host).is_unspecified
    except ValueError:
        unspecified = host in ("", "*")
    if unspecified:
        raise InvalidParameterValue(
            f"[redfish] vmedia_url is not set and the API listens on {host or 'every address'}:"
            " set [redfish] vmedia_url to the URL the BMCs reach this service at")
    scheme = "https" if conf.api.cert_file else "http"
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{conf.api.port}"


Builder = Callable[..., BootIso]


class VirtualMedia:
    def __init__(self, conf: Config, build: Builder = build_iso) -> None:
        """`build(ramdisk_dir, out_dir, log=...)`: ramdisk/iso.py's (tests pass their own)."""
        self.conf = conf
        self.build = build
        self._published: dict[str, Published] = {}
        self._iso: BootIso | None = None
        self._building = asyncio.Lock()

    def check(self) -> None:
        """What `validate` can know without building: where BMCs would fetch from."""
        base_url(self.conf)

    async def iso(self) -> BootIso:
        """The shared ISO, built (or found current) once per ramdisk version."""
        async with self._building:
            try:
                self._iso = await asyncio.to_thread(
                    self.build, self.conf.ramdisk_dir, self.conf.vmedia_dir, log=LOG.info)
            except RamdiskError as exc:
                raise IronsightError(f"Cannot build the inspection ISO: {exc}") from None
            return self._iso

    async def publish(self, uuid: str, kernel_params: str) -> str:
        """The URL of the node's image for this attempt (a previous one is withdrawn)."""
        try:
            block = params_block(kernel_params)
        except ValueError as exc:
            raise InvalidParameterValue(f"Node {uuid}: the ramdisk's kernel parameters "
                                        f"cannot be put on its CD: {exc}") from None
        await self.iso()
        name = secrets.token_urlsafe(NAME_BYTES)
        self._published[uuid] = Published(_digest(name), block)
        return f"{base_url(self.conf)}{PATH_PREFIX}/{uuid}/{name}.iso"

    def withdraw(self, uuid: str) -> bool:
        return self._published.pop(uuid, None) is not None

    def lookup(self, uuid: str, name: str) -> tuple[BootIso, bytes] | None:
        """The ISO and the node's block, when `name` is the node's current image."""
        found = self._published.get(uuid)
        if found is None or self._iso is None:
            return None
        if not hmac.compare_digest(found.name_digest, _digest(name)):
            return None
        return self._iso, found.block

    def published(self) -> int:
        return len(self._published)
