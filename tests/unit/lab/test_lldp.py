"""The lab's LLDP frames: one port per tap, frames as a switch sends them. (Sending on
real taps is in tests/functional/test_agent_lldp.py and the e2e lab test.)"""

from __future__ import annotations

import pytest

from ironsight.lab import lldp

BRIDGE_MAC = "02:00:0a:14:00:01"


def test_each_tap_is_a_port_of_the_same_chassis_named_after_it():
    assert lldp.ports(BRIDGE_MAC, ["tap1", "tap2"]) == {
        "tap1": lldp.Port(BRIDGE_MAC, "tap1"), "tap2": lldp.Port(BRIDGE_MAC, "tap2")}


def test_a_frame_goes_to_the_lldp_group_from_the_chassis_mac_with_the_lldp_ethertype():
    data = lldp.frame(lldp.Port(BRIDGE_MAC, "tap1"))
    assert (data[:6].hex(), data[6:12].hex(), data[12:14].hex()) == (
        "0180c200000e", "02000a140001", "88cc")


def test_a_frame_carries_chassis_port_ttl_system_name_and_end():
    data = lldp.frame(lldp.Port(BRIDGE_MAC, "tap1"), ttl=120, system_name="sw")
    assert data[14:] == (bytes.fromhex("0207" "04" "02000a140001")
                         + bytes.fromhex("0405" "05") + b"tap1"
                         + bytes.fromhex("0602" "0078")
                         + bytes.fromhex("0a02") + b"sw"
                         + bytes.fromhex("0000"))


def test_a_tlv_value_beyond_511_octets_cannot_be_built():
    with pytest.raises(ValueError, match="511"):
        lldp.tlv(5, b"x" * 512)
