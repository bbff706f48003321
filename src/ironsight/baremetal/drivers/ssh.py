"""Power and boot device of virtual machines, through SSH to their hypervisor (`virsh`).

The successor of Ironic's `pxe_ssh` test driver: the conductor logs in to the hypervisor and
runs `virsh` there (found on the remote PATH, with `--connect ssh_libvirt_uri`). Each
operation opens one SSH connection, bounded by `[ssh] connect_timeout`, and every remote
command by `[ssh] command_timeout`. Host keys are checked against `[ssh] known_hosts`, or not
at all when it is empty (as Ironic did).

The boot device is the domain's `<os><boot dev=...>` element, changed by `virsh dumpxml
--inactive` and `virsh define`: it is always persistent and applies at the next start, so a
reboot is `destroy` + `start` (a `virsh reset` would keep the old boot order).
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncssh

from ironsight.baremetal import fields, states
from ironsight.baremetal.drivers.base import (
    BOOT_DEVICE_DISK,
    BOOT_DEVICE_PXE,
    BaseInterface,
    ManagementInterface,
    NodeContext,
    PowerInterface,
    as_port,
    as_secret,
    as_str,
    check_boot_device,
    require,
)
from ironsight.baremetal.drivers.power_sequence import change_power_state, scrub
from ironsight.common.config import Config
from ironsight.common.exceptions import DriverError, InvalidParameterValue, MissingParameterValue

LOG = logging.getLogger(__name__)

DEFAULT_SSH_PORT = 22
DEFAULT_LIBVIRT_URI = "qemu:///system"
SUPPORTED_VIRT_TYPES = ("virsh",)
# what Ironic's ssh driver knew; named in the error so an operator sees it is a choice
KNOWN_VIRT_TYPES = ("virsh", "vbox", "vmware", "parallels", "xenserver")

SSH_PROPERTIES: Mapping[str, str] = {
    "ssh_address": "Required. Host name or IP address of the hypervisor.",
    "ssh_port": f"Optional. SSH port of the hypervisor. Default: {DEFAULT_SSH_PORT}.",
    "ssh_username": "Required. User to log in as on the hypervisor.",
    "ssh_password": "Optional. Password of ssh_username. One of ssh_password and "
                    "ssh_key_contents is required. Secret.",
    "ssh_key_contents": "Optional. Private key of ssh_username (OpenSSH or PEM text, not "
                        "encrypted). One of ssh_password and ssh_key_contents is required. "
                        "Secret.",
    "ssh_virt_type": f"Required. Virtualization software; supported: "
                     f"{', '.join(SUPPORTED_VIRT_TYPES)}.",
    "ssh_vm_name": "Required. Name of the virtual machine (libvirt domain).",
    "ssh_libvirt_uri": f"Optional. libvirt URI for virsh --connect. "
                       f"Default: {DEFAULT_LIBVIRT_URI}.",
}
SSH_SECRET_PROPERTIES = frozenset({"ssh_password", "ssh_key_contents"})

# `virsh domstate` -> power state; every other known state means the domain is active
_OFF_DOMAIN_STATES = ("shut off", "crashed")
_ON_DOMAIN_STATES = ("running", "idle", "paused", "in shutdown", "pmsuspended", "blocked",
                     "dying")
_LIBVIRT_BOOT_DEVICES = {BOOT_DEVICE_PXE: "network", BOOT_DEVICE_DISK: "hd"}
_BOOT_DEVICES_FROM_LIBVIRT = {dev: device for device, dev in _LIBVIRT_BOOT_DEVICES.items()}
# keep the usual prefix of libvirt's QEMU namespace when a definition is written back
ET.register_namespace("qemu", "http://libvirt.org/schemas/domain/qemu/1.0")


@dataclass(frozen=True)
class SshInfo:
    """How to reach a VM's hypervisor. `str()` names it in messages, without secrets."""

    address: str
    port: int
    username: str
    vm_name: str
    libvirt_uri: str = DEFAULT_LIBVIRT_URI
    password: str | None = field(default=None, repr=False)
    key: asyncssh.SSHKey | None = field(default=None, repr=False)

    def __str__(self) -> str:
        return f"{self.username}@{self.address}:{self.port}"


