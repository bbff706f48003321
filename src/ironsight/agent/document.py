"""The callback document, in ironic-python-agent's format (accepted by Ironic's
`/v1/continue_inspection`, ironic-inspector's `/v1/continue` and ironsight).

A failing collector never stops the agent; its failure is recorded and the rest
is still collected. Where it goes depends on whether the server can use the data
without it:
- `error` (IPA's field; a non-null value makes Ironic fail the inspection) is set
  when an essential collector (cpu, memory, disks, interfaces) crashed, or when no
  network interface was found: the node could neither be matched by MAC nor get
  ports. Its text follows IPA: "The following errors were encountered:\\n* ...".
- `warnings` (ours; ignored by Ironic, kept in plugin data) lists failures of the
  optional collectors (bmc, system_vendor, boot, hostname, and IPA's optional ones below)
  and skipped devices.

`root_disk` follows IPA's default guess (`utils.guess_root_disk`): disks sorted by
(size, name), the first one of at least 4 GiB; None when there is none.
`boot_interface` is `BOOTIF` as given on the kernel command line (`01-aa-bb-...`),
as IPA sends it; `inventory.boot.pxe_interface` holds the normalised MAC.

Next to the inventory, the keys of IPA's optional collectors, which ironsight always runs
(cheap sysfs reads) and lists in `configuration.collectors`: `dmi` (dmi-decode), `lldp_raw`
(lldp; with `ipa-collect-lldp=1`), `numa_topology`, `pci_devices`, `usb_devices`; and
`data` (extra-hardware) only when the kernel command line asks for it. A failing one is a
warning and its key is left out.
"""

from __future__ import annotations

from collections.abc import Callable

from . import (
    __version__,
    cmdline,
    cpu,
    disks,
    extra,
    lldp,
    memory,
    nics,
    numa,
    pci,
    smbios,
    system,
    usb,
)
from .sysfs import is_live

ESSENTIAL = ("cpu", "memory", "disks", "interfaces")
ROOT_DISK_MIN_SIZE = 4 * 1024**3
MANAGER = {"name": "ironsight_agent", "version": __version__}


class Report:
    """Collector failures, split as the module docstring describes."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def guard(self, name: str, collect: Callable[[], object], fallback: object) -> object:
        try:
            return collect()
        except Exception as exc:
            message = f"collector {name} failed: {type(exc).__name__}: {exc}"
            (self.errors if name in ESSENTIAL else self.warnings).append(message)
            return fallback

    def error(self) -> str | None:
        if not self.errors:
            return None
        return "The following errors were encountered:\n" + "\n".join(
            "* " + message for message in self.errors)


def build(root: str = "/", params: dict[str, str] | None = None,
          lldp_timeout: float | None = None) -> dict[str, object]:
    """`lldp_timeout` overrides the kernel command line's (`--lldp-timeout`)."""
    if params is None:
        params = cmdline.read_params(root)
    report = Report()
    inventory = _inventory(root, params, report)
    disk_list = inventory["disks"]
    optional, collectors = _optional(root, params, inventory, report, lldp_timeout)
    return {
        "inventory": inventory,
        "root_disk": guess_root_disk(disk_list if isinstance(disk_list, list) else []),
        "boot_interface": params.get("BOOTIF") or None,
        "configuration": {"collectors": collectors, "managers": [dict(MANAGER)]},
        **optional,
        "error": report.error(),
        "warnings": report.warnings,
    }


