"""Helpers for discoverd tests: managed fake nodes with ports and a BMC address, ramdisk
payloads in both formats, bounded waits."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..api.helpers import create_node, manage, wait_for

GIB = 1024**3
_SEQ = itertools.count(1)


@dataclass
class Machine:
    """A node as the bare-metal service knows it, plus the hardware its ramdisk will see."""

    uuid: str
    name: str
    macs: list[str]  # every NIC of the machine (ports exist for the first `ports` of them)
    bmc: str | None
    ports: list[str] = field(default_factory=list)  # MACs that have a port


def mac(seq: int, nic: int) -> str:
    return f"02:{nic:02x}:00:00:{seq >> 8 & 0xff:02x}:{seq & 0xff:02x}"


def bmc_address(seq: int) -> str:
    # 198.18.0.0/15 (benchmarking): not loopback, and nothing real answers there.
    return f"198.18.{seq >> 8 & 0xff}.{seq & 0xff}"


async def make_node(bm: httpx.AsyncClient, *, nics: int = 2, ports: int | None = None,
                    bmc: bool = True, managed: bool = True, driver: str = "fake",
                    driver_info: dict[str, Any] | None = None,
                    properties: dict[str, Any] | None = None) -> Machine:
    """A fake node with `nics` NICs, ports for the first `ports` of them (all by default),
    and a BMC address (ipmi_address) unless bmc=False; managed unless managed=False."""
    seq = next(_SEQ)
    macs = [mac(seq, i) for i in range(nics)]
    info = dict(driver_info or {})
    address = bmc_address(seq) if bmc else None
    if address:
        info.setdefault("ipmi_address", address)
    fields: dict[str, Any] = {"driver": driver, "name": f"node-{seq}", "driver_info": info}
    if properties:
        fields["properties"] = properties
    node = await create_node(bm, **fields)
    with_ports = macs[: nics if ports is None else ports]
    for address_ in with_ports:
        resp = await bm.post("/v1/ports", json={"node_uuid": node["uuid"], "address": address_})
        assert resp.status_code == 201, resp.text
    if managed:
        await manage(bm, node["uuid"])
    return Machine(node["uuid"], node["name"], macs, address, with_ports)


def ipa_payload(m: Machine, *, pxe: int | None = 0, ips: dict[int, str] | None = None,
                cpus: Any = 8, arch: str = "x86_64", memory_mb: Any = 16384,
                disks_gib: tuple[int, ...] = (500, 1000), boot_mode: str = "uefi",
                flags: tuple[str, ...] = ("fpu", "vmx", "aes"), bmc: str | bool | None = True,
                macs: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """An ironic-python-agent report for machine `m` (as IPA 9.x posts it).
    `ips` maps NIC index to its IPv4 address (default: only the PXE NIC has one)."""
    macs = m.macs if macs is None else macs
    if ips is None:
        ips = {pxe: f"10.0.{pxe}.{next(_SEQ) & 0xff}"} if pxe is not None else {}
    disks = [{"name": f"/dev/sd{chr(97 + i)}", "model": f"DISK{i}", "serial": f"SER{i:04d}",
              "size": gib * GIB + 123456, "rotational": i > 0, "vendor": "ACME"}
             for i, gib in enumerate(disks_gib)]
    inventory: dict[str, Any] = {
        "interfaces": [{"name": f"eno{i + 1}", "mac_address": address,
                        "ipv4_address": ips.get(i), "ipv6_address": None, "has_carrier": True,
                        "vendor": "0x8086", "speed_mbps": 10000}
                       for i, address in enumerate(macs)],
        "cpu": {"model_name": "Xeon", "frequency": "2100.000", "count": cpus,
                "architecture": arch, "flags": list(flags), "socket_count": 2},
        "memory": {"total": 17179869184, "physical_mb": memory_mb},
        "disks": disks,
        "bmc_address": (m.bmc if bmc is True else bmc or None),
        "bmc_v6address": "::/0",
        "system_vendor": {"product_name": "Test", "serial_number": "SN1",
                          "manufacturer": "ACME"},
        "boot": {"current_boot_mode": boot_mode,
                 "pxe_interface": macs[pxe] if pxe is not None else None},
        "hostname": m.name,
    }
    data: dict[str, Any] = {"inventory": inventory,
                            "root_disk": disks[0] if disks else None,
                            "boot_interface": f"01-{macs[pxe].replace(':', '-')}"
                            if pxe is not None else None,
                            "configuration": {"collectors": ["default", "logs"],
                                              "managers": [{"name": "generic", "version": "1"}]},
                            "error": None}
    data.update(extra)
    return data


def legacy_payload(m: Machine, *, cpus: int = 4, arch: str = "x86_64", memory_mb: int = 8192,
                   local_gb: int = 99, pxe: int | None = 0, ips: dict[int, str] | None = None,
                   bmc: bool = True, **extra: Any) -> dict[str, Any]:
    """The legacy discoverd ramdisk's flat report (ironic-discoverd 1.0's)."""
    if ips is None:
        ips = {pxe: f"10.1.{pxe}.{next(_SEQ) & 0xff}"} if pxe is not None else {}
    data: dict[str, Any] = {
        "cpus": cpus, "cpu_arch": arch, "memory_mb": memory_mb, "local_gb": local_gb,
        "interfaces": {f"eth{i}": {"mac": address, "ip": ips.get(i)}
                       for i, address in enumerate(m.macs)},
    }
    if bmc and m.bmc:
        data["ipmi_address"] = m.bmc
    if pxe is not None:
        data["boot_interface"] = f"01-{m.macs[pxe].replace(':', '-')}"
    data.update(extra)
    return data


# --- waiting ------------------------------------------------------------------------------


async def status(di: httpx.AsyncClient, node: str) -> dict[str, Any]:
    resp = await di.get(f"/v1/introspection/{node}")
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


async def wait_state(di: httpx.AsyncClient, node: str, *wanted: str,
                     timeout: float = 10) -> dict[str, Any]:
    """Poll the introspection status until its state is one of `wanted` (bounded)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = await status(di, node)
        if doc["state"] in wanted:
            return doc
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"introspection of {node} did not reach {wanted}: {doc}")
        await asyncio.sleep(0.01)


