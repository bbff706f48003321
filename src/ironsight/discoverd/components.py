"""A machine's hardware as components, and what changed in it between two introspections.

Pure (no I/O): stored introspection data in (ironic-python-agent's format, processed or raw:
`inventory`, plus the optional collectors' `dmi` and `pci_devices`), components or events
out. Re-inspecting unchanged hardware must give identical components, so every attribute
kept is a property of the part itself; what changes from one boot to the next is left out
(each reader's comment lists what). Parts are keyed by what identifies them physically, so
a disk that only moved to another name is "changed", not removed and added.

Types, in the order events and summaries follow: `cpu`, `memory`, `dimm`, `disk`, `nic`,
`pci`, `firmware`, `system`. A type whose source is absent from a document (`dmi` or
`pci_devices` not collected, no `inventory.cpu`...) is left out of `components()`, and
`events()` says nothing about it: "not collected" is not "all removed". `dimm`, `disk`,
`nic` and `pci` are collections (components come and go); `cpu`, `memory`, `firmware` and
`system` are singletons, only ever `changed` (the CPU complement is one component keyed
by model and count: a new model or count is that component changed, not one removed and
one added).

Severity of an event, the worst of its parts:
- `critical`, capacity lost: a DIMM, disk, CPU or PCI device removed; the memory, a DIMM's
  or a disk's size decreased; the CPU count or socket count decreased;
- `warning`: a NIC removed; a firmware version lower than before, or not comparable with
  it; an identity-affecting attribute changed (the `IDENTITY` fields: a system serial or
  product, a disk's model, a NIC's vendor/product ids, a CPU model...); a size no longer
  readable;
- `info`: additions, increases, firmware upgrades, and any other attribute change (a disk
  or NIC name, a driver, a BIOS date).

Firmware versions are ordered when both are dotted numbers (`2.9` < `2.10`, `1.2` =
`1.2.0`), or when they are the same text apart from their digit runs (`U30 v2.54` <
`U30 v2.62`, `1.0a3` < `1.0a12`): the runs compare as numbers, left to right. Anything else
(`1.0a` against `1.0b`, `A12` against `2.1`) is not comparable, hence `warning`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Attributes = dict[str, Any]
Components = dict[str, dict[str, Attributes]]

CPU, MEMORY, DIMM, DISK, NIC, PCI, FIRMWARE, SYSTEM = (
    "cpu", "memory", "dimm", "disk", "nic", "pci", "firmware", "system")
TYPES = (CPU, MEMORY, DIMM, DISK, NIC, PCI, FIRMWARE, SYSTEM)
COLLECTIONS = frozenset({DIMM, DISK, NIC, PCI})
ADDED, REMOVED, CHANGED = "added", "removed", "changed"
CRITICAL, WARNING, INFO = "critical", "warning", "info"
_RANK = {INFO: 0, WARNING: 1, CRITICAL: 2}

# A decrease of these is capacity lost (critical), an increase is info.
CAPACITY = frozenset({(MEMORY, "physical_mb"), (DIMM, "size_mb"), (DISK, "size"),
                      (CPU, "count"), (CPU, "socket_count")})
# A change of these means another part (or a mislabelled one): warning.
IDENTITY: Mapping[str, frozenset[str]] = {
    CPU: frozenset({"model", "architecture"}),
    DIMM: frozenset({"manufacturer", "part_number"}),
    DISK: frozenset({"model", "vendor", "serial", "wwn"}),
    NIC: frozenset({"vendor", "product"}),
    PCI: frozenset({"class", "subsystem_vendor_id", "subsystem_product_id"}),
    FIRMWARE: frozenset({"vendor"}),
    SYSTEM: frozenset({"manufacturer", "product_name", "serial_number", "sku"}),
}
NOUNS = {DIMM: "DIMM", DISK: "disk", NIC: "NIC", PCI: "PCI device"}
FIRMWARE_NAMES = {"bios": "BIOS", "bmc": "BMC"}

MINUS = "\u2212"  # sizes lost read with a true minus sign (U+2212), not a hyphen
# dmidecode's Size of an empty slot (3.x, 2.x); our agent also gives size_mb 0.
EMPTY_SLOT = frozenset({"no module installed", "not installed"})
# What firmware writes where the vendor wrote nothing (compared lower case): no value.
PLACEHOLDERS = frozenset({
    "", "none", "n/a", "na", "not specified", "not applicable", "not available", "unknown",
    "default string", "to be filled by o.e.m.", "to be filled by oem", "0", "00000000",
    "0000000000000000", "00:00:00:00:00:00"})
_DIMM_UNITS = {"kb": 1 / 1024, "mb": 1, "gb": 1024, "tb": 1024 ** 2}  # dmidecode's are binary
_DIMM_SIZE = re.compile(r"(\d+)\s*([kmgt]i?b)", re.IGNORECASE)
_DOTTED = re.compile(r"\d+(?:\.\d+)*")
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class ComponentEvent:
    """One component added, removed or changed between two introspections."""

    component: str  # the type: cpu, memory, dimm, disk, nic, pci, firmware, system
    key: str  # its identity within the type (for a changed CPU, the earlier one's)
    change: str  # added, removed, changed
    severity: str  # critical, warning, info (the module docstring's policy)
    before: Attributes | None = field(default=None, hash=False)
    after: Attributes | None = field(default=None, hash=False)
    fields: tuple[str, ...] = ()  # for `changed`: the attributes that differ
    message: str = ""
    # For a collection type: how many of its components each document had, so `summary()`
    # can say "16 → 15 DIMMs" from the events alone.
    counts: tuple[int, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"component": self.component, "key": self.key, "change": self.change,
                "severity": self.severity,
                "before": dict(self.before) if self.before is not None else None,
                "after": dict(self.after) if self.after is not None else None,
                "fields": list(self.fields), "message": self.message,
                "counts": list(self.counts) if self.counts is not None else None}


# --- components -------------------------------------------------------------------------------


def components(data: Mapping[str, Any]) -> Components:
    """Every component of one stored introspection data document: {type: {key: attributes}}.
    Types whose source the document lacks are left out (see the module docstring);
    attributes without a value are left out too."""
    inventory = _mapping(data.get("inventory"))
    found: Components = {}
    for kind, value in ((CPU, _cpu(inventory)), (MEMORY, _memory(inventory)),
                        (DIMM, _dimms(data)), (DISK, _disks(data, inventory)),
                        (NIC, _nics(inventory)), (PCI, _pci(data)),
                        (FIRMWARE, _firmware(inventory)), (SYSTEM, _system(data, inventory))):
        if value is not None:
            found[kind] = value
    return found


def _cpu(inventory: Mapping[str, Any]) -> dict[str, Attributes] | None:
    """Volatile, left out: `frequency` (the agents fall back to /proc/cpuinfo's `cpu MHz`,
    the current clock) and `flags` (they follow the kernel, microcode and BIOS settings)."""
    cpu = _mapping(inventory.get("cpu"))
    model, count = _text(cpu.get("model_name")), _int(cpu.get("count"))
    if model is None and count is None:
        return None
    key = " ".join(p for p in (model, f"x{count}" if count is not None else None) if p)
    return {key: _clean({"model": model, "count": count,
                         "architecture": _text(cpu.get("architecture")),
                         "socket_count": _int(cpu.get("socket_count"))})}


def _memory(inventory: Mapping[str, Any]) -> dict[str, Attributes] | None:
    """Volatile, left out: `total` (the kernel's usable bytes: kernel version and
    reservations move it)."""
    physical = _int(_mapping(inventory.get("memory")).get("physical_mb"))
    return {"total": {"physical_mb": physical}} if physical is not None else None


def _dimms(data: Mapping[str, Any]) -> dict[str, Attributes] | None:
    """IPA's `dmi` collector's memory devices (dmidecode's names; ours adds `size_mb`).
    No devices at all, not even empty slots, is SMBIOS not readable (a VM, no root), not a
    machine without memory: not collected. Left out: `Configured Memory Speed`,
    `Configured Voltage` (BIOS settings), `Handle`s."""
    devices = _mapping(_mapping(data.get("dmi")).get("memory")).get("devices")
    if not isinstance(devices, list) or not devices:
        return None
    found = []
    for index, device in enumerate(_records(devices)):
        size = _dimm_size(device)
        if size is None:
            continue
        slot = " ".join(t for k in ("Bank Locator", "Locator") if (t := _text(device.get(k))))
        serial = _text(device.get("Serial Number"))
        key = " ".join(p for p in (slot, f"serial:{serial}" if serial else None) if p)
        found.append((key or f"#{index + 1}", f"#{index + 1}", _clean({
            "size_mb": size, "part_number": _text(device.get("Part Number")),
            "manufacturer": _text(device.get("Manufacturer")),
            "speed": _text(device.get("Speed"))})))
    return _unique(found)


def _dimm_size(device: Mapping[str, Any]) -> int | str | None:
    """MiB (the text when it says something else); None for an empty slot."""
    size_mb = _int(device.get("size_mb"))
    if size_mb is not None:
        return size_mb or None
    text = device.get("Size")
    text = str(text).strip() if text is not None else ""
    if not text or text.lower() in EMPTY_SLOT:
        return None
    match = _DIMM_SIZE.fullmatch(text)
    if match is None:
        return text
    return int(int(match[1]) * _DIMM_UNITS[match[2].lower().replace("i", "")])


def _disks(data: Mapping[str, Any], inventory: Mapping[str, Any]
           ) -> dict[str, Attributes] | None:
    """By serial, else WWN, else name. Volatile, left out: `hctl` and `by_path` (probe
    order), `uuid`/`partuuid` (what is written on the disk), `wwn_with_extension`,
    `wwn_vendor_extension`, `logical_sectors`, `physical_sectors`, `tran` (agent-dependent
    or formatting, not the part)."""
    disks = inventory.get("disks")
    if data.get("legacy_format") or not isinstance(disks, list):  # legacy: never collected
        return None
    found = []
    for index, disk in enumerate(_records(disks)):
        serial, wwn, name = (_text(disk.get(k)) for k in ("serial", "wwn", "name"))
        key = (f"serial:{serial}" if serial else f"wwn:{wwn}" if wwn
               else f"name:{name}" if name else f"#{index + 1}")
        rotational = disk.get("rotational")
        found.append((key, name or f"#{index + 1}", _clean({
            "name": name, "size": _int(disk.get("size")), "model": _text(disk.get("model")),
            "vendor": _text(disk.get("vendor")),
            "rotational": rotational if isinstance(rotational, bool) else None,
            "wwn": wwn, "serial": serial})))
    return _unique(found)


def _nics(inventory: Mapping[str, Any]) -> dict[str, Attributes] | None:
    """By MAC, lower case. Volatile, left out: `ipv4_address`, `ipv6_address`,
    `has_carrier`, `lldp`, `speed_mbps` (the negotiated link speed, None when down),
    `client_id` (derived from the MAC), `biosdevname`, `pci_address` (bus numbers move when
    cards are added; the `pci` components follow the slots)."""
    interfaces = inventory.get("interfaces")
    if not isinstance(interfaces, list):
        return None
    found = []
    for nic in _records(interfaces):
        mac = _text(nic.get("mac_address"))
        if mac is None:
            continue
        name = _text(nic.get("name"))
        found.append((mac.lower(), name or "", _clean({
            "name": name, "vendor": _text(nic.get("vendor")),
            "product": _text(nic.get("product")), "driver": _text(nic.get("driver"))})))
    return _unique(found)


def _pci(data: Mapping[str, Any]) -> dict[str, Attributes] | None:
    """IPA's `pci_devices`, by address and vendor:product ids. Volatile, left out:
    `numa_node_id`/`numa_node` (BIOS NUMA settings) and `driver` (the ramdisk's kernel)."""
    devices = data.get("pci_devices")
    if not isinstance(devices, list):
        return None
    found = []
    for index, device in enumerate(_records(devices)):
        vendor, product = _hex_id(device.get("vendor_id")), _hex_id(device.get("product_id"))
        if vendor is None or product is None:
            continue
        address = _text(device.get("bus")) or _text(device.get("address"))
        key = " ".join(p for p in (address.lower() if address else None,
                                   f"{vendor}:{product}") if p)
        found.append((key, f"#{index + 1}", _clean({
            "class": _hex_id(device.get("class")), "revision": _hex_id(device.get("revision")),
            "subsystem_vendor_id": _hex_id(device.get("subsystem_vendor_id")),
            "subsystem_product_id": _hex_id(device.get("subsystem_product_id")
                                            or device.get("subsystem_device_id"))})))
    return _unique(found)


def _firmware(inventory: Mapping[str, Any]) -> dict[str, Attributes] | None:
    """`bios` from `system_vendor.firmware` (the agent fills it from SMBIOS type 0 when
    sysfs is silent); `bmc` from `bmc_firmware_version` when an agent reports one (ours does
    not: `ipmitool lan print` has no version)."""
    found: dict[str, Attributes] = {}
    bios = _mapping(_mapping(inventory.get("system_vendor")).get("firmware"))
    attrs = _clean({"version": _text(bios.get("version")), "vendor": _text(bios.get("vendor")),
                    "date": _text(bios.get("build_date"))})
    if attrs:
        found["bios"] = attrs
    bmc = _text(inventory.get("bmc_firmware_version"))
    if bmc is not None:
        found["bmc"] = {"version": bmc}
    return found or None


def _system(data: Mapping[str, Any], inventory: Mapping[str, Any]
            ) -> dict[str, Attributes] | None:
    """Left out: `uuid` (not asked of this model) and the BMC's address (DHCP) and MAC (only
    there when ipmitool answered); `hostname` and `boot` are not hardware."""
    vendor = inventory.get("system_vendor")
    if not isinstance(vendor, Mapping):
        return None
    dmi_system = _mapping(_mapping(data.get("dmi")).get("system"))
    attrs = _clean({"manufacturer": _text(vendor.get("manufacturer")),
                    "product_name": _text(vendor.get("product_name")),
                    "serial_number": _text(vendor.get("serial_number")),
                    "sku": _text(vendor.get("sku")) or _text(dmi_system.get("SKU Number"))})
    return {"system": attrs} if attrs else None


def _unique(found: Iterable[tuple[str, str, Attributes]]) -> dict[str, Attributes]:
    """{key: attributes}; keys two parts share (multipath disks, VFs) get their tag added."""
    entries = list(found)
    seen: dict[str, int] = {}
    for key, _, _ in entries:
        seen[key] = seen.get(key, 0) + 1
    return {(key if seen[key] == 1 else f"{key} {tag}".strip()): attrs
            for key, tag, attrs in entries}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _records(value: list[Any]) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)]


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool | dict | list):
        return None
    text = str(value).strip()
    return None if text.lower() in PLACEHOLDERS else text


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _hex_id(value: Any) -> str | None:
    """`0x10DE` and `10de` alike: IPA strips the prefix, sysfs keeps it."""
    text = _text(value)
    return text.lower().removeprefix("0x") if text else None


