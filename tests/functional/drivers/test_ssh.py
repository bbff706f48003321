"""pxe_ssh against a real sshd with a stand-in virsh that keeps domain state in files: where
libvirt cannot run (elsewhere test_ssh_libvirt.py runs the same behaviours against it)."""

from __future__ import annotations

import time
from typing import Any

import asyncssh
import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ssh import SshManagement, SshPower
from ironsight.common import config
from ironsight.common.exceptions import DriverError

pytestmark = pytest.mark.functional

CONF = config.load(overrides={"ssh": {"connect_timeout": "5", "command_timeout": "10"}})


def node(driver_info: dict[str, Any]) -> NodeContext:
    return NodeContext(uuid="node-1", driver="pxe_ssh", driver_info=driver_info)


async def test_power_state_of_a_shut_off_domain_is_off(sshd: Any, domain: Any) -> None:
    assert await SshPower(CONF).get_power_state(node(sshd.driver_info(domain.name))) == \
        states.POWER_OFF


async def test_power_on_starts_the_domain(sshd: Any, domain: Any) -> None:
    await SshPower(CONF).set_power_state(node(sshd.driver_info(domain.name)), states.POWER_ON,
                                         timeout=20)
    assert domain.state == "running"
    assert f"start {domain.name}" in domain.calls(sshd.virsh_dir)


async def test_power_state_of_a_running_domain_is_on(sshd: Any, domain: Any) -> None:
    (domain.path / "state").write_text("running\n")
    assert await SshPower(CONF).get_power_state(node(sshd.driver_info(domain.name))) == \
        states.POWER_ON


async def test_power_off_destroys_the_domain(sshd: Any, domain: Any) -> None:
    (domain.path / "state").write_text("running\n")
    await SshPower(CONF).set_power_state(node(sshd.driver_info(domain.name)),
                                         states.POWER_OFF, timeout=20)
    assert domain.state == "shut off"


async def test_power_on_of_a_running_domain_changes_nothing(sshd: Any, domain: Any) -> None:
    (domain.path / "state").write_text("running\n")
    await SshPower(CONF).set_power_state(node(sshd.driver_info(domain.name)), states.POWER_ON,
                                         timeout=20)
    assert f"start {domain.name}" not in domain.calls(sshd.virsh_dir)


async def test_reboot_of_a_running_domain_destroys_and_starts_it(sshd: Any,
                                                                 domain: Any) -> None:
    (domain.path / "state").write_text("running\n")
    await SshPower(CONF).set_power_state(node(sshd.driver_info(domain.name)), states.REBOOT,
                                         timeout=20)
    calls = domain.calls(sshd.virsh_dir)
    assert calls.index(f"destroy {domain.name}") < calls.index(f"start {domain.name}")
    assert domain.state == "running"


async def test_reboot_of_a_shut_off_domain_starts_it(sshd: Any, domain: Any) -> None:
    await SshPower(CONF).set_power_state(node(sshd.driver_info(domain.name)), states.REBOOT,
                                         timeout=20)
    assert domain.state == "running"
    assert f"destroy {domain.name}" not in domain.calls(sshd.virsh_dir)


async def test_boot_device_pxe_is_defined_in_the_domain(sshd: Any, domain: Any) -> None:
    await SshManagement(CONF).set_boot_device(node(sshd.driver_info(domain.name)), "pxe")
    assert "<boot dev=\"network\" />" in domain.xml
    assert "dev='hd'" not in domain.xml and "dev=\"hd\"" not in domain.xml


async def test_boot_device_is_read_back(sshd: Any, domain: Any) -> None:
    management = SshManagement(CONF)
    await management.set_boot_device(node(sshd.driver_info(domain.name)), "pxe")
    assert await management.get_boot_device(node(sshd.driver_info(domain.name))) == {
        "boot_device": "pxe", "persistent": True}


async def test_boot_device_disk_after_pxe(sshd: Any, domain: Any) -> None:
    management = SshManagement(CONF)
    info = node(sshd.driver_info(domain.name))
    await management.set_boot_device(info, "pxe")
    await management.set_boot_device(info, "disk", persistent=True)
    assert (await management.get_boot_device(info))["boot_device"] == "disk"


async def test_unknown_key_is_refused_with_a_clear_error(sshd: Any, domain: Any) -> None:
    info = sshd.driver_info(domain.name, ssh_key_contents=sshd.other_key)
    with pytest.raises(DriverError, match="permission denied") as raised:
        await SshPower(CONF).get_power_state(node(info))
    assert f"127.0.0.1:{sshd.port}" in str(raised.value)
    assert "PRIVATE KEY" not in str(raised.value)


async def test_unknown_vm_reports_virsh_error(sshd: Any) -> None:
    with pytest.raises(DriverError, match="failed to get domain 'no-such-vm'"):
        await SshPower(CONF).get_power_state(node(sshd.driver_info("no-such-vm")))


async def test_hypervisor_not_listening_is_a_driver_error(unused_tcp_port: int) -> None:
    """Whichever virsh is on the far side: nothing listens there."""
    key = asyncssh.generate_private_key("ssh-ed25519").export_private_key().decode()
    info = {"ssh_address": "127.0.0.1", "ssh_port": unused_tcp_port, "ssh_username": "root",
            "ssh_key_contents": key, "ssh_virt_type": "virsh", "ssh_vm_name": "vm"}
    start = time.monotonic()
    with pytest.raises(DriverError, match="cannot connect to hypervisor"):
        await SshPower(CONF).get_power_state(node(info))
    assert time.monotonic() - start < 5
