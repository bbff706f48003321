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
  optional collectors (bmc, system_vendor, boot, hostname) and skipped devices.

`root_disk` follows IPA's default guess (`utils.guess_root_disk`): disks sorted by
(size, name), the first one of at least 4 GiB; None when there is none.
`boot_interface` is `BOOTIF` as given on the kernel command line (`01-aa-bb-...`),
as IPA sends it; `inventory.boot.pxe_interface` holds the normalised MAC.
"""

from __future__ import annotations

from collections.abc import Callable

from . import __version__, cmdline, cpu, disks, memory, nics, system

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


def build(root: str = "/", params: dict[str, str] | None = None) -> dict[str, object]:
    if params is None:
        params = cmdline.read_params(root)
    report = Report()
    inventory = _inventory(root, params, report)
    disk_list = inventory["disks"]
    return {
        "inventory": inventory,
        "root_disk": guess_root_disk(disk_list if isinstance(disk_list, list) else []),
        "boot_interface": params.get("BOOTIF") or None,
        "configuration": {"collectors": ["default"], "managers": [dict(MANAGER)]},
        "error": report.error(),
        "warnings": report.warnings,
    }


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
