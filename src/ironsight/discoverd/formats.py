"""The two ramdisk report formats, validated and brought to one shape.

- ironic-python-agent's (`inventory` with cpu, memory, disks, interfaces, ...), the format of
  our own agent too (docs/agent.md);
- the legacy discoverd ramdisk's flat one (`cpus`, `cpu_arch`, `memory_mb`, `local_gb`,
  `interfaces: {name: {mac, ip}}`, `ipmi_address`, `boot_interface`; §1.4).

Processing works on the agent shape; a legacy report is converted, and its `local_gb` kept as
given (the legacy ramdisk already subtracted the partitioning GiB). Unknown fields are kept:
ramdisks send more than we read, and the stored data should show it.

IPA's optional collector keys (`lldp_raw`, `numa_topology`, `pci_devices`, `usb_devices`,
`dmi`, `data`) and `interfaces[].lldp` are checked for type and size, so that hooks and
rules can read them without guarding every access: an LLDP TLV is `[type 0-127, hex value
of at most 511 octets]` (the 9-bit TLV length), a list or map holds at most what a real
machine could send (the `MAX_*` bounds). Anything beyond is a 400 naming the field; the
body as a whole is bounded by `[introspection] max_callback_size` before this.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from ironsight.common.api.errors import format_validation_error
from ironsight.common.exceptions import Invalid

MAX_TLV_HEX = 2 * 511  # a TLV's 9-bit length: 511 octets, twice as many hex digits
MAX_TLVS = 512  # an LLDPDU fits one Ethernet frame: at most ~750 empty TLVs, never useful
MAX_LLDP_INTERFACES = 1024  # IPA sends every NIC; ironsight's agent at most 64
MAX_NUMA_NODES = 1024
MAX_CPUS = 65536
MAX_DEVICES = 4096  # PCI functions (SR-IOV VFs included), NICs, USB devices, DIMMs
MAX_SIBLINGS = 256
MAX_EXTRA_ROWS = 100_000  # python-hardware with benchmarks sends a few thousand
MAX_TEXT = 4096

Text = Annotated[StrictStr, Field(max_length=MAX_TEXT)]
Name = Annotated[StrictStr, Field(max_length=255)]
TlvType = Annotated[StrictInt, Field(ge=0, le=127)]
TlvValue = Annotated[StrictStr, Field(max_length=MAX_TLV_HEX, pattern=r"^[0-9a-fA-F]*$")]
Tlvs = Annotated[list[tuple[TlvType, TlvValue]], Field(max_length=MAX_TLVS)]
NumaNode = Annotated[StrictInt, Field(ge=-1, le=65535)]
Scalar = StrictStr | StrictInt | StrictFloat | StrictBool | None


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Interface(_Open):
    name: str | None = None
    mac_address: str
    ipv4_address: str | None = None
    ipv6_address: str | None = None
    has_carrier: StrictBool | None = None
    lldp: Tlvs | None = None


class NumaRam(_Open):
    numa_node: NumaNode
    size_kb: StrictInt = Field(ge=0)


class NumaCpu(_Open):
    cpu: StrictInt = Field(ge=0)
    numa_node: NumaNode
    thread_siblings: list[Annotated[StrictInt, Field(ge=0)]] = Field(max_length=MAX_SIBLINGS)


class NumaNic(_Open):
    name: Name
    numa_node: NumaNode


class NumaTopology(_Open):
    ram: list[NumaRam] = Field(default_factory=list, max_length=MAX_NUMA_NODES)
    cpus: list[NumaCpu] = Field(default_factory=list, max_length=MAX_CPUS)
    nics: list[NumaNic] = Field(default_factory=list, max_length=MAX_DEVICES)


class PciDevice(_Open):
    vendor_id: Annotated[StrictStr, Field(max_length=8)]
    product_id: Annotated[StrictStr, Field(max_length=8)]


class UsbDevice(_Open):
    product: Text | None = None
    vendor: Text | None = None
    handle: Text | None = None


class DmiMemory(_Open):
    devices: list[dict[str, Scalar | list[Text]]] = Field(default_factory=list,
                                                           max_length=MAX_DEVICES)


class Dmi(_Open):
    bios: dict[str, Scalar | list[Text]] = Field(default_factory=dict, max_length=256)
    cpu: list[dict[str, Scalar | list[Text]]] = Field(default_factory=list,
                                                      max_length=MAX_DEVICES)
    memory: DmiMemory = Field(default_factory=DmiMemory)


class Cpu(_Open):
    count: int | None = Field(default=None, ge=0)
    architecture: str | None = None
    flags: list[str] = Field(default_factory=list)


class Memory(_Open):
    total: int | None = Field(default=None, ge=0)
    physical_mb: int | None = Field(default=None, ge=0)


class Disk(_Open):
    name: str
    size: int = Field(ge=0)


class Boot(_Open):
    current_boot_mode: str | None = None
    pxe_interface: str | None = None


class Inventory(_Open):
    interfaces: list[Interface] = Field(min_length=1)
    cpu: Cpu = Field(default_factory=Cpu)
    memory: Memory = Field(default_factory=Memory)
    disks: list[Disk] = Field(default_factory=list)
    bmc_address: str | None = None
    bmc_v6address: str | None = None
    bmc_mac: Annotated[StrictStr, Field(max_length=64)] | None = None
    boot: Boot = Field(default_factory=Boot)


class AgentReport(_Open):
    inventory: Inventory
    root_disk: Disk | None = None
    boot_interface: str | None = None
    error: str | None = None
    lldp_raw: dict[Name, Tlvs] | None = Field(default=None, max_length=MAX_LLDP_INTERFACES)
    numa_topology: NumaTopology | None = None
    pci_devices: list[PciDevice] | None = Field(default=None, max_length=MAX_DEVICES)
    usb_devices: list[UsbDevice] | None = Field(default=None, max_length=MAX_DEVICES)
    dmi: Dmi | None = None
    data: list[Annotated[list[Scalar], Field(min_length=4, max_length=4)]] | None = Field(
        default=None, max_length=MAX_EXTRA_ROWS)


class LegacyInterface(_Open):
    mac: str
    ip: str | None = None


class LegacyReport(_Open):
    cpus: int | None = Field(default=None, ge=0)
    cpu_arch: str | None = None
    memory_mb: int | None = Field(default=None, ge=0)
    local_gb: int | None = Field(default=None, ge=0)
    interfaces: dict[str, LegacyInterface] = Field(default_factory=dict)
    ipmi_address: str | None = None
    boot_interface: str | None = None
    error: str | None = None


def is_legacy(raw: dict[str, Any]) -> bool:
    return "inventory" not in raw and ("cpus" in raw or isinstance(raw.get("interfaces"), dict)
                                       or "error" in raw)


def normalize(raw: Any) -> dict[str, Any]:
    """Validate a report (errors name the field) and return it in the agent shape."""
    if not isinstance(raw, dict):
        raise Invalid("The ramdisk data must be a JSON object")
    try:
        if is_legacy(raw):
            return _from_legacy(LegacyReport.model_validate(raw), raw)
        AgentReport.model_validate(raw)
    except ValidationError as exc:
        raise Invalid(format_validation_error(exc)) from None
    return copy.deepcopy(raw)


def _from_legacy(report: LegacyReport, raw: dict[str, Any]) -> dict[str, Any]:
    interfaces = [{"name": name, "mac_address": iface.mac, "ipv4_address": iface.ip}
                  for name, iface in report.interfaces.items()]
    data = {k: copy.deepcopy(v) for k, v in raw.items()
            if k not in ("cpus", "cpu_arch", "memory_mb", "interfaces", "ipmi_address")}
    data["inventory"] = {
        "interfaces": interfaces,
        "cpu": {"count": report.cpus, "architecture": report.cpu_arch, "flags": []},
        "memory": {"physical_mb": report.memory_mb},
        "disks": [],
        "bmc_address": report.ipmi_address,
        "boot": {"pxe_interface": None, "current_boot_mode": None},
    }
    data["legacy_format"] = True
    if report.local_gb is not None:
        data["local_gb"] = report.local_gb
    return data


def mac_from_boot_interface(value: str | None) -> str | None:
    """`01-aa-bb-cc-dd-ee-ff` (PXELINUX's BOOTIF) or a plain MAC, as a lowercase MAC."""
    if not value:
        return None
    value = value.strip().lower()
    if value.startswith("01-") and len(value) == 20:
        value = value[3:]
    return value.replace("-", ":")
