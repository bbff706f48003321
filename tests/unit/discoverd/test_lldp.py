"""LLDP TLVs decoded into upstream's `parsed_lldp` names, from frames built per 802.1AB."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd import lldp

from . import lldp_frames as f


def parse(*tlvs: bytes) -> lldp.Parsed:
    decoded, problems = lldp.decode(f.reported(f.lldpdu(*tlvs)))
    assert problems == []
    return lldp.parse(decoded)


def values(*tlvs: bytes) -> dict[str, Any]:
    parsed = parse(*tlvs)
    assert parsed.problems == []
    return parsed.values


# --- reading the report -------------------------------------------------------------------


def test_lldp_raw_is_read_before_the_interfaces_own_lldp() -> None:
    data = {"lldp_raw": {"eth0": [[5, "6161"]]}}
    assert lldp.reported_tlvs(data, {"name": "eth0", "lldp": [[5, "6262"]]}) == [[5, "6161"]]


def test_the_interfaces_own_lldp_is_read_when_lldp_raw_lacks_it() -> None:
    data = {"lldp_raw": {"eth1": [[5, "6161"]]}}
    assert lldp.reported_tlvs(data, {"name": "eth0", "lldp": [[5, "6262"]]}) == [[5, "6262"]]


def test_no_lldp_anywhere_is_none() -> None:
    assert lldp.reported_tlvs({}, {"name": "eth0"}) is None


def test_hex_values_are_decoded_to_bytes() -> None:
    assert lldp.decode([[5, "6c6561662d31"]]) == ([(5, b"leaf-1")], [])


def test_a_value_that_is_not_hexadecimal_is_a_problem_not_an_exception() -> None:
    tlvs, problems = lldp.decode([[5, "zz"], [4, "6162"]])
    assert tlvs == [(4, b"ab")]
    assert problems == ["LLDP TLV type 5: value is not hexadecimal ('zz')"]


def test_an_odd_number_of_hex_digits_is_a_problem() -> None:
    assert lldp.decode([[5, "616"]])[1] == ["LLDP TLV type 5: value is not hexadecimal ('616')"]


def test_an_entry_that_is_not_a_type_and_value_pair_is_a_problem() -> None:
    tlvs, problems = lldp.decode([[5], ["5", "61"], [True, "61"], "0561", [5, 61]])
    assert tlvs == []
    assert len(problems) == 5


def test_lldp_data_that_is_not_a_list_is_a_problem() -> None:
    assert lldp.decode({"5": "61"})[1] == [
        "LLDP data is not a list of [type, hexvalue] pairs: {'5': '61'}"]


# --- 802.1AB basic management set ---------------------------------------------------------


def test_chassis_id_of_mac_subtype_is_a_lowercase_mac() -> None:
    assert values(f.chassis_mac("00:1C:73:AA:BB:CC"))["switch_chassis_id"] == \
        "00:1c:73:aa:bb:cc"


def test_chassis_id_of_a_text_subtype_is_the_text() -> None:
    assert values(f.chassis_local("rack7-leaf"))["switch_chassis_id"] == "rack7-leaf"


def test_chassis_id_of_network_address_subtype_is_the_address() -> None:
    assert values(f.chassis_ip("192.0.2.7"))["switch_chassis_id"] == "192.0.2.7"
    assert values(f.chassis_ip("2001:db8::7"))["switch_chassis_id"] == "2001:db8::7"


def test_port_id_of_interface_name_subtype_is_the_name() -> None:
    assert values(f.port_name("Ethernet1/12"))["switch_port_id"] == "Ethernet1/12"


def test_port_id_of_mac_subtype_is_a_mac() -> None:
    assert values(f.port_mac("00:1c:73:00:00:0c"))["switch_port_id"] == "00:1c:73:00:00:0c"


def test_ttl_and_end_add_nothing() -> None:
    assert values(f.ttl(120)) == {}


def test_text_tlvs_are_read_as_text() -> None:
    assert values(f.port_description("to server 42"), f.system_name("leaf-1"),
                  f.system_description("Arista EOS 4.31")) == {
        "switch_port_description": "to server 42", "switch_system_name": "leaf-1",
        "switch_system_description": "Arista EOS 4.31"}


def test_system_capabilities_are_named_supported_and_enabled() -> None:
    bridge, router, station = 1 << 2, 1 << 4, 1 << 7
    found = values(f.capabilities(bridge | router | station, bridge))
    assert found["switch_capabilities_support"] == ["Bridge", "Router", "Station only"]
    assert found["switch_capabilities_enabled"] == ["Bridge"]


def test_management_addresses_are_listed() -> None:
    found = values(f.management_address("192.0.2.1"), f.management_address("2001:db8::1"))
    assert found["switch_mgmt_addresses"] == ["192.0.2.1", "2001:db8::1"]


def test_the_first_value_of_a_single_valued_tlv_wins() -> None:
    assert values(f.system_name("first"), f.system_name("second"))["switch_system_name"] == \
        "first"


def test_unknown_tlv_types_are_ignored() -> None:
    assert values(f.tlv(9, b"\x01\x02")) == {}


# --- 802.1Q ---------------------------------------------------------------------------------


def test_port_vlan_id_is_the_untagged_vlan() -> None:
    found = values(f.org(f.OUI_802_1, 1, (100).to_bytes(2, "big")))
    assert found["switch_port_untagged_vlan_id"] == 100


def test_port_and_protocol_vlans_are_listed_with_their_flags() -> None:
    found = values(f.org(f.OUI_802_1, 2, b"\x06" + (200).to_bytes(2, "big")),
                   f.org(f.OUI_802_1, 2, b"\x06" + (201).to_bytes(2, "big")))
    assert found["switch_port_protocol_vlan_ids"] == [200, 201]
    assert found["switch_port_protocol_vlan_enabled"] is True
    assert found["switch_port_protocol_vlan_support"] is True


def test_vlan_names_are_listed_with_their_ids() -> None:
    found = values(f.org(f.OUI_802_1, 3, (100).to_bytes(2, "big") + b"\x04prod"),
                   f.org(f.OUI_802_1, 3, (200).to_bytes(2, "big") + b"\x03dev"))
    assert found["switch_port_vlans"] == [{"name": "prod", "id": 100},
                                          {"name": "dev", "id": 200}]


def test_protocol_identities_are_listed_in_hex() -> None:
    stp = bytes.fromhex("0026424203000000")
    found = values(f.org(f.OUI_802_1, 4, bytes([len(stp)]) + stp))
    assert found["switch_protocol_identities"] == ["0026424203000000"]


def test_management_vid_is_read() -> None:
    found = values(f.org(f.OUI_802_1, 6, (10).to_bytes(2, "big")))
    assert found["switch_port_management_vlan_id"] == 10


def test_link_aggregation_of_802_1_is_read() -> None:
    found = values(f.org(f.OUI_802_1, 7, b"\x03" + (7).to_bytes(4, "big")))
    assert (found["switch_port_link_aggregation_enabled"],
            found["switch_port_link_aggregation_support"],
            found["switch_port_link_aggregation_id"]) == (True, True, 7)


# --- 802.3 ----------------------------------------------------------------------------------


def test_mac_phy_configuration_is_read() -> None:
    # autonegotiation supported and enabled; 1000BASE-T fdx and 100BASE-TX fdx advertised
    # (RFC 4836 bits 15 and 5, numbered from the most significant); MAU type 30
    pmd = 1 << (15 - 15) | 1 << (15 - 5)
    found = values(f.org(f.OUI_802_3, 1, b"\x03" + pmd.to_bytes(2, "big")
                         + (30).to_bytes(2, "big")))
    assert found["switch_port_autonegotiation_enabled"] is True
    assert found["switch_port_autonegotiation_support"] is True
    assert found["switch_port_physical_capabilities"] == ["1000BASE-T fdx", "100BASE-TX fdx"]
    assert found["switch_port_mau_type"] == "1000BASE-T full duplex"


def test_10base_t_full_duplex_is_read_from_its_own_bit() -> None:
    # upstream reads the half-duplex bit for both; 802.3 has one bit each
    found = values(f.org(f.OUI_802_3, 1, b"\x03" + (1 << (15 - 2)).to_bytes(2, "big")
                         + (11).to_bytes(2, "big")))
    assert found["switch_port_physical_capabilities"] == ["10BASE-T fdx"]


def test_link_aggregation_of_802_3_is_read_as_802_1s() -> None:
    found = values(f.org(f.OUI_802_3, 3, b"\x01" + (9).to_bytes(4, "big")))
    assert (found["switch_port_link_aggregation_enabled"],
            found["switch_port_link_aggregation_support"],
            found["switch_port_link_aggregation_id"]) == (False, True, 9)


def test_maximum_frame_size_is_the_mtu() -> None:
    assert values(f.org(f.OUI_802_3, 4, (9216).to_bytes(2, "big")))["switch_port_mtu"] == 9216


def test_other_organizations_tlvs_are_ignored() -> None:
    assert values(f.org(bytes.fromhex("00012f"), 1, b"\x01\x02")) == {}


# --- what is skipped ------------------------------------------------------------------------


def test_a_tlv_that_is_not_utf8_is_skipped_and_the_others_kept() -> None:
    parsed = parse(f.system_name(b"leaf-\xff"), f.port_description("uplink"))
    assert parsed.values == {"switch_port_description": "uplink"}
    assert parsed.problems == ["LLDP TLV type 5: switch_system_name is not UTF-8 text; skipped"]


def test_a_value_longer_than_511_octets_is_dropped() -> None:
    parsed = lldp.parse([(6, b"x" * 512), (5, b"leaf-1")])
    assert parsed.values == {"switch_system_name": "leaf-1"}
    assert parsed.problems == ["LLDP TLV type 6: 512 octets, more than 511; dropped"]


def test_a_value_of_511_octets_is_kept() -> None:
    assert lldp.parse([(6, b"x" * 511)]).values == {"switch_system_description": "x" * 511}


def test_a_truncated_mac_is_skipped() -> None:
    parsed = parse(f.tlv(1, b"\x04\x00\x1c\x73"))
    assert parsed.values == {}
    assert parsed.problems == ["LLDP TLV type 1: chassis ID: a MAC address needs 6 octets, "
                               "got 3; skipped"]


def test_an_unknown_chassis_id_subtype_is_skipped() -> None:
    assert parse(f.tlv(1, b"\x09abc")).problems == [
        "LLDP TLV type 1: chassis ID: unknown subtype 9; skipped"]


def test_capabilities_of_the_wrong_length_are_skipped() -> None:
    assert parse(f.tlv(7, b"\x00\x04")).problems == [
        "LLDP TLV type 7: system capabilities: expected 4 octets, got 2; skipped"]


def test_an_unknown_mau_type_is_skipped() -> None:
    parsed = parse(f.org(f.OUI_802_3, 1, b"\x03\x00\x01" + (999).to_bytes(2, "big")))
    assert parsed.values == {}
    assert parsed.problems == ["LLDP TLV type 127: OUI 00120f subtype 1: MAC/PHY "
                               "configuration: unknown MAU type 999; skipped"]


def test_a_vlan_name_shorter_than_announced_is_skipped() -> None:
    parsed = parse(f.org(f.OUI_802_1, 3, (100).to_bytes(2, "big") + b"\x09prod"))
    assert parsed.values == {}
    assert "VLAN name: 9 octets announced, 4 present" in parsed.problems[0]


def test_an_org_specific_tlv_without_its_subtype_is_skipped() -> None:
    assert parse(f.tlv(127, b"\x00\x80")).problems == [
        "LLDP TLV type 127: organizationally specific TLV: shorter than its OUI and subtype; "
        "skipped"]