def _required_str(info: Mapping[str, Any], key: str) -> str:
    require(info, key)
    return as_str(info, key) or ""


def parse_ssh_info(node: NodeContext) -> SshInfo:
    """Validate the ssh_* fields of driver_info; errors name the field, never a secret."""
    info = node.driver_info
    address = fields.host_address("driver_info", "ssh_address", require(info, "ssh_address"))
    username = _required_str(info, "ssh_username")
    virt_type = _required_str(info, "ssh_virt_type")
    if virt_type not in SUPPORTED_VIRT_TYPES:
        known = "known but not supported" if virt_type in KNOWN_VIRT_TYPES else "unknown"
        raise InvalidParameterValue(
            f"driver_info field 'ssh_virt_type': {virt_type!r} is {known}; supported: "
            f"{', '.join(SUPPORTED_VIRT_TYPES)}")
    vm_name = _required_str(info, "ssh_vm_name")
    password = as_secret(info, "ssh_password")
    key_text = as_secret(info, "ssh_key_contents")
    if password is None and key_text is None:
        raise MissingParameterValue(
            "driver_info needs 'ssh_password' or 'ssh_key_contents' (neither is set)")
    key = None
    if key_text is not None:
        try:
            key = asyncssh.import_private_key(key_text)
        except (asyncssh.KeyImportError, ValueError):
            raise InvalidParameterValue(
                "driver_info field 'ssh_key_contents' is not a usable private key "
                "(unencrypted OpenSSH or PEM format expected)") from None
    return SshInfo(address=address, port=as_port(info, "ssh_port", DEFAULT_SSH_PORT),
                   username=username, vm_name=vm_name,
                   libvirt_uri=as_str(info, "ssh_libvirt_uri") or DEFAULT_LIBVIRT_URI,
                   password=password, key=key)


def parse_domain_state(output: str) -> str:
    """`virsh domstate` output -> states.POWER_ON / POWER_OFF."""
    state = output.strip().splitlines()[0].strip() if output.strip() else ""
    if state in _OFF_DOMAIN_STATES:
        return states.POWER_OFF
    if state in _ON_DOMAIN_STATES:
        return states.POWER_ON
    raise DriverError(f"unexpected output of 'virsh domstate': {output.strip()!r}")


def boot_device_from_xml(domain_xml: str) -> dict[str, Any]:
    """The first `<os><boot dev=...>` of a domain definition, as our boot device."""
    root = _parse_xml(domain_xml)
    boot = root.find("./os/boot")
    device = _BOOT_DEVICES_FROM_LIBVIRT.get(boot.get("dev", "")) if boot is not None else None
    return {"boot_device": device, "persistent": True if device else None}


def set_boot_device_in_xml(domain_xml: str, device: str) -> str:
    """Make `device` the only boot device. Per-device `<boot order=...>` elements go too:
    libvirt refuses them next to `<os><boot>`."""
    root = _parse_xml(domain_xml)
    os_element = root.find("./os")
    if os_element is None:
        raise DriverError("the domain definition has no <os> element")
    for parent in root.iter():
        for boot in parent.findall("boot"):
            parent.remove(boot)
    ET.SubElement(os_element, "boot", {"dev": _LIBVIRT_BOOT_DEVICES[device]})
    return ET.tostring(root, encoding="unicode")


def _parse_xml(domain_xml: str) -> ET.Element:
    try:
        return ET.fromstring(domain_xml)
    except ET.ParseError as exc:
        raise DriverError(f"unreadable domain XML from 'virsh dumpxml': {exc}") from None