def _optional(root: str, params: dict[str, str], inventory: dict[str, object],
              report: Report, lldp_timeout: float | None
              ) -> tuple[dict[str, object], list[str]]:
    """IPA's optional collectors' keys, and the collectors' names for `configuration`."""
    found: dict[str, object] = {}
    collectors = ["default"]
    for key, name, collect in (
            ("dmi", "dmi-decode", lambda: smbios.summary(root)),
            ("numa_topology", "numa-topology", lambda: numa.collect(root)),
            ("pci_devices", "pci-devices", lambda: pci.collect(root)),
            ("usb_devices", "usb-devices", lambda: usb.collect(root))):
        collectors.append(name)
        value = report.guard(name, collect, None)
        if value is not None:
            found[key] = value
    _fill_firmware(inventory, found.get("dmi"))
    enabled, timeout = lldp.settings(params)
    if enabled:
        collectors.append("lldp")
        if lldp_timeout is not None:
            timeout = lldp.bounded(lldp_timeout)
        raw = report.guard("lldp", lambda: _lldp(root, inventory, report, timeout), None)
        if raw is not None:
            found["lldp_raw"] = raw
    if extra.wanted(params):
        collectors.append(extra.NAME)
        dmi = found.get("dmi")
        data = report.guard(extra.NAME, lambda: extra.collect(
            inventory, dmi if isinstance(dmi, dict) else None), None)
        if data is not None:
            found["data"] = data
    return found, collectors


def _lldp(root: str, inventory: dict[str, object], report: Report,
          timeout: float) -> dict[str, object]:
    """Listens on the NICs with carrier; each NIC's TLVs also go to its `lldp`, as IPA's."""
    listed = inventory["interfaces"]
    interfaces = [nic for nic in (listed if isinstance(listed, list) else [])
                  if isinstance(nic, dict)]
    names = [str(nic["name"]) for nic in interfaces if nic.get("has_carrier")]
    raw = lldp.collect(root, names, timeout, is_live(root), report.warnings)
    for nic in interfaces:
        nic["lldp"] = raw.get(str(nic["name"]), [])
    return dict(raw)


def _fill_firmware(inventory: dict[str, object], dmi: object) -> None:
    """`system_vendor.firmware` from SMBIOS type 0 where /sys/class/dmi/id said nothing."""
    vendor = inventory.get("system_vendor")
    bios = dmi.get("bios") if isinstance(dmi, dict) else None
    if not isinstance(vendor, dict) or not isinstance(bios, dict):
        return
    firmware = vendor.setdefault("firmware", {})
    if isinstance(firmware, dict):
        for key, field in (("vendor", "Vendor"), ("version", "Version"),
                           ("build_date", "Release Date")):
            if firmware.get(key) is None and bios.get(field):
                firmware[key] = bios[field]


def _inventory(root: str, params: dict[str, str], report: Report) -> dict[str, object]:
    interfaces = report.guard("interfaces", lambda: nics.collect(root, report.warnings), None)
    if interfaces is None:  # crashed: already recorded
        interfaces = []
    elif not interfaces:
        report.errors.append("no network interface found")
    inventory: dict[str, object] = {
        "cpu": report.guard("cpu", lambda: cpu.collect(root), None),
        "memory": report.guard("memory", lambda: memory.collect(root), None),
        "disks": report.guard("disks", lambda: disks.collect(root, report.warnings), []),
        "interfaces": interfaces,
    }
    bmc = report.guard("bmc", lambda: system.bmc(root), None)
    inventory.update(bmc if isinstance(bmc, dict) else system.parse_lan_print(""))
    inventory["system_vendor"] = report.guard(
        "system_vendor", lambda: system.system_vendor(root), None)
    inventory["boot"] = report.guard("boot", lambda: system.boot(root, params), None)
    inventory["hostname"] = report.guard("hostname", lambda: system.hostname(root), None)
    return inventory


def guess_root_disk(disk_list: list[object]) -> dict[str, object] | None:
    candidates = [disk for disk in disk_list
                  if isinstance(disk, dict) and _size(disk) >= ROOT_DISK_MIN_SIZE]
    if not candidates:
        return None
    return min(candidates, key=lambda disk: (_size(disk), str(disk.get("name"))))


def _size(disk: dict[str, object]) -> int:
    size = disk.get("size")
    return size if isinstance(size, int) else 0
