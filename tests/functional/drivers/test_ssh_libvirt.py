"""pxe_ssh against a real libvirt: libvirtd and sshd in a network namespace of the tests'
own (fixtures in conftest.py), host keys checked. What the driver did is read back from
libvirtd through its socket, not through the driver."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ssh import SshManagement, SshPower
from ironsight.common.exceptions import DriverError
from ironsight.lab import hypervisor

if TYPE_CHECKING:
    from .conftest import Libvirt

UNAVAILABLE = hypervisor.unavailable()

pytestmark = [pytest.mark.functional,
              pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")]


def node(driver_info: dict[str, Any]) -> NodeContext:
    return NodeContext(uuid="node-1", driver="pxe_ssh", driver_info=driver_info)


def power(libvirt: Libvirt) -> SshPower:
    return SshPower(libvirt.conf())


def management(libvirt: Libvirt) -> SshManagement:
    return SshManagement(libvirt.conf())


async def test_power_state_of_a_shut_off_domain_is_off(libvirt: Libvirt,
                                                       libvirt_domain: str) -> None:
    assert await power(libvirt).get_power_state(node(libvirt.driver_info(libvirt_domain))) \
        == states.POWER_OFF


async def test_power_on_starts_the_domain(libvirt: Libvirt, libvirt_domain: str) -> None:
    await power(libvirt).set_power_state(node(libvirt.driver_info(libvirt_domain)),
                                         states.POWER_ON, timeout=30)
    assert libvirt.hypervisor.state(libvirt_domain) == "running"


async def test_power_state_of_a_running_domain_is_on(libvirt: Libvirt,
                                                     libvirt_domain: str) -> None:
    libvirt.hypervisor.virsh("start", libvirt_domain)
    assert await power(libvirt).get_power_state(node(libvirt.driver_info(libvirt_domain))) \
        == states.POWER_ON


async def test_power_on_of_a_running_domain_changes_nothing(libvirt: Libvirt,
                                                            libvirt_domain: str) -> None:
    libvirt.hypervisor.virsh("start", libvirt_domain)
    before = libvirt.hypervisor.domain_id(libvirt_domain)
    await power(libvirt).set_power_state(node(libvirt.driver_info(libvirt_domain)),
                                         states.POWER_ON, timeout=30)
    assert libvirt.hypervisor.domain_id(libvirt_domain) == before


async def test_power_off_destroys_the_domain(libvirt: Libvirt, libvirt_domain: str) -> None:
    libvirt.hypervisor.virsh("start", libvirt_domain)
    await power(libvirt).set_power_state(node(libvirt.driver_info(libvirt_domain)),
                                         states.POWER_OFF, timeout=30)
    assert libvirt.hypervisor.state(libvirt_domain) == "shut off"


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def test_a_destroyed_domains_qemu_is_reaped_by_the_hypervisor(
        libvirt: Libvirt, libvirt_domain: str) -> None:
    """libvirtd daemonizes QEMU; the hypervisor adopts it and reaps it as soon as it ends,
    as a host's init does: `virsh destroy` waits until the pid is gone."""
    libvirt.hypervisor.virsh("start", libvirt_domain)
    pid_file = libvirt.hypervisor.dirs.root / "run" / "qemu" / f"{libvirt_domain}.pid"
    qemu = int(pid_file.read_text())
    assert _parent(qemu) == json.loads(libvirt.hypervisor.dirs.ready.read_text())["pid"]
    await power(libvirt).set_power_state(node(libvirt.driver_info(libvirt_domain)),
                                         states.POWER_OFF, timeout=30)
    assert not Path(f"/proc/{qemu}").exists()  # not even a zombie


async def test_reboot_of_a_running_domain_destroys_and_starts_it(libvirt: Libvirt,
                                                                 libvirt_domain: str) -> None:
    libvirt.hypervisor.virsh("start", libvirt_domain)
    before = libvirt.hypervisor.domain_id(libvirt_domain)
    await power(libvirt).set_power_state(node(libvirt.driver_info(libvirt_domain)),
                                         states.REBOOT, timeout=30)
    assert libvirt.hypervisor.state(libvirt_domain) == "running"
    assert libvirt.hypervisor.domain_id(libvirt_domain) != before


async def test_reboot_of_a_shut_off_domain_starts_it(libvirt: Libvirt,
                                                     libvirt_domain: str) -> None:
    await power(libvirt).set_power_state(node(libvirt.driver_info(libvirt_domain)),
                                         states.REBOOT, timeout=30)
    assert libvirt.hypervisor.state(libvirt_domain) == "running"


async def test_boot_device_pxe_is_written_into_the_domain_definition(
        libvirt: Libvirt, libvirt_domain: str) -> None:
    await management(libvirt).set_boot_device(node(libvirt.driver_info(libvirt_domain)), "pxe")
    xml = libvirt.hypervisor.dumpxml(libvirt_domain)
    assert "<boot dev='network'/>" in xml
    assert "dev='hd'" not in xml


async def test_boot_device_pxe_is_read_back(libvirt: Libvirt, libvirt_domain: str) -> None:
    info = node(libvirt.driver_info(libvirt_domain))
    await management(libvirt).set_boot_device(info, "pxe")
    assert await management(libvirt).get_boot_device(info) == {"boot_device": "pxe",
                                                               "persistent": True}


