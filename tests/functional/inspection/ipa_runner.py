"""A stock ironic-python-agent daemon, run in this process on a described machine.

Run by the Python of IPA's own venv (never the project's):
`python -P ipa_runner.py SPEC.json`. SPEC holds the kernel command line the ramdisk was booted
with (`kernel_params`), the machine (`machine`), where the agent's own API listens
(`listen_port`), a work directory (`workdir`) and a few `[DEFAULT]` overrides (`conf`).

Everything IPA does runs as shipped: its configuration from the kernel command line, its
inspection collectors, its POST to `/v1/continue_inspection`, its lookup, its heartbeater and
its API server. Only what would read or change the test machine itself is replaced:
- the hardware manager: the inventory is the described machine's, not the host's (the stock
  GenericHardwareManager loads kernel modules, assembles md RAID and multipath, runs lshw and
  ipmitool as root); root-disk choice, inventory assembly and serialisation stay IPA's;
- the auto-TLS certificate goes to the work directory instead of /run/ironic-python-agent;
- LLDP collection (promiscuous mode on the host's NICs) returns nothing;
- the lock-down after a fatal error (`ip link set <every NIC> down`) only logs
  `IPA-RUNNER: lockdown` and exits 3.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

SPEC = json.loads(Path(sys.argv[1]).read_text())

# The kernel command line as the ramdisk was booted with it: IPA reads its defaults from it
# when `config` is imported, so it is in place first.
from ironic_python_agent import utils  # noqa: E402

utils._set_cached_params(dict(SPEC["kernel_params"]))

from ironic_python_agent import agent, config, errors, hardware, tls_utils  # noqa: E402,F401
from oslo_config import cfg  # noqa: E402
from oslo_log import log  # noqa: E402

CONF = cfg.CONF
LOG = log.getLogger("ipa_runner")
GIB = 1024**3


class MachineHardwareManager(hardware.GenericHardwareManager):
    """The stock generic manager, reading the described machine instead of the host."""

    HARDWARE_MANAGER_NAME = "generic_hardware_manager"

    def __init__(self, machine: dict) -> None:
        super().__init__()
        self.machine = machine

    def initialize(self) -> None:  # modprobe, mdadm, iscsistart, multipathd, udevadm
        pass

    def _get_system_lshw_dict(self) -> dict:
        return {}

    def list_network_interfaces(self) -> list:
        ips = self.machine["ipv4"]
        return [hardware.NetworkInterface(
            f"eth{i}", mac, ipv4_address=ips[i] if i < len(ips) else None, has_carrier=True,
            vendor="0x1af4", product="0x0001", driver="virtio_net")
            for i, mac in enumerate(self.machine["macs"])]

    def collect_lldp_data(self, interface_names=None) -> dict:
        return {}

    def get_cpus(self) -> hardware.CPU:
        return hardware.CPU(model_name="QEMU Virtual CPU", frequency="2400.000",
                            count=self.machine["cpus"], architecture=self.machine["arch"],
                            flags=["fpu", "vmx"], socket_count=1)

    def get_memory(self) -> hardware.Memory:
        mb = self.machine["memory_mb"]
        return hardware.Memory(total=mb * 1024 * 1024, physical_mb=mb)

    def list_block_devices(self, include_partitions=False, all_serial_and_wwn=False) -> list:
        letters = "abcdefghijklmnop"
        return [hardware.BlockDevice(
            name=f"/dev/vd{letters[i]}", model="QEMU HARDDISK", size=gb * GIB,
            rotational=False, serial=f"{self.machine['name']}-disk{i}", vendor="QEMU",
            tran=None) for i, gb in enumerate(self.machine["disks_gb"])]

    def list_block_devices_check_skip_list(self, node, include_partitions=False,
                                           all_serial_and_wwn=False) -> list:
        return self.list_block_devices(include_partitions, all_serial_and_wwn)

    def get_bmc_address(self) -> str:
        return self.machine.get("bmc_address") or "0.0.0.0"

    def get_bmc_v6address(self) -> str:
        return "::/0"

    def get_bmc_mac(self) -> str:
        raise errors.IncompatibleHardwareMethodError()

    def get_system_vendor_info(self) -> hardware.SystemVendorInfo:
        return hardware.SystemVendorInfo(
            product_name="Standard PC (Q35 + ICH9, 2009)",
            serial_number=f"{self.machine['name']}-serial", manufacturer="QEMU",
            firmware=hardware.SystemFirmware(vendor="EDK II", version="1.0",
                                             build_date="01/01/2024"))

    def get_boot_info(self) -> hardware.BootInfo:
        return hardware.BootInfo(current_boot_mode="uefi",
                                 pxe_interface=self.machine["macs"][0])

    def get_usb_devices(self) -> list:
        return []

    def generate_tls_certificate(self, ip_address):
        root = Path(SPEC["workdir"])
        cert, key = str(root / "agent.crt"), str(root / "agent.key")
        text = tls_utils._generate_tls_certificate(cert, key, "ipa-runner", ip_address)
        return tls_utils.TlsCertificate(text, cert, key)


def _lockdown(self) -> None:
    LOG.error("IPA-RUNNER: lockdown (the stock agent would now take every NIC down)")
    os._exit(3)


def main() -> None:
    log.register_options(CONF)
    CONF(args=[], project="ironic-python-agent", default_config_files=[])
    CONF.set_override("use_stderr", True)
    CONF.set_override("debug", True)
    CONF.set_override("listen_host", "127.0.0.1")
    CONF.set_override("listen_port", SPEC["listen_port"])
    CONF.set_override("advertise_host", "127.0.0.1")
    CONF.set_override("advertise_port", SPEC["listen_port"])
    for name, value in SPEC.get("conf", {}).items():
        CONF.set_override(name, value)
    log.setup(CONF, "ironic-python-agent")
    manager = MachineHardwareManager(SPEC["machine"])
    hardware._global_managers = [{"name": "MachineHardwareManager", "manager": manager,
                                  "support": hardware.HardwareSupport.GENERIC}]
    agent.IronicPythonAgent._lockdown_system = _lockdown
    agent.IronicPythonAgent.from_config(CONF).run()


if __name__ == "__main__":
    main()
