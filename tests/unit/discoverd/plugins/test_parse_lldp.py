"""`parse-lldp`: each interface's LLDP, from IPA's two places, into `parsed_lldp`."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.base import ProcessingContext
from ironsight.discoverd.plugins.facts import INTERFACES, PARSED_LLDP, Interfaces, Nic
from ironsight.discoverd.plugins.parse_lldp import LldpBasic, ParseLldp

from .. import lldp_frames as f
from ..helpers import MAC1, MAC2, agent_report, context, unvalidated


def run(report: dict[str, Any]) -> ProcessingContext:
    ctx = context(report, node={"uuid": "node-1", "properties": {}})
    ParseLldp(ctx.conf).before_update(ctx)
    return ctx


def with_lldp(report: dict[str, Any], **by_interface: Any) -> dict[str, Any]:
    """`report` with TLVs in its inventory's interfaces (the older place)."""
    for iface in report["inventory"]["interfaces"]:
        if iface["name"] in by_interface:
            iface["lldp"] = by_interface[iface["name"]]
    return report


def test_provides_parsed_lldp() -> None:
    assert ParseLldp.provides == (PARSED_LLDP,)


def test_lldp_raw_is_parsed_per_interface() -> None:
    ctx = run(agent_report((MAC1, MAC2), lldp_raw={
        "eth0": f.switch_port("Ethernet1", "leaf-1"), "eth1": f.switch_port("Ethernet2",
                                                                           "leaf-2")}))
    assert ctx.get(PARSED_LLDP).by_interface == {
        "eth0": {"switch_chassis_id": f.SWITCH_MAC, "switch_port_id": "Ethernet1",
                 "switch_system_name": "leaf-1"},
        "eth1": {"switch_chassis_id": f.SWITCH_MAC, "switch_port_id": "Ethernet2",
                 "switch_system_name": "leaf-2"}}


def test_the_interfaces_own_lldp_is_parsed() -> None:
    ctx = run(with_lldp(agent_report(), eth0=f.switch_port("Ethernet7")))
    assert ctx.get(PARSED_LLDP).by_interface["eth0"]["switch_port_id"] == "Ethernet7"


def test_parsed_lldp_is_stored_in_the_processed_data() -> None:
    ctx = run(agent_report(lldp_raw={"eth0": f.switch_port("Ethernet1")}))
    assert ctx.processed_data()["parsed_lldp"]["eth0"]["switch_port_id"] == "Ethernet1"


def test_an_interface_without_lldp_is_left_out() -> None:
    ctx = run(agent_report((MAC1, MAC2), lldp_raw={"eth1": f.switch_port()}))
    assert list(ctx.get(PARSED_LLDP).by_interface) == ["eth1"]


def test_no_lldp_at_all_stores_nothing() -> None:
    ctx = run(agent_report())
    assert "parsed_lldp" not in ctx.processed_data()
    assert ctx.changes.warnings == []


def test_an_odd_number_of_hex_digits_is_a_warning_and_the_rest_is_parsed() -> None:
    tlvs = [*f.switch_port("Ethernet3"), [6, "414"]]
    ctx = run(agent_report(lldp_raw={"eth0": tlvs}))
    assert ctx.get(PARSED_LLDP).by_interface["eth0"]["switch_port_id"] == "Ethernet3"
    assert ctx.changes.warnings == [
        "interface eth0: LLDP TLV type 6: value is not hexadecimal ('414')"]


def test_unvalidated_non_hex_is_a_warning_too() -> None:
    ctx = unvalidated(agent_report(lldp_raw={"eth0": [[6, "not hex"]]}))
    ParseLldp(ctx.conf).before_update(ctx)
    assert ctx.changes.warnings == [
        "interface eth0: LLDP TLV type 6: value is not hexadecimal ('not hex')"]


def test_a_non_utf8_tlv_is_skipped_with_a_warning() -> None:
    frame = f.lldpdu(f.chassis_mac(f.SWITCH_MAC), f.port_name("Ethernet1"),
                     f.system_name(b"\xc3\x28"))
    ctx = run(agent_report(lldp_raw={"eth0": f.reported(frame)}))
    assert "switch_system_name" not in ctx.get(PARSED_LLDP).by_interface["eth0"]
    assert ctx.changes.warnings == ["interface eth0: LLDP TLV type 5: switch_system_name is "
                                    "not UTF-8 text; skipped"]


def test_an_unvalidated_oversized_value_is_dropped_with_a_warning() -> None:
    tlvs = [*f.switch_port(), [6, "41" * 600]]
    ctx = unvalidated(agent_report(lldp_raw={"eth0": tlvs}))
    ParseLldp(ctx.conf).before_update(ctx)
    assert "switch_system_description" not in ctx.get(PARSED_LLDP).by_interface["eth0"]
    assert ctx.changes.warnings == ["interface eth0: LLDP TLV type 6: 600 octets, more than "
                                    "511; dropped"]


def test_unvalidated_lldp_data_that_is_not_a_list_is_a_warning() -> None:
    ctx = unvalidated(agent_report(lldp_raw={"eth0": "garbage"}))
    ParseLldp(ctx.conf).before_update(ctx)
    assert ctx.get(PARSED_LLDP).by_interface == {}
    assert ctx.changes.warnings == ["interface eth0: LLDP data is not a list of [type, "
                                    "hexvalue] pairs: 'garbage'"]


def test_only_the_first_64_interfaces_are_read_with_a_warning() -> None:
    macs = tuple(f"52:54:00:00:01:{i:02x}" for i in range(70))
    raw = {f"eth{i}": f.switch_port(f"Ethernet{i}") for i in range(70)}
    ctx = run(agent_report(macs, pxe=macs[0], lldp_raw=raw))
    assert sorted(ctx.get(PARSED_LLDP).by_interface) == sorted(f"eth{i}" for i in range(64))
    assert ctx.changes.warnings == ["LLDP: the report has 70 interfaces; only the first 64 "
                                    "are read"]


def test_inspector_era_name_parses_the_same() -> None:
    ctx = context(agent_report(lldp_raw={"eth0": f.switch_port("Ethernet5")}))
    LldpBasic(ctx.conf).before_update(ctx)
    assert LldpBasic.name == "lldp_basic"
    assert ctx.get(PARSED_LLDP).by_interface["eth0"]["switch_port_id"] == "Ethernet5"


def test_lldp_is_also_stored_where_ironic_inspector_stored_it() -> None:
    ctx = context(agent_report((MAC1, MAC2), lldp_raw={"eth0": f.switch_port("Ethernet1")}),
                  node={"properties": {}})
    ctx.set(INTERFACES, Interfaces({"eth0": Nic(MAC1, "10.0.0.10", True),
                                    "eth1": Nic(MAC2, None, False)}, {}, MAC1))
    ParseLldp(ctx.conf).before_update(ctx)
    interfaces = ctx.processed_data()["all_interfaces"]
    assert interfaces["eth0"] == {"mac": MAC1, "ip": "10.0.0.10", "pxe": True,
                                  "lldp_processed": ctx.get(PARSED_LLDP).by_interface["eth0"]}
    assert interfaces["eth1"] == {"mac": MAC2, "ip": None, "pxe": False}


def test_without_validate_interfaces_only_parsed_lldp_is_stored() -> None:
    ctx = run(agent_report(lldp_raw={"eth0": f.switch_port()}))
    assert "all_interfaces" not in ctx.processed_data()