async def test_boot_device_disk_after_pxe(libvirt: Libvirt, libvirt_domain: str) -> None:
    info = node(libvirt.driver_info(libvirt_domain))
    await management(libvirt).set_boot_device(info, "pxe")
    await management(libvirt).set_boot_device(info, "disk", persistent=True)
    assert "<boot dev='hd'/>" in libvirt.hypervisor.dumpxml(libvirt_domain)
    assert (await management(libvirt).get_boot_device(info))["boot_device"] == "disk"


async def test_unknown_domain_is_a_driver_error_naming_it(libvirt: Libvirt) -> None:
    with pytest.raises(DriverError, match="failed to get domain 'no-such-vm'"):
        await power(libvirt).get_power_state(node(libvirt.driver_info("no-such-vm")))


async def test_wrong_key_is_permission_denied_without_the_key(libvirt: Libvirt,
                                                              libvirt_domain: str) -> None:
    info = libvirt.driver_info(libvirt_domain, ssh_key_contents=libvirt.other_key)
    with pytest.raises(DriverError, match="permission denied") as raised:
        await power(libvirt).get_power_state(node(info))
    assert "PRIVATE KEY" not in str(raised.value)
    assert not any(line in str(raised.value) for line in key_lines(libvirt.other_key))


async def test_changed_host_key_is_refused(libvirt: Libvirt, libvirt_domain: str) -> None:
    conf = libvirt.conf(known_hosts=libvirt.wrong_known_hosts)
    with pytest.raises(DriverError, match="cannot connect to hypervisor") as raised:
        await SshPower(conf).get_power_state(node(libvirt.driver_info(libvirt_domain)))
    assert "host key" in str(raised.value).lower()
    assert libvirt.hypervisor.state(libvirt_domain) == "shut off"


# --- secrets, with the real virsh on the far side ----------------------------------------------

def key_lines(key: str) -> set[str]:
    """The base64 lines of a private key: any of them in a text is a leak."""
    return {line for line in key.splitlines() if line and not line.startswith("-----")}


class CommandLines:
    """Every process's command line, sampled over and over while a block runs."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.rounds = 0
        self._stop = threading.Event()

    def _sample(self) -> None:
        while not self._stop.is_set():
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as fh:
                            self.seen.add(fh.read())
                    except OSError:  # ended meanwhile
                        pass
            self.rounds += 1

    @contextmanager
    def sampling(self) -> Iterator[CommandLines]:
        thread = threading.Thread(target=self._sample, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(10)

    def containing(self, secret: str) -> list[bytes]:
        return [line for line in self.seen if secret.encode() in line]


async def during(operation: Callable[[], Awaitable[None]]) -> tuple[str, CommandLines]:
    """Run `operation`: the DriverError's text ("" when none) and the command lines seen."""
    with CommandLines().sampling() as lines:
        try:
            await operation()
        except DriverError as exc:
            return str(exc), lines
        return "", lines


def logged(caplog: pytest.LogCaptureFixture) -> str:
    formatter = logging.Formatter("%(name)s %(message)s")
    return "\n".join(formatter.format(record) for record in caplog.records)


async def test_the_key_never_leaks_during_power_on_and_off(
        libvirt: Libvirt, libvirt_domain: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    info = node(libvirt.driver_info(libvirt_domain))

    async def on_and_off() -> None:
        await power(libvirt).set_power_state(info, states.POWER_ON, timeout=30)
        await power(libvirt).set_power_state(info, states.POWER_OFF, timeout=30)

    error, lines = await during(on_and_off)
    assert error == ""
    assert libvirt.hypervisor.state(libvirt_domain) == "shut off"
    assert lines.containing("virsh --connect")  # the sampling saw the far side's commands
    for secret in key_lines(libvirt.key):
        assert not lines.containing(secret)
        assert secret not in logged(caplog)


def password_only(libvirt: Libvirt, domain: str, password: str) -> dict[str, Any]:
    info = libvirt.driver_info(domain, ssh_password=password)
    del info["ssh_key_contents"]
    return info


async def test_power_on_and_off_with_a_password(libvirt: Libvirt, libvirt_domain: str) -> None:
    info = node(password_only(libvirt, libvirt_domain, libvirt.password))
    await power(libvirt).set_power_state(info, states.POWER_ON, timeout=30)
    assert libvirt.hypervisor.state(libvirt_domain) == "running"
    await power(libvirt).set_power_state(info, states.POWER_OFF, timeout=30)
    assert libvirt.hypervisor.state(libvirt_domain) == "shut off"


async def test_the_password_never_leaks_during_power_on_and_off(
        libvirt: Libvirt, libvirt_domain: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    info = node(password_only(libvirt, libvirt_domain, libvirt.password))

    async def on_and_off() -> None:
        for target in (states.POWER_ON, states.POWER_OFF):
            await power(libvirt).set_power_state(info, target, timeout=30)

    error, lines = await during(on_and_off)
    assert error == ""
    assert lines.containing("virsh --connect")  # the sampling saw the far side's commands
    assert not lines.containing(libvirt.password)
    assert libvirt.password not in logged(caplog)


async def test_the_password_never_leaks_when_the_hypervisor_refuses_it(
        libvirt: Libvirt, libvirt_domain: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    password = "pw-" + os.urandom(12).hex()  # not root's
    info = password_only(libvirt, libvirt_domain, password)

    async def on_and_off() -> None:
        for target in (states.POWER_ON, states.POWER_OFF):
            await power(libvirt).set_power_state(node(info), target, timeout=30)

    error, lines = await during(on_and_off)
    assert "permission denied" in error
    assert password not in error
    assert lines.rounds > 0
    assert not lines.containing(password)
    assert password not in logged(caplog)
