"""The hardware types, loaded by name through the `ironsight.hardware_types` entry points.

Deployment is out of scope, so every type reports a fake deploy interface; only
`fake-hardware` (Ironic's name; `fake` is an alias, see loader.py) runs the provision verbs,
instantly, as Ironic's fake interfaces do; a fake-hardware node that sets its
console_interface or vendor_interface to `fake` gets Ironic's fake console and vendor
methods. Inspection is the design's DiscoverdInspect for the
PXE types; `fake-hardware` uses it too when `[discoverd] enabled` (so the whole flow can run
without hardware), else its instant fake inspection.
"""

from __future__ import annotations

from ironsight.baremetal.drivers.base import HardwareType, InspectInterface
from ironsight.baremetal.drivers.discoverd_inspect import DiscoverdInspect
from ironsight.baremetal.drivers.fake import (
    FakeConsole,
    FakeInspect,
    FakeManagement,
    FakePower,
    FakeVendor,
)
from ironsight.baremetal.drivers.ipminative import NativeIpmiManagement, NativeIpmiPower
from ironsight.baremetal.drivers.ipmitool import IpmitoolManagement, IpmitoolPower
from ironsight.baremetal.drivers.redfish import RedfishManagement, RedfishPower
from ironsight.baremetal.drivers.redfish_inspect import RedfishInspect
from ironsight.baremetal.drivers.redfish_vmedia import RedfishVirtualMediaBoot
from ironsight.baremetal.drivers.ssh import SshManagement, SshPower
from ironsight.baremetal.interfaces import LEGACY_STORED
from ironsight.common.config import Config


def _interface_names(power: str) -> dict[str, str]:
    return {"power": power, "management": power, "boot": "pxe", "deploy": "fake",
            "inspect": DiscoverdInspect.name, **LEGACY_STORED}


def _fake_inspect(conf: Config) -> InspectInterface:
    return DiscoverdInspect(conf) if conf.discoverd.enabled else FakeInspect(conf)


fake = HardwareType(
    name="fake-hardware",
    description="Fake power, management and inspection, and every provision verb: instant, "
    "in memory, no hardware (Ironic's fake-hardware).",
    power=FakePower,
    management=FakeManagement,
    inspect=_fake_inspect,
    interface_names={"power": "fake", "management": "fake", "boot": "fake", "deploy": "fake",
                     "inspect": "fake", "bios": "fake", "console": "fake",
                     "firmware": "fake", "network": "noop", "raid": "fake",
                     "rescue": "fake", "storage": "noop", "vendor": "fake"},
    # Ironic's fake-hardware defaults to its fake interfaces wherever it has one
    also_accepted={"bios": ("no-bios",), "console": ("no-console",),
                   "firmware": ("no-firmware",), "network": ("flat",), "raid": ("no-raid",),
                   "rescue": ("no-rescue",), "storage": ("fake",), "vendor": ("no-vendor",),
                   "inspect": ("no-inspect",)},
    provisions=True,
    consoles={"fake": FakeConsole},
    vendors={"fake": FakeVendor},
)

pxe_ipmitool = HardwareType(
    name="pxe_ipmitool",
    description="PXE boot; power and boot device through IPMI with the ipmitool program.",
    power=IpmitoolPower,
    management=IpmitoolManagement,
    inspect=DiscoverdInspect,
    interface_names=_interface_names("ipmitool"),
)

pxe_ipminative = HardwareType(
    name="pxe_ipminative",
    description="PXE boot; power and boot device through IPMI with pyghmi (no ipmitool).",
    power=NativeIpmiPower,
    management=NativeIpmiManagement,
    inspect=DiscoverdInspect,
    interface_names=_interface_names("ipminative"),
)

pxe_ssh = HardwareType(
    name="pxe_ssh",
    description="PXE boot; power and boot device of virtual machines through SSH to their "
    "hypervisor (virsh).",
    power=SshPower,
    management=SshManagement,
    inspect=DiscoverdInspect,
    interface_names=_interface_names("ssh"),
)

redfish = HardwareType(
    name="redfish",
    description="Power, boot device and boot mode through the BMC's Redfish service "
    "(sushy); the ramdisk boots over discoverd's PXE side (iPXE), or from the inspection "
    "ISO as a virtual CD (boot_interface = redfish-virtual-media).",
    power=RedfishPower,
    management=RedfishManagement,
    inspect=DiscoverdInspect,
    interface_names={**_interface_names("redfish"), "boot": "ipxe"},
    # inspect_interface = redfish: out of band, from the BMC's Redfish resources
    also_accepted={"boot": ("pxe", RedfishVirtualMediaBoot.name),
                   "inspect": (RedfishInspect.name,)},
    inspects={RedfishInspect.name: RedfishInspect},
    boots={RedfishVirtualMediaBoot.name: RedfishVirtualMediaBoot},
)
