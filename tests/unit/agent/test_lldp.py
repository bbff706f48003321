"""LLDP: frame parsing (crafted frames), the kernel command line knobs, the bounds, and
frames saved in a fixture tree. Capture on real sockets is in
tests/functional/test_agent_lldp.py (a veth pair in a network namespace)."""

from __future__ import annotations

import math

import pytest

from ironsight.agent import lldp
from ironsight.lab.lldp import Port, frame, tlv

SWITCH = Port("02:00:0a:14:00:01", "Ethernet1/7")
HEADER = lldp.MULTICAST + bytes.fromhex("02000a140001") + b"\x88\xcc"


def test_a_frame_gives_each_tlv_as_type_and_hex_value():
    assert lldp.parse_frame(frame(SWITCH, ttl=120, system_name="sw1")) == [
        [1, "04" + "02000a140001"],
        [2, "05" + b"Ethernet1/7".hex()],
        [3, "0078"],
        [5, b"sw1".hex()],
    ]


def test_a_non_utf8_value_is_kept_as_hex():
    tlvs = lldp.parse_frame(HEADER + tlv(5, b"\xff\xfe\x80sw") + tlv(0, b""))
    assert tlvs == [[5, "fffe807377"]]


def test_another_ethertype_is_not_lldp():
    assert lldp.parse_frame(HEADER[:12] + b"\x08\x00" + tlv(1, b"x")) is None


def test_a_frame_shorter_than_an_ethernet_header_is_not_lldp():
    assert lldp.parse_frame(HEADER[:10]) is None


def test_a_vlan_tagged_frame_is_parsed_after_its_tag():
    tagged = HEADER[:12] + b"\x81\x00\x00\x64" + HEADER[12:] + tlv(2, b"\x05p1")
    assert lldp.parse_frame(tagged) == [[2, "057031"]]


def test_parsing_stops_at_the_end_tlv():
    assert lldp.parse_tlvs(tlv(1, b"a") + tlv(0, b"") + tlv(2, b"b")) == [[1, "61"]]


def test_a_truncated_tlv_ends_the_parsing():
    assert lldp.parse_tlvs(tlv(1, b"a") + tlv(2, b"abcdef")[:5]) == [[1, "61"]]


def test_a_value_of_511_octets_is_kept():
    assert lldp.parse_tlvs(tlv(127, b"v" * 511)) == [[127, "76" * 511]]


def test_trailing_odd_byte_is_ignored():
    assert lldp.parse_tlvs(tlv(1, b"a") + b"\x02") == [[1, "61"]]


def test_lldp_is_off_with_a_30_second_timeout_by_default_as_ipa():
    assert lldp.settings({}) == (False, 30.0)


@pytest.mark.parametrize("value", ["1", "true", "True", "yes"])
def test_ipa_collect_lldp_on_enables_it(value):
    assert lldp.settings({"ipa-collect-lldp": value})[0] is True


@pytest.mark.parametrize("value", ["0", "false", "no", "maybe"])
def test_ipa_collect_lldp_otherwise_leaves_it_off(value):
    assert lldp.settings({"ipa-collect-lldp": value})[0] is False


def test_ipa_lldp_timeout_sets_the_timeout():
    assert lldp.settings({"ipa-lldp-timeout": "12.5"}) == (False, 12.5)


@pytest.mark.parametrize("value", ["soon", "-1", "nan"])
def test_a_bad_timeout_keeps_the_default(value):
    assert lldp.settings({"ipa-lldp-timeout": value})[1] == lldp.DEFAULT_TIMEOUT


@pytest.mark.parametrize("value", ["1e9", "inf"])
def test_the_timeout_is_capped(value):
    timeout = lldp.settings({"ipa-lldp-timeout": value})[1]
    assert timeout == lldp.MAX_TIMEOUT and not math.isinf(timeout)


def test_a_command_line_override_is_bounded_the_same_way():
    assert (lldp.bounded(float("nan")), lldp.bounded(-2.0), lldp.bounded(1e6),
            lldp.bounded(0.0)) == (lldp.DEFAULT_TIMEOUT, lldp.DEFAULT_TIMEOUT,
                                   lldp.MAX_TIMEOUT, 0.0)


def test_fixture_frames_are_read_for_the_listed_interfaces(tree):
    tree.write("lldp/eth0", frame(SWITCH))
    tree.write("lldp/eth1", frame(Port("02:00:00:00:00:02", "other")))
    found = lldp.collect(str(tree), ["eth0"], 1.0, live=False)
    assert list(found) == ["eth0"]
    assert found["eth0"][1] == [2, "05" + b"Ethernet1/7".hex()]


def test_at_most_64_interfaces_are_listened_on_with_a_warning(tree):
    names = [f"eth{i}" for i in range(70)]
    for name in names:
        tree.write(f"lldp/{name}", frame(Port("02:00:00:00:00:02", name)))
    warnings: list[str] = []
    found = lldp.collect(str(tree), names, 1.0, live=False, warnings=warnings)
    assert len(found) == 64 and "eth69" not in found
    assert warnings == ["LLDP: 70 interfaces with carrier, listening on the first 64 only"]


def test_no_interface_means_no_wait():
    assert lldp.capture([], timeout=60.0) == {}


def test_an_interface_that_does_not_exist_is_a_warning():
    warnings: list[str] = []
    assert lldp.capture(["nonexistent0"], timeout=0.1, warnings=warnings) == {}
    assert warnings and warnings[0].startswith("LLDP: cannot listen on nonexistent0")
