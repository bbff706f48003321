"""What changed in a machine's hardware between two introspections.

Pure: two stored introspection data documents in (the agent's format: `inventory`, plus the
optional `dmi` collector's per-DIMM list), a list of changes out, named as an operator looks
for them: a DIMM gone, a disk replaced, a NIC whose MAC changed. Parts are matched by what
identifies them physically (a disk by its serial or WWN, a DIMM by its slot, a NIC by its
interface name), so a disk that only moved to another name is "renamed", not "replaced".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

ADDED, REMOVED, CHANGED, REPLACED, RENAMED = "added", "removed", "changed", "replaced", "renamed"
RESIZED, MAC_CHANGED = "resized", "mac changed"
EMPTY_SLOT = "no module installed"  # dmidecode's Size of an empty DIMM slot


@dataclass(frozen=True)
class Change:
    part: str  # cpu, memory, dimm, disk, nic, system, bmc
    item: str  # which one: a field, a slot, a disk or interface name
    change: str  # added, removed, changed, replaced, renamed, resized, mac changed
    before: Any = None
    after: Any = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        if self.change == ADDED:
            return f"{self.part} {self.item} added: {_show(self.after)}"
        if self.change == REMOVED:
            return f"{self.part} {self.item} gone (was {_show(self.before)})"
        return f"{self.part} {self.item} {self.change}: {_show(self.before)} -> {_show(self.after)}"


def _show(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {v}" for k, v in value.items() if v not in (None, ""))
    return "-" if value is None else str(value)


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    """The hardware changes from `before` to `after` (stored introspection data, processed or
    raw), in a stable order: cpu, memory, DIMMs, disks, NICs, system, BMC."""
    old, new = _inventory(before), _inventory(after)
    return [*_cpu(old, new), *_memory(old, new), *_dimms(before, after),
            *_disks(old.get("disks"), new.get("disks")),
            *_nics(old.get("interfaces"), new.get("interfaces")),
            *_fields("system", _system(old), _system(new)),
            *_fields("bmc", _bmc(old), _bmc(new))]


def _inventory(data: Mapping[str, Any]) -> Mapping[str, Any]:
    inventory = data.get("inventory")
    return inventory if isinstance(inventory, Mapping) else {}


def _section(inventory: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = inventory.get(name)
    return value if isinstance(value, Mapping) else {}


def _fields(part: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    return [Change(part, key, CHANGED, old.get(key), new.get(key))
            for key in dict.fromkeys([*old, *new]) if old.get(key) != new.get(key)]


def _cpu(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    keys = ("count", "model_name", "architecture", "socket_count")
    pick = lambda inv: {k: _section(inv, "cpu").get(k) for k in keys}  # noqa: E731
    return _fields("cpu", pick(old), pick(new))


def _memory(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    pick = lambda inv: {"physical_mb": _section(inv, "memory").get("physical_mb")}  # noqa: E731
    return _fields("memory", pick(old), pick(new))


def _system(inventory: Mapping[str, Any]) -> dict[str, Any]:
    vendor = _section(inventory, "system_vendor")
    firmware = vendor.get("firmware")
    if not isinstance(firmware, Mapping):
        firmware = {}
    return {"manufacturer": vendor.get("manufacturer"),
            "product_name": vendor.get("product_name"),
            "serial_number": vendor.get("serial_number"),
            "firmware_version": firmware.get("version")}


def _bmc(inventory: Mapping[str, Any]) -> dict[str, Any]:
    return {"address": inventory.get("bmc_address"), "mac": inventory.get("bmc_mac")}


def _records(value: Any) -> list[Mapping[str, Any]]:
    return [r for r in value if isinstance(r, Mapping)] if isinstance(value, list) else []


# --- DIMMs (the `dmi` collector's memory devices, when the ramdisk ran it) --------------------


def _dimm_list(data: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    dmi = data.get("dmi")
    memory = dmi.get("memory") if isinstance(dmi, Mapping) else None
    devices = memory.get("devices") if isinstance(memory, Mapping) else None
    if not isinstance(devices, list):
        return None
    found: dict[str, dict[str, Any]] = {}
    for device in _records(devices):
        size = str(device.get("Size") or "")
        if not size or size.lower() == EMPTY_SLOT:
            continue
        slot = " ".join(str(device[k]) for k in ("Bank Locator", "Locator") if device.get(k))
        found[slot or f"#{len(found) + 1}"] = {
            "size": size, "serial": device.get("Serial Number"),
            "part_number": device.get("Part Number"), "manufacturer": device.get("Manufacturer")}
    return found


def _dimms(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    old, new = _dimm_list(before), _dimm_list(after)
    if old is None or new is None:  # not collected in one of them: nothing to compare
        return []
    changes = []
    for slot in dict.fromkeys([*old, *new]):
        if slot not in new:
            changes.append(Change("dimm", slot, REMOVED, old[slot]))
        elif slot not in old:
            changes.append(Change("dimm", slot, ADDED, None, new[slot]))
        elif old[slot] != new[slot]:
            changes.append(Change("dimm", slot, REPLACED, old[slot], new[slot]))
    return changes


# --- disks ------------------------------------------------------------------------------------


def _disk_identity(disk: Mapping[str, Any]) -> str | None:
    for key in ("serial", "wwn"):
        if disk.get(key):
            return f"{key}:{disk[key]}"
    return None


def _disk_doc(disk: Mapping[str, Any]) -> dict[str, Any]:
    return {k: disk.get(k) for k in ("name", "serial", "wwn", "size", "model")
            if disk.get(k) not in (None, "")}


def _disks(old_value: Any, new_value: Any) -> list[Change]:
    old, new = _records(old_value), _records(new_value)
    changes: list[Change] = []
    by_identity = {ident: d for d in new if (ident := _disk_identity(d))}
    matched_new: set[int] = set()
    unmatched_old = []
    for disk in old:
        ident = _disk_identity(disk)
        twin = by_identity.get(ident) if ident else None
        if twin is None:
            unmatched_old.append(disk)
            continue
        matched_new.add(id(twin))
        name = str(disk.get("name"))
        if disk.get("name") != twin.get("name"):
            changes.append(Change("disk", name, RENAMED, disk.get("name"), twin.get("name")))
        if disk.get("size") != twin.get("size"):
            changes.append(Change("disk", name, RESIZED, disk.get("size"), twin.get("size")))
    unmatched_new = [d for d in new if id(d) not in matched_new]
    new_by_name = {d.get("name"): d for d in unmatched_new}
    for disk in unmatched_old:
        twin = new_by_name.pop(disk.get("name"), None)
        if twin is not None and _disk_doc(twin) == _disk_doc(disk):
            continue  # no serial nor WWN to tell, and nothing else differs
        if twin is not None:
            changes.append(Change("disk", str(disk.get("name")), REPLACED, _disk_doc(disk),
                                  _disk_doc(twin)))
        else:
            changes.append(Change("disk", str(disk.get("name")), REMOVED, _disk_doc(disk)))
    for disk in new_by_name.values():
        changes.append(Change("disk", str(disk.get("name")), ADDED, None, _disk_doc(disk)))
    return changes


# --- NICs -------------------------------------------------------------------------------------


def _mac(nic: Mapping[str, Any]) -> str | None:
    mac = nic.get("mac_address")
    return str(mac).lower() if mac else None


def _by_name(nics: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {str(n.get("name") or _mac(n)): n for n in nics}


def _nics(old_value: Any, new_value: Any) -> list[Change]:
    old, new = _by_name(_records(old_value)), _by_name(_records(new_value))
    changes: list[Change] = []
    gone = {name: nic for name, nic in old.items() if name not in new}
    came = {name: nic for name, nic in new.items() if name not in old}
    for name in old.keys() & new.keys():
        if _mac(old[name]) != _mac(new[name]):
            changes.append(Change("nic", name, MAC_CHANGED, _mac(old[name]), _mac(new[name])))
    came_by_mac = {_mac(nic): name for name, nic in came.items()}
    for name, nic in gone.items():
        renamed = came_by_mac.get(_mac(nic))
        if renamed is not None:
            changes.append(Change("nic", name, RENAMED, name, renamed))
            del came[renamed]
        else:
            changes.append(Change("nic", name, REMOVED, _mac(nic)))
    changes += [Change("nic", name, ADDED, None, _mac(nic)) for name, nic in came.items()]
    order = list(dict.fromkeys([*old, *new]))
    return sorted(changes, key=lambda c: order.index(c.item))
