"""Drift: the nodes of one model (vendor, product) whose hardware or firmware differ from what
most nodes of that model have.

Compared are a model's properties, never a machine's identity (serials and MACs always
differ): the CPU model and count, total memory, the DIMMs' sizes and part numbers, the disks'
models and sizes, the NICs' vendors and products, the PCI devices (address and IDs, the same
on every board of a model) and the firmware versions. Each is compared with its majority
value in the group: a value more than half of the group's inspected nodes share. A field with
no such majority flags nobody (there is no "normal" to differ from); a group needs at least
`MIN_GROUP` inspected nodes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ironsight.discoverd.fleet.document import mapping, records

MIN_GROUP = 3


@dataclass
class Difference:
    name: str
    value: Any
    majority: Any
    missing: list[Any] = field(default_factory=list)  # list fields: what the majority has
    extra: list[Any] = field(default_factory=list)  # and what only this node has

    def as_dict(self) -> dict[str, Any]:
        out = {"field": self.name, "value": self.value, "majority": self.majority}
        if isinstance(self.value, list):
            out.update(missing=self.missing, extra=self.extra)
        return out


@dataclass
class Group:
    vendor: str
    product: str
    nodes: int
    drifted: list[dict[str, Any]]
    no_majority: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"vendor": self.vendor, "product": self.product, "nodes": self.nodes,
                "drifted": self.drifted, "no_majority": self.no_majority}


def features(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The compared properties of one node's document (fleet/document.py)."""
    hw = mapping(doc.get("hardware"))
    inventory = mapping(doc.get("inventory"))
    dimms = records(mapping(mapping(inventory.get("dmi")).get("memory")).get("devices"))
    pci = records(inventory.get("pci_devices"))
    return {
        "cpu": f"{hw.get('cpu_model')} x{hw.get('cpu_count')}",
        "memory_mb": hw.get("memory_mb"),
        "dimms": sorted(f"{d.get('Size')} {d.get('Part Number') or ''}".strip()
                        for d in dimms
                        if d.get("Size") and str(d["Size"]).lower() != "no module installed"),
        "disks": sorted(f"{d.get('model') or '?'} {d.get('size_gb')} GB"
                        for d in records(hw.get("disks"))),
        "nics": sorted(f"{n.get('vendor') or '?'}:{n.get('product') or '?'}"
                       for n in records(hw.get("nics"))),
        "pci_devices": sorted(f"{d.get('bus') or d.get('address') or '?'} "
                              f"{d.get('vendor_id')}:{d.get('product_id')}" for d in pci),
        "bios_version": hw.get("bios_version"),
        "bmc_firmware_version": inventory.get("bmc_firmware_version"),
    }


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _difference(name: str, value: Any, majority: Any) -> Difference:
    if not isinstance(value, list):
        return Difference(name, value, majority)
    mine, theirs = Counter(value), Counter(majority)
    return Difference(name, value, majority, missing=sorted((theirs - mine).elements()),
                      extra=sorted((mine - theirs).elements()))


def group_drift(vendor: str, product: str, docs: list[Mapping[str, Any]]) -> Group:
    per_node = [(doc, features(doc)) for doc in docs]
    drifted: dict[str, list[Difference]] = {}
    no_majority = []
    names = list(per_node[0][1]) if per_node else []
    for name in names:
        counts = Counter(_key(f[name]) for _, f in per_node)
        top, count = counts.most_common(1)[0]
        if count * 2 <= len(per_node):
            no_majority.append(name)
            continue
        majority = list(top) if isinstance(top, tuple) else top
        for doc, f in per_node:
            if _key(f[name]) != top:
                drifted.setdefault(str(doc.get("uuid")), []).append(
                    _difference(name, f[name], majority))
    names_of = {str(d.get("uuid")): d.get("name") for d in docs}
    return Group(vendor, product, len(docs),
                 [{"uuid": uuid, "name": names_of[uuid],
                   "differences": [d.as_dict() for d in diffs]}
                  for uuid, diffs in sorted(drifted.items())], no_majority)


def drift(docs: Iterable[Mapping[str, Any]], *, vendor: str | None = None,
          product: str | None = None) -> list[Group]:
    """Every model's group with at least MIN_GROUP inspected nodes, largest first."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for doc in docs:
        hw = mapping(doc.get("hardware"))
        if not doc.get("inspected") or not hw.get("vendor") or not hw.get("product"):
            continue
        key = (str(hw["vendor"]), str(hw["product"]))
        if (vendor is None or key[0] == vendor) and (product is None or key[1] == product):
            groups.setdefault(key, []).append(doc)
    return [group_drift(v, p, members)
            for (v, p), members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
            if len(members) >= MIN_GROUP]
