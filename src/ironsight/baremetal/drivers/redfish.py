"""The `redfish` hardware type's power and management interfaces, on sushy (the Redfish
client library Ironic uses), with Ironic's driver_info names.

sushy is synchronous: every call runs in a worker thread (`asyncio.to_thread`), so no BMC
stalls the event loop. Connections are kept per BMC and credentials (a Redfish session lives
as long as its connection), least recently used first out. Errors name the BMC (its address,
never a password) and carry the Redfish message the BMC gave. sushy logs request bodies at
DEBUG, which hold the session login's password: its loggers stay at INFO or above.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import sushy
from sushy import auth as sushy_auth
from sushy import exceptions as sushy_exc

from ironsight.baremetal import fields, states
from ironsight.baremetal.drivers.base import (
    BOOT_DEVICE_DISK,
    BOOT_DEVICE_PXE,
    ManagementInterface,
    NodeContext,
    PowerInterface,
    as_secret,
)
from ironsight.baremetal.drivers.power_sequence import change_power_state
from ironsight.common.config import Config
from ironsight.common.exceptions import (
    DriverError,
    InvalidParameterValue,
    MissingParameterValue,
)

LOG = logging.getLogger(__name__)


class _QuietSushy(logging.Filter):
    """sushy logs a BMC without Redfish sessions as an ERROR, though `auto` then goes on
    with basic authentication (and a real refusal reaches the operator as our error)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Authentication to the session service failed" not in record.getMessage()


for _name in ("sushy", "sushy.connector", "sushy.main", "sushy.auth"):
    # DEBUG would log the session login's body (its password) and every reply
    logging.getLogger(_name).setLevel(max(logging.getLogger(_name).level, logging.INFO))
logging.getLogger("sushy.connector").addFilter(_QuietSushy())

BOOT_DEVICE_CDROM = "cdrom"
BOOT_DEVICES = (BOOT_DEVICE_PXE, BOOT_DEVICE_DISK, BOOT_DEVICE_CDROM)
AUTH_TYPES = ("auto", "session", "basic")
BOOT_MODES = ("bios", "uefi")

_TO_REDFISH_DEVICE = {BOOT_DEVICE_PXE: sushy.BootSource.PXE,
                      BOOT_DEVICE_DISK: sushy.BootSource.HDD,
                      BOOT_DEVICE_CDROM: sushy.BootSource.CD}
_FROM_REDFISH_DEVICE = {v: k for k, v in _TO_REDFISH_DEVICE.items()}
_TO_REDFISH_MODE = {"bios": sushy.BootSourceOverrideMode.LEGACY,
                    "uefi": sushy.BootSourceOverrideMode.UEFI}
_FROM_REDFISH_MODE = {v: k for k, v in _TO_REDFISH_MODE.items()}
# a BMC still moving reports the state it is moving to (Ironic's map)
_POWER = {sushy.PowerState.ON: states.POWER_ON, sushy.PowerState.POWERING_ON: states.POWER_ON,
          sushy.PowerState.OFF: states.POWER_OFF,
          sushy.PowerState.POWERING_OFF: states.POWER_OFF}
_RESET = {"on": sushy.ResetType.ON, "off": sushy.ResetType.FORCE_OFF,
          "reset": sushy.ResetType.FORCE_RESTART}

REDFISH_PROPERTIES: Mapping[str, str] = {
    "redfish_address": "Required. The BMC's Redfish service: a URL (https:// when no scheme "
                       "is given), e.g. https://10.0.0.5 or https://bmc:8443.",
    "redfish_system_id": "Optional. The system's Redfish path, e.g. /redfish/v1/Systems/1; "
                         "may be left out where the BMC has one system.",
    "redfish_username": "Optional. The BMC user.",
    "redfish_password": "Optional. The BMC user's password.",
    "redfish_verify_ca": "Optional. Whether to check the BMC's TLS certificate (true, the "
                         "default, against the system's CAs; false; or the path of a CA "
                         "bundle).",
    "redfish_auth_type": "Optional. session, basic or auto (default: [redfish] auth_type).",
}
REDFISH_SECRET_PROPERTIES = frozenset({"redfish_password"})


@dataclass(frozen=True)
class RedfishInfo:
    """How to reach a node's BMC. `str()` names it in messages, without secrets."""

    address: str
    system_id: str | None
    username: str | None
    password: str | None = field(default=None, repr=False)
    verify: bool | str = True
    auth_type: str = "auto"

    def __str__(self) -> str:
        return f"Redfish BMC {self.address}"

    def key(self) -> tuple[Any, ...]:
        """What a cached connection is for (the password only as a digest)."""
        digest = hashlib.sha256((self.password or "").encode()).hexdigest()
        return (self.address, self.username, digest, self.verify, self.auth_type)


