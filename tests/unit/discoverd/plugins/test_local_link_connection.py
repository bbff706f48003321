"""`local-link-connection`: ports' `local_link_connection` from their NICs' LLDP.

The `interfaces` fact is set here directly (validate_interfaces has its own tests)."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.base import Changes
from ironsight.discoverd.plugins.facts import INTERFACES, Interfaces, Nic
from ironsight.discoverd.plugins.local_link_connection import (
    LocalLinkConnection,
    LocalLinkConnectionInspector,
)

from .. import lldp_frames as f
from ..helpers import MAC1, MAC2, agent_report, context


def port(mac: str, **fields: Any) -> dict[str, Any]:
    return {"uuid": f"port-{mac[-2:]}", "address": mac, "pxe_enabled": True,
            "local_link_connection": {}, **fields}


def run(lldp_raw: dict[str, Any], *ports: dict[str, Any], macs: tuple[str, ...] = (MAC1,),
        hook: type[LocalLinkConnection] = LocalLinkConnection) -> Changes:
    ctx = context(agent_report(macs, lldp_raw=lldp_raw), ports=ports)
    ctx.set(INTERFACES, Interfaces({f"eth{i}": Nic(mac, None, i == 0)
                                    for i, mac in enumerate(macs)}, {}, MAC1))
    hook(ctx.conf).before_update(ctx)
    return ctx.changes


def adds(**values: str) -> list[dict[str, Any]]:
    return [{"op": "add", "path": f"/local_link_connection/{key}", "value": value}
            for key, value in values.items()]


def test_requires_the_interfaces() -> None:
    assert LocalLinkConnection.requires == (INTERFACES,)


def test_port_gets_port_id_switch_id_and_switch_info() -> None:
    changes = run({"eth0": f.switch_port("Ethernet12", "leaf-1")}, port(MAC1))
    assert changes.port_patches == {"port-01": adds(switch_id=f.SWITCH_MAC,
                                                    port_id="Ethernet12",
                                                    switch_info="leaf-1")}


def test_a_chassis_id_that_is_not_a_mac_gives_no_switch_id() -> None:
    changes = run({"eth0": f.switch_port("Ethernet12", "leaf-1",
                                         chassis=f.chassis_local("rack7"))}, port(MAC1))
    assert changes.port_patches == {"port-01": adds(port_id="Ethernet12",
                                                    switch_info="leaf-1")}


def test_a_port_id_of_mac_subtype_is_the_mac() -> None:
    frame = f.lldpdu(f.chassis_mac(f.SWITCH_MAC), f.port_mac("00:1c:73:00:00:0c"), f.ttl())
    changes = run({"eth0": f.reported(frame)}, port(MAC1))
    assert changes.port_patches == {"port-01": adds(switch_id=f.SWITCH_MAC,
                                                    port_id="00:1c:73:00:00:0c")}


def test_existing_keys_are_never_overwritten() -> None:
    existing = port(MAC1, local_link_connection={"port_id": "set-by-operator",
                                                 "switch_id": "00:00:5e:00:53:01"})
    changes = run({"eth0": f.switch_port("Ethernet12", "leaf-1")}, existing)
    assert changes.port_patches == {"port-01": adds(switch_info="leaf-1")}


def test_a_port_that_has_every_key_is_not_patched() -> None:
    existing = port(MAC1, local_link_connection={"port_id": "a", "switch_id": "b",
                                                 "switch_info": "c"})
    assert run({"eth0": f.switch_port()}, existing).port_patches == {}


def test_a_nic_without_a_port_gives_the_fields_of_the_port_created_for_it() -> None:
    changes = run({"eth0": f.switch_port("Ethernet12", "leaf-1")})
    assert changes.port_patches == {}
    assert changes.port_fields == {MAC1: {"local_link_connection": {
        "switch_id": f.SWITCH_MAC, "port_id": "Ethernet12", "switch_info": "leaf-1"}}}


def test_the_interfaces_own_lldp_is_read_too() -> None:
    ctx = context(agent_report(), ports=(port(MAC1),))
    ctx.data["inventory"]["interfaces"][0]["lldp"] = f.switch_port("Ethernet4")
    ctx.set(INTERFACES, Interfaces({"eth0": Nic(MAC1, None, True)}, {}, MAC1))
    LocalLinkConnection(ctx.conf).before_update(ctx)
    assert {op["path"]: op["value"] for op in ctx.changes.port_patches["port-01"]}[
        "/local_link_connection/port_id"] == "Ethernet4"


def test_a_nic_that_validate_interfaces_dropped_is_ignored() -> None:
    ctx = context(agent_report((MAC1, MAC2), lldp_raw={"eth1": f.switch_port()}),
                  ports=(port(MAC2),))
    ctx.set(INTERFACES, Interfaces({"eth0": Nic(MAC1, None, True)}, {}, MAC1))
    LocalLinkConnection(ctx.conf).before_update(ctx)
    assert ctx.changes.port_patches == {}


def test_malformed_hex_skips_the_nic_with_a_warning() -> None:
    changes = run({"eth0": [*f.switch_port(), [5, "616"]]}, port(MAC1))
    assert changes.port_patches == {}
    assert changes.warnings == ["interface eth0: LLDP TLV type 5: value is not hexadecimal "
                                "('616')"]


def test_an_unreadable_port_id_skips_the_nic_with_a_warning() -> None:
    frame = f.lldpdu(f.chassis_mac(f.SWITCH_MAC), f.tlv(2, b"\x03\x00\x1c"))
    changes = run({"eth0": f.reported(frame)}, port(MAC1))
    assert changes.port_patches == {}
    assert changes.warnings == ["interface eth0: LLDP TLV type 2: port ID: a MAC address "
                                "needs 6 octets, got 2"]


def test_a_system_name_that_is_not_utf8_is_left_out_with_a_warning() -> None:
    frame = f.lldpdu(f.chassis_mac(f.SWITCH_MAC), f.port_name("Ethernet1"),
                     f.system_name(b"\xff\xfe"))
    changes = run({"eth0": f.reported(frame)}, port(MAC1))
    assert changes.port_patches == {"port-01": adds(switch_id=f.SWITCH_MAC,
                                                    port_id="Ethernet1")}
    assert changes.warnings == ["interface eth0: LLDP system name is not UTF-8 text; skipped"]


def test_a_port_without_a_local_link_connection_gets_a_whole_one() -> None:
    changes = run({"eth0": f.switch_port("Ethernet1", "leaf-1")},
                  port(MAC1, local_link_connection=None))
    assert changes.port_patches == {"port-01": [{
        "op": "add", "path": "/local_link_connection",
        "value": {"switch_id": f.SWITCH_MAC, "port_id": "Ethernet1", "switch_info": "leaf-1"}}]}


def test_patches_add_to_those_of_earlier_hooks() -> None:
    ctx = context(agent_report(lldp_raw={"eth0": f.switch_port("Ethernet1", "leaf-1")}),
                  ports=(port(MAC1),))
    ctx.set(INTERFACES, Interfaces({"eth0": Nic(MAC1, None, True)}, {}, MAC1))
    earlier = {"op": "replace", "path": "/pxe_enabled", "value": True}
    ctx.changes.patch_port("port-01", earlier)
    LocalLinkConnection(ctx.conf).before_update(ctx)
    assert ctx.changes.port_patches["port-01"][0] == earlier
    assert len(ctx.changes.port_patches["port-01"]) == 4


def test_inspector_era_name_does_the_same() -> None:
    changes = run({"eth0": f.switch_port("Ethernet12", "leaf-1")}, port(MAC1),
                  hook=LocalLinkConnectionInspector)
    assert LocalLinkConnectionInspector.name == "local_link_connection"
    assert changes.port_patches == {"port-01": adds(switch_id=f.SWITCH_MAC,
                                                    port_id="Ethernet12",
                                                    switch_info="leaf-1")}
