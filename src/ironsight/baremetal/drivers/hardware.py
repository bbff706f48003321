"""The hardware types, loaded by name through the `ironsight.hardware_types` entry points.

Deployment is out of scope, so every type reports a fake deploy interface. Inspection is
None for the real types here: in-band inspection (discoverd) is attached separately.
"""

from __future__ import annotations

from ironsight.baremetal.drivers.base import HardwareType
from ironsight.baremetal.drivers.fake import FakeInspect, FakeManagement, FakePower
from ironsight.baremetal.drivers.ipminative import NativeIpmiManagement, NativeIpmiPower
from ironsight.baremetal.drivers.ipmitool import IpmitoolManagement, IpmitoolPower
from ironsight.baremetal.drivers.ssh import SshManagement, SshPower


def _interface_names(power: str, inspect: str = "no-inspect") -> dict[str, str]:
    return {"power": power, "management": power, "boot": "pxe", "deploy": "fake",
            "inspect": inspect}


fake = HardwareType(
    name="fake",
    description="Fake power, management and inspection: instant, in memory, no hardware.",
    power=FakePower,
    management=FakeManagement,
    inspect=FakeInspect,
    interface_names={"power": "fake", "management": "fake", "boot": "fake", "deploy": "fake",
                     "inspect": "fake"},
)

pxe_ipmitool = HardwareType(
    name="pxe_ipmitool",
    description="PXE boot; power and boot device through IPMI with the ipmitool program.",
    power=IpmitoolPower,
    management=IpmitoolManagement,
    interface_names=_interface_names("ipmitool"),
)

pxe_ipminative = HardwareType(
    name="pxe_ipminative",
    description="PXE boot; power and boot device through IPMI with pyghmi (no ipmitool).",
    power=NativeIpmiPower,
    management=NativeIpmiManagement,
    interface_names=_interface_names("ipminative"),
)

pxe_ssh = HardwareType(
    name="pxe_ssh",
    description="PXE boot; power and boot device of virtual machines through SSH to their "
    "hypervisor (virsh).",
    power=SshPower,
    management=SshManagement,
    interface_names=_interface_names("ssh"),
)