def _address(raw: str) -> str:
    url = raw if "://" in raw else f"https://{raw}"
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise InvalidParameterValue(
            f"driver_info field 'redfish_address': {raw!r} is not an http(s) URL or host "
            "name")
    try:
        parsed.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise InvalidParameterValue(
            f"driver_info field 'redfish_address': {raw!r} has an invalid port") from None
    return url.rstrip("/")


def _verify(info: Mapping[str, Any]) -> bool | str:
    raw = info.get("redfish_verify_ca", True)
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        word = raw.strip().lower()
        if word in fields.TRUE_STRINGS:
            return True
        if word in fields.FALSE_STRINGS:
            return False
        if os.path.isfile(raw) or os.path.isdir(raw):
            return raw
    raise InvalidParameterValue(
        f"driver_info field 'redfish_verify_ca': {raw!r} is neither a boolean nor the path "
        "of a CA bundle file or directory that exists")


def parse_redfish_info(node: NodeContext, conf: Config) -> RedfishInfo:
    """Validate the redfish_* fields of driver_info; errors name the field, never a secret."""
    info = node.driver_info
    raw = as_secret(info, "redfish_address")
    if raw is None:
        raise MissingParameterValue("driver_info is missing 'redfish_address' (the BMC's "
                                    "Redfish URL)")
    auth_type = as_secret(info, "redfish_auth_type") or conf.redfish.auth_type
    if auth_type not in AUTH_TYPES:
        raise InvalidParameterValue(
            f"driver_info field 'redfish_auth_type': {auth_type!r} is not one of "
            f"{', '.join(AUTH_TYPES)}")
    system_id = as_secret(info, "redfish_system_id")
    if system_id is not None and not system_id.startswith("/"):
        raise InvalidParameterValue(
            f"driver_info field 'redfish_system_id': {system_id!r} is not a Redfish path "
            "(it starts with /, e.g. /redfish/v1/Systems/1)")
    return RedfishInfo(address=_address(raw), system_id=system_id,
                       username=as_secret(info, "redfish_username"),
                       password=as_secret(info, "redfish_password"), verify=_verify(info),
                       auth_type=auth_type)


T = TypeVar("T")


class Connections:
    """sushy clients per BMC and credentials, least recently used first out; a Redfish
    session is reused for as long as its client is kept. Thread-safe: clients are made and
    used in worker threads."""

    def __init__(self, conf: Config) -> None:
        self.conf = conf
        self._clients: OrderedDict[tuple[Any, ...], sushy.Sushy] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, info: RedfishInfo) -> sushy.Sushy:
        key = info.key()
        with self._lock:
            client = self._clients.get(key)
            if client is not None:
                self._clients.move_to_end(key)
                return client
        client = self._connect(info)
        size = self.conf.redfish.connection_cache_size
        with self._lock:
            if size:
                self._clients[key] = client
                while len(self._clients) > size:
                    self._clients.popitem(last=False)
        return client

    def forget(self, info: RedfishInfo) -> None:
        with self._lock:
            self._clients.pop(info.key(), None)

    def _connect(self, info: RedfishInfo) -> sushy.Sushy:
        auth: sushy_auth.AuthBase
        if info.auth_type == "basic":
            auth = sushy_auth.BasicAuth(info.username, info.password)
        elif info.auth_type == "session":
            auth = sushy_auth.SessionAuth(info.username, info.password)
        else:
            auth = sushy_auth.SessionOrBasicAuth(info.username, info.password)
        return sushy.Sushy(info.address, verify=info.verify, auth=auth,
                           connect_timeout=self.conf.redfish.connect_timeout,
                           read_timeout=self.conf.redfish.read_timeout,
                           server_side_retries=0)


def _message(exc: Exception) -> str:
    """The BMC's own words where it gave some (Redfish @Message.ExtendedInfo), else sushy's."""
    text = str(exc)
    details = getattr(exc, "detail", None)
    if isinstance(details, str) and details and details not in text:
        text = f"{text} ({details})"
    return text


class _RedfishInterface:
    properties: Mapping[str, str] = REDFISH_PROPERTIES
    secret_properties: frozenset[str] = REDFISH_SECRET_PROPERTIES

    def __init__(self, conf: Config) -> None:
        self.conf = conf
        self.connections = Connections(conf)

    def validate(self, node: NodeContext) -> None:
        parse_redfish_info(node, self.conf)

    async def _call(self, node: NodeContext, what: str,
                    action: Callable[[Any], T]) -> T:
        """`action` on the node's system, in a worker thread; a failure is a DriverError
        naming the BMC, what was asked and the BMC's message. A connection that failed is
        dropped (a new session next time)."""
        info = parse_redfish_info(node, self.conf)

        def run() -> T:
            client = self.connections.get(info)
            return action(client.get_system(info.system_id))

        try:
            return await asyncio.to_thread(run)
        except sushy_exc.AccessError as exc:
            self.connections.forget(info)
            raise DriverError(f"{info}: {what} refused: the BMC did not accept the "
                              f"credentials of user {info.username!r} "
                              f"(HTTP {exc.status_code})") from None
        except sushy_exc.ResourceNotFoundError:
            raise DriverError(f"{info}: {what} failed: system "
                              f"{info.system_id or '(the only one)'} not found") from None
        except sushy_exc.ConnectionError as exc:
            self.connections.forget(info)
            raise DriverError(f"{info}: {what} failed: cannot reach the BMC "
                              f"({_connection_reason(exc)})") from None
        except sushy_exc.SushyError as exc:
            raise DriverError(f"{info}: {what} failed: {_message(exc)}") from None