def _clean(attrs: Attributes) -> Attributes:
    return {k: v for k, v in attrs.items() if v is not None}


# --- events -----------------------------------------------------------------------------------


def events(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[ComponentEvent]:
    """What changed from `before` to `after` (two stored introspection data documents), by
    type in `TYPES` order, then by key (digit runs as numbers). Same hardware: []."""
    old, new = components(before), components(after)
    found: list[ComponentEvent] = []
    for kind in TYPES:
        if kind in old and kind in new:
            found += _compare(kind, old[kind], new[kind])
    return found


def _compare(kind: str, old: dict[str, Attributes], new: dict[str, Attributes]
             ) -> list[ComponentEvent]:
    if kind in COLLECTIONS:
        counts = (len(old), len(new))
        found = []
        for key in sorted(old.keys() | new.keys(), key=_natural):
            if key not in new:
                found.append(_event(kind, key, REMOVED, old[key], None, counts))
            elif key not in old:
                found.append(_event(kind, key, ADDED, None, new[key], counts))
            elif old[key] != new[key]:
                found.append(_event(kind, key, CHANGED, old[key], new[key], counts))
        return found
    pairs = [(key, key) for key in sorted(old.keys() & new.keys(), key=_natural)]
    if kind == CPU and not pairs and len(old) == len(new) == 1:
        pairs = [(next(iter(old)), next(iter(new)))]  # the CPUs, whatever model and count
    return [_event(kind, a, CHANGED, old[a], new[b], None)
            for a, b in pairs if old[a] != new[b]]


def _event(kind: str, key: str, change: str, before: Attributes | None,
           after: Attributes | None, counts: tuple[int, int] | None) -> ComponentEvent:
    fields: tuple[str, ...] = ()
    if before is not None and after is not None:
        fields = tuple(f for f in dict.fromkeys([*before, *after])
                       if before.get(f) != after.get(f))
    return ComponentEvent(kind, key, change, _severity(kind, change, before, after, fields),
                          before, after, fields,
                          _message(kind, key, change, before or {}, after or {}, fields),
                          counts)


def _severity(kind: str, change: str, before: Attributes | None, after: Attributes | None,
              fields: tuple[str, ...]) -> str:
    if change == ADDED:
        return INFO
    if change == REMOVED:
        return WARNING if kind == NIC else CRITICAL
    old, new = before or {}, after or {}
    return max((_field_severity(kind, f, old.get(f), new.get(f)) for f in fields),
               key=_RANK.__getitem__, default=INFO)


def _field_severity(kind: str, name: str, old: Any, new: Any) -> str:
    if (kind, name) in CAPACITY:
        if isinstance(old, int) and isinstance(new, int):
            return CRITICAL if new < old else INFO
        return WARNING  # a size no longer (or not yet) readable as a number
    if kind == FIRMWARE and name == "version":
        order = version_order(old, new)
        return WARNING if order is None or order < 0 else INFO
    return WARNING if name in IDENTITY.get(kind, ()) else INFO


def version_order(old: Any, new: Any) -> int | None:
    """-1 (a downgrade), 0 or 1 (an upgrade) from `old` to `new`; None when the two are not
    comparable (the module docstring's rule)."""
    if old is None or new is None:
        return None
    a, b = str(old).strip().lower(), str(new).strip().lower()
    if _DOTTED.fullmatch(a) and _DOTTED.fullmatch(b):
        x, y = [int(p) for p in a.split(".")], [int(p) for p in b.split(".")]
        width = max(len(x), len(y))
        x, y = x + [0] * (width - len(x)), y + [0] * (width - len(y))
    elif _DIGITS.sub("#", a) == _DIGITS.sub("#", b) and _DIGITS.search(a):
        x, y = [int(p) for p in _DIGITS.findall(a)], [int(p) for p in _DIGITS.findall(b)]
    else:
        return None
    return (y > x) - (y < x)


def _natural(key: str) -> tuple[list[tuple[int, str]], str]:
    """`A2` before `A10`: digit runs compare as numbers (then the text: `A02` vs `A2`)."""
    return [(int(part), "") if part.isdigit() else (-1, part)
            for part in re.split(r"(\d+)", key)], key


# --- words ------------------------------------------------------------------------------------


def _message(kind: str, key: str, change: str, before: Attributes, after: Attributes,
             fields: tuple[str, ...]) -> str:
    if change != CHANGED:
        attrs = after if change == ADDED else before
        details = _describe(kind, attrs)
        return f"{kind} {key}{f' ({details})' if details else ''} {change}"
    if kind == MEMORY:
        old, new = before.get("physical_mb"), after.get("physical_mb")
        delta = f" ({_signed_gib(new - old)})" if isinstance(old, int) \
            and isinstance(new, int) else ""
        return f"memory {_value(kind, 'physical_mb', old)} -> " \
               f"{_value(kind, 'physical_mb', new)}{delta}"
    name = {FIRMWARE: FIRMWARE_NAMES.get(key, f"firmware {key}"), SYSTEM: "system"}.get(
        kind, f"{kind} {key}")
    return f"{name}: " + ", ".join(_change(kind, f, before, after, "->") for f in fields)


def _describe(kind: str, attrs: Attributes) -> str:
    if kind == DISK:
        parts = [str(attrs["name"]).removeprefix("/dev/") if "name" in attrs else None,
                 _value(kind, "size", attrs["size"]) if "size" in attrs else None]
    elif kind == DIMM:
        parts = [_value(kind, "size_mb", attrs["size_mb"]) if "size_mb" in attrs else None,
                 attrs.get("part_number")]
    elif kind == NIC:
        parts = [attrs.get("name")]
    elif kind == PCI:
        parts = [f"class {attrs['class']}" if "class" in attrs else None]
    else:
        parts = []
    return ", ".join(str(p) for p in parts if p)


def _change(kind: str, name: str, before: Attributes, after: Attributes, arrow: str) -> str:
    return f"{name} {_value(kind, name, before.get(name))} {arrow} " \
           f"{_value(kind, name, after.get(name))}"


def _value(kind: str, name: str, value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        if (kind, name) == (DISK, "size"):
            return _gb(value)
        if (kind, name) == (DIMM, "size_mb"):
            return _gib(value)
        if (kind, name) == (MEMORY, "physical_mb"):
            return f"{value} MiB"
    return str(value)


def _number(value: float) -> str:
    return f"{round(value, 1):g}" if abs(value) < 10 else f"{round(value):d}"


def _gib(mb: int) -> str:
    """Under 1 GiB in MiB: "0.3 GiB -> 0.4 GiB" would hide a 64 MiB change."""
    return f"{mb} MiB" if abs(mb) < 1024 else f"{_number(mb / 1024)} GiB"


def _gb(size: int) -> str:
    """Disk sizes as their labels give them: decimal GB, TB from 1000 GB."""
    gb = size / 1000 ** 3
    if abs(gb) < 1:
        return f"{round(size / 1000 ** 2)} MB"
    return f"{_number(gb / 1000)} TB" if abs(gb) >= 1000 else f"{_number(gb)} GB"


def _signed(text: str, negative: bool) -> str:
    return f"{MINUS}{text}" if negative else f"+{text}"


def _signed_gib(mb: int) -> str:
    return _signed(_gib(abs(mb)), mb < 0)


def _signed_gb(size: int) -> str:
    return _signed(_gb(abs(size)), size < 0)


# --- summary ----------------------------------------------------------------------------------


def summary(found: Iterable[ComponentEvent]) -> list[str]:
    """Short aggregate lines an operator reads first, one per component type that changed:
    `16 → 15 DIMMs, -32 GiB`, `4 disks, 1 removed, 1 added`, `BIOS 1.2.3 → 1.3.0`."""
    by_kind: dict[str, list[ComponentEvent]] = {}
    for event in found:
        by_kind.setdefault(event.component, []).append(event)
    lines = []
    for kind in sorted(by_kind, key=lambda k: TYPES.index(k) if k in TYPES else len(TYPES)):
        group = by_kind[kind]
        if kind in COLLECTIONS:
            lines.append(_collection_line(kind, group))
        else:
            lines += [_singleton_line(e) for e in group if e.change == CHANGED]
    return lines


def _collection_line(kind: str, group: list[ComponentEvent]) -> str:
    """`16 → 15 DIMMs, -32 GiB` (with MINUS, not a hyphen); when the count is the same,
    what happened to it: `4 disks, 1 removed, 1 added`."""
    tally = {c: sum(e.change == c for e in group) for c in (REMOVED, ADDED, CHANGED)}
    counts = group[0].counts  # None only for events made elsewhere: then the tally alone
    noun = NOUNS.get(kind, kind)
    if counts is not None and counts[0] != counts[1]:
        parts = [f"{counts[0]} → {counts[1]} {noun}s"]
    else:
        parts = [f"{counts[0]} {noun}{'s' if counts[0] != 1 else ''}" if counts else noun + "s"]
        parts += [f"{tally[c]} {c}" for c in (REMOVED, ADDED) if tally[c]]
    if tally[CHANGED]:
        parts.append(f"{tally[CHANGED]} {CHANGED}")
    size = {DIMM: "size_mb", DISK: "size"}.get(kind)
    if size is not None:
        delta = sum(_size(e.after, size) - _size(e.before, size) for e in group)
        if delta:
            parts.append(_signed_gib(delta) if kind == DIMM else _signed_gb(delta))
    return ", ".join(parts)


def _size(attrs: Attributes | None, name: str) -> int:
    value = (attrs or {}).get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _singleton_line(event: ComponentEvent) -> str:
    old, new = event.before or {}, event.after or {}
    kind = event.component
    if kind == MEMORY:
        a, b = old.get("physical_mb"), new.get("physical_mb")
        delta = f", {_signed_gib(b - a)}" if isinstance(a, int) and isinstance(b, int) else ""
        return f"memory {a} → {b} MiB{delta}"
    if kind == FIRMWARE:
        name = FIRMWARE_NAMES.get(event.key, f"firmware {event.key}")
        parts = [f"{_value(kind, 'version', old.get('version'))} → "
                 f"{_value(kind, 'version', new.get('version'))}"] \
            if "version" in event.fields else []
        parts += [_change(kind, f, old, new, "→") for f in event.fields if f != "version"]
        return f"{name} " + ", ".join(parts)
    if kind == CPU and "count" in event.fields:
        parts = [f"{old.get('count', '-')} → {new.get('count', '-')} CPUs"]
        parts += [_change(kind, f, old, new, "→") for f in event.fields if f != "count"]
        return ", ".join(parts)
    label = {CPU: "CPU"}.get(kind, kind)
    return f"{label} " + ", ".join(_change(kind, f, old, new, "→") for f in event.fields)