class _Virsh:
    """virsh commands on one hypervisor connection."""

    def __init__(self, conn: asyncssh.SSHClientConnection, info: SshInfo, conf: Config) -> None:
        self.conn = conn
        self.info = info
        self.conf = conf

    async def run(self, *args: str, stdin: str | None = None) -> str:
        base = f"LC_ALL=C virsh --connect {shlex.quote(self.info.libvirt_uri)}"
        command = " ".join([base, *(shlex.quote(arg) for arg in args)])
        what = f"virsh {' '.join(args[:1])} {self.info.vm_name}"
        timeout = self.conf.ssh.command_timeout
        LOG.debug("%s on %s", what, self.info)
        try:
            result = await self.conn.run(command, input=stdin, check=False, timeout=timeout)
        except asyncssh.TimeoutError:
            raise DriverError(f"'{what}' on {self.info} timed out after {timeout:g} s") from None
        except (OSError, asyncssh.Error) as exc:
            raise DriverError(f"'{what}' on {self.info} failed: {exc}") from None
        if result.exit_status != 0:
            detail = str(result.stderr or result.stdout or "").strip() or "no output"
            raise DriverError(f"'{what}' on {self.info} failed (exit status "
                              f"{result.exit_status}): {scrub(detail, self.info.password)}")
        return str(result.stdout or "")

    async def power_state(self) -> str:
        return parse_domain_state(await self.run("domstate", self.info.vm_name))

    async def power(self, action: str) -> None:
        """'on', 'off' or 'reset' (destroy + start, so that a new boot device applies)."""
        running = await self.power_state() == states.POWER_ON
        if running and action in ("off", "reset"):
            await self.run("destroy", self.info.vm_name)
        if (action == "on" and not running) or action == "reset":
            await self.run("start", self.info.vm_name)

    async def domain_xml(self) -> str:
        return await self.run("dumpxml", "--inactive", self.info.vm_name)

    async def define(self, domain_xml: str) -> None:
        await self.run("define", "/dev/stdin", stdin=domain_xml)


class _SshInterface(BaseInterface):
    properties = SSH_PROPERTIES
    secret_properties = SSH_SECRET_PROPERTIES

    def validate(self, node: NodeContext) -> None:
        parse_ssh_info(node)

    @asynccontextmanager
    async def _virsh(self, node: NodeContext) -> AsyncIterator[_Virsh]:
        info = parse_ssh_info(node)
        conn = await self._connect(info)
        try:
            yield _Virsh(conn, info, self.conf)
        finally:
            conn.close()

    async def _connect(self, info: SshInfo) -> asyncssh.SSHClientConnection:
        timeout = self.conf.ssh.connect_timeout
        known_hosts = self.conf.ssh.known_hosts or None
        try:
            # own bound as well: connect_timeout does not cover every stage in all versions
            async with asyncio.timeout(timeout + 1):
                return await asyncssh.connect(
                    info.address, info.port, username=info.username, password=info.password,
                    client_keys=[info.key] if info.key else None, known_hosts=known_hosts,
                    agent_path=None, config=None, connect_timeout=timeout)
        except TimeoutError:
            raise DriverError(f"cannot connect to hypervisor {info}: no answer within "
                              f"{timeout:g} s") from None
        except asyncssh.PermissionDenied:
            raise DriverError(f"cannot log in to hypervisor {info}: permission denied "
                              "(check ssh_username, ssh_password / ssh_key_contents)") from None
        except (OSError, asyncssh.Error) as exc:
            reason = scrub(str(exc) or type(exc).__name__, info.password)
            raise DriverError(f"cannot connect to hypervisor {info}: {reason}") from None


class SshPower(_SshInterface, PowerInterface):
    async def get_power_state(self, node: NodeContext) -> str:
        async with self._virsh(node) as virsh:
            return await virsh.power_state()

    async def set_power_state(self, node: NodeContext, target: str, timeout: float) -> None:
        async with self._virsh(node) as virsh:
            await change_power_state(f"hypervisor {virsh.info} (VM {virsh.info.vm_name})", target,
                                     timeout, virsh.power_state, virsh.power)


class SshManagement(_SshInterface, ManagementInterface):
    async def set_boot_device(self, node: NodeContext, device: str,
                              persistent: bool = False) -> None:
        """Always persistent: libvirt keeps the boot order in the domain definition."""
        check_boot_device(device)
        async with self._virsh(node) as virsh:
            await virsh.define(set_boot_device_in_xml(await virsh.domain_xml(), device))

    async def get_boot_device(self, node: NodeContext) -> dict[str, Any]:
        async with self._virsh(node) as virsh:
            return boot_device_from_xml(await virsh.domain_xml())