def _connection_reason(exc: Exception) -> str:
    text = str(exc)
    for marker in ("CERTIFICATE_VERIFY_FAILED", "certificate verify failed"):
        if marker in text:
            return "its TLS certificate is not trusted (see redfish_verify_ca)"
    if "Connection refused" in text:
        return "connection refused"
    if "timed out" in text.lower():
        return "timed out"
    return text.split(". Error:")[-1].strip()[:300] or "no answer"


class RedfishPower(_RedfishInterface, PowerInterface):
    async def get_power_state(self, node: NodeContext) -> str:
        state = await self._call(node, "reading the power state", lambda s: s.power_state)
        found = _POWER.get(state)
        if found is None:
            raise DriverError(f"{parse_redfish_info(node, self.conf)} reports power state "
                              f"{state!r}, which is neither on nor off")
        return found

    async def set_power_state(self, node: NodeContext, target: str, timeout: float) -> None:
        info = parse_redfish_info(node, self.conf)

        async def get_state() -> str:
            return await self.get_power_state(node)

        async def send(action: str) -> None:
            await self._call(node, f"power {action}",
                             lambda s: s.reset_system(_RESET[action]))

        # the BMC is polled until it reports the target (a slow BMC is re-checked, as
        # Ironic's wait for a power state), within the conductor's timeout
        await change_power_state(str(info), target, timeout, get_state, send)


class RedfishManagement(_RedfishInterface, ManagementInterface):
    def supported_boot_devices(self, node: NodeContext) -> list[str]:
        return list(BOOT_DEVICES)

    async def set_boot_device(self, node: NodeContext, device: str,
                              persistent: bool = False) -> None:
        if device not in BOOT_DEVICES:
            raise InvalidParameterValue(
                f"unsupported boot device {device!r}; expected one of {', '.join(BOOT_DEVICES)}")
        enabled = (sushy.BootSourceOverrideEnabled.CONTINUOUS if persistent
                   else sushy.BootSourceOverrideEnabled.ONCE)
        await self._call(node, f"setting boot device {device}",
                         lambda s: s.set_system_boot_options(
                             target=_TO_REDFISH_DEVICE[device], enabled=enabled))

    async def get_boot_device(self, node: NodeContext) -> dict[str, Any]:
        def read(system: Any) -> dict[str, Any]:
            boot = system.boot
            enabled = boot.enabled
            return {"boot_device": _FROM_REDFISH_DEVICE.get(boot.target),
                    "persistent": None if enabled is None else
                    enabled == sushy.BootSourceOverrideEnabled.CONTINUOUS}

        return await self._call(node, "reading the boot device", read)

    async def get_boot_mode(self, node: NodeContext) -> str | None:
        mode = await self._call(node, "reading the boot mode", lambda s: s.boot.mode)
        return _FROM_REDFISH_MODE.get(mode)

    async def set_boot_mode(self, node: NodeContext, mode: str) -> None:
        if mode not in BOOT_MODES:
            raise InvalidParameterValue(
                f"unsupported boot mode {mode!r}; expected one of {', '.join(BOOT_MODES)}")
        await self._call(node, f"setting boot mode {mode}",
                         lambda s: s.set_system_boot_options(mode=_TO_REDFISH_MODE[mode]))

    async def set_secure_boot_state(self, node: NodeContext, enabled: bool) -> None:
        await self._call(node, f"{'enabling' if enabled else 'disabling'} Secure Boot",
                         lambda s: s.secure_boot.set_enabled(enabled))

    async def inject_nmi(self, node: NodeContext) -> None:
        await self._call(node, "injecting an NMI",
                         lambda s: s.reset_system(sushy.ResetType.NMI))

    async def get_virtual_media(self, node: NodeContext) -> list[dict[str, Any]]:
        def read(system: Any) -> list[dict[str, Any]]:
            found = []
            for manager in system.managers:
                for media in manager.virtual_media.get_members():
                    types = [str(t.value if hasattr(t, "value") else t).lower()
                             for t in media.media_types or ()]
                    found.append({"device_type": "cdrom" if "cd" in types or "dvd" in types
                                  else "floppy" if "floppy" in types else
                                  types[0] if types else None,
                                  "image_url": media.image, "inserted": bool(media.inserted),
                                  "id": media.identity})
            return found

        return await self._call(node, "reading the virtual media", read)