async def wait_finished(di: httpx.AsyncClient, node: str, timeout: float = 10
                        ) -> dict[str, Any]:
    """Wait until the introspection is over (finished or error); return its status."""
    doc = await wait_state(di, node, "finished", "error", timeout=timeout)
    assert doc["finished"] is True
    return doc


async def start(di: httpx.AsyncClient, node: str, *, wait: bool = True) -> dict[str, Any]:
    """Start introspection (202) and, by default, wait until discoverd waits for the ramdisk."""
    resp = await di.post(f"/v1/introspection/{node}")
    assert resp.status_code == 202, resp.text
    return await wait_state(di, node, "waiting") if wait else {}


async def node(bm: httpx.AsyncClient, ident: str) -> dict[str, Any]:
    resp = await bm.get(f"/v1/nodes/{ident}")
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


async def ports(bm: httpx.AsyncClient, ident: str) -> dict[str, dict[str, Any]]:
    """The node's ports by MAC."""
    resp = await bm.get("/v1/ports/detail", params={"node": ident})
    assert resp.status_code == 200, resp.text
    return {p["address"]: p for p in resp.json()["ports"]}


async def settled_power(bm: httpx.AsyncClient, ident: str, power: str,
                        timeout: float = 10) -> dict[str, Any]:
    return await wait_for(bm, ident, power=power, timeout=timeout)


async def introspect(di: httpx.AsyncClient, m: Machine, payload: dict[str, Any]
                     ) -> dict[str, Any]:
    """Start, post the callback (200), wait for the end; return the final status."""
    await start(di, m.uuid)
    resp = await di.post("/v1/continue", json=payload)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"uuid": m.uuid}
    return await wait_finished(di, m.uuid)


def when(doc: dict[str, Any], field: str) -> dt.datetime:
    """A status timestamp (ISO 8601, UTC, no offset) as a datetime."""
    return dt.datetime.fromisoformat(doc[field])


def error_message(resp: httpx.Response) -> str:
    body = resp.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message"}, body
    return str(body["error"]["message"])


async def snapshot(bm: httpx.AsyncClient, *machines: Machine) -> list[Any]:
    """What a test checks did not change: each node's properties, states and ports."""
    found = []
    for m in machines:
        doc = await node(bm, m.uuid)
        found.append((doc["properties"], doc["provision_state"], doc["power_state"],
                      sorted((a, p["pxe_enabled"]) for a, p in (await ports(bm, m.uuid)).items())))
    return found


async def issued_token(di_service: Any, uuid: str) -> str:
    """The callback token the node's boot script would carry (`di_service`: the in-process
    DiscoverdService); only a report with it may end the introspection."""
    token = await di_service.cache.issue_token(uuid)
    assert token is not None, "the introspection does not wait for its ramdisk"
    return str(token)
