"""`validate_interfaces`: which NICs the report has, which one booted, which get ports."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.discoverd.plugins.base import HookError, ProcessingContext
from ironsight.discoverd.plugins.facts import INTERFACES, Interfaces, Nic
from ironsight.discoverd.plugins.validate_interfaces import ValidateInterfaces

from ..helpers import MAC1, MAC2, MAC3, agent_report, context


def run(report: dict[str, Any], **processing: str) -> ProcessingContext:
    ctx = context(report, processing=processing)
    ValidateInterfaces(ctx.conf).before_processing(ctx)
    return ctx


def found(report: dict[str, Any], **processing: str) -> Interfaces:
    return run(report, **processing).get(INTERFACES)


def with_nics(*nics: dict[str, Any], **fields: Any) -> dict[str, Any]:
    report = agent_report(**fields)
    report["inventory"]["interfaces"] = list(nics)
    return report


def test_every_nic_with_a_valid_mac_is_found_by_name() -> None:
    interfaces = found(agent_report((MAC1, MAC2), pxe=MAC1, ips={MAC1: "10.0.0.5"}))
    assert interfaces.all == {"eth0": Nic(MAC1, "10.0.0.5", True),
                              "eth1": Nic(MAC2, None, False)}


def test_macs_are_lowercased() -> None:
    assert found(agent_report((MAC1.upper(),))).all["eth0"].mac == MAC1


@pytest.mark.parametrize("nic", [
    {"name": "lo", "mac_address": MAC2},
    {"name": "eth9", "mac_address": "not-a-mac"},
    {"name": "eth9", "mac_address": "00:00:00:00:00:00"},
], ids=["loopback", "invalid-mac", "zero-mac"])
def test_nic_that_cannot_be_a_port_is_left_out(nic: dict[str, Any]) -> None:
    interfaces = found(with_nics({"name": "eth0", "mac_address": MAC1}, nic))
    assert list(interfaces.all) == ["eth0"]


def test_nic_without_a_name_is_named_by_its_position() -> None:
    interfaces = found(with_nics({"name": "eth0", "mac_address": MAC1},
                                 {"mac_address": MAC2}))
    assert interfaces.all["nic1"].mac == MAC2


@pytest.mark.parametrize(("addresses", "ip"), [
    ({"ipv4_address": "10.0.0.5/24"}, "10.0.0.5/24"),
    ({"ipv4_address": None, "ipv6_address": "2001:db8::5"}, "2001:db8::5"),
    ({"ipv4_address": "127.0.0.1", "ipv6_address": "2001:db8::5"}, "2001:db8::5"),
    ({"ipv4_address": "127.0.0.1"}, None),
    ({"ipv4_address": "not-an-ip"}, None),
], ids=["v4-with-prefix", "v6-only", "v4-loopback", "loopback-only", "garbage"])
def test_a_nic_ip_is_its_first_usable_address(addresses: dict[str, Any], ip: str | None) -> None:
    interfaces = found(with_nics({"name": "eth0", "mac_address": MAC1, **addresses}))
    assert interfaces.all["eth0"].ip == ip


def test_pxe_nic_is_the_inventory_boot_pxe_interface() -> None:
    interfaces = found(agent_report((MAC1, MAC2), pxe=MAC2))
    assert interfaces.boot_mac == MAC2
    assert [n.pxe for n in interfaces.all.values()] == [False, True]


def test_pxe_nic_falls_back_to_the_bootif_boot_interface() -> None:
    report = agent_report((MAC1, MAC2), pxe=None, boot_interface="01-52-54-00-00-00-02")
    assert found(report).boot_mac == MAC2


def test_inventory_pxe_interface_wins_over_boot_interface() -> None:
    report = agent_report((MAC1, MAC2), pxe=MAC1, boot_interface="01-52-54-00-00-00-02")
    assert found(report).boot_mac == MAC1


def test_report_without_a_valid_nic_is_refused() -> None:
    report = with_nics({"name": "lo", "mac_address": MAC1},
                       {"name": "eth0", "mac_address": "00:00:00:00:00:00"})
    with pytest.raises(HookError, match="No valid interfaces found in the ramdisk data"):
        run(report)


# --- add_ports: which NICs get a port ---------------------------------------------------------

THREE = agent_report((MAC1, MAC2, MAC3), pxe=MAC2, ips={MAC2: "10.0.0.2", MAC3: "10.0.0.3"})


def chosen(report: dict[str, Any], **processing: str) -> list[str]:
    return [nic.mac for nic in found(report, **processing).chosen.values()]


def test_pxe_mode_chooses_the_pxe_nic() -> None:
    assert chosen(THREE) == [MAC2]  # the default


def test_pxe_mode_without_a_known_pxe_nic_chooses_the_active_ones() -> None:
    report = agent_report((MAC1, MAC2), pxe=None, ips={MAC2: "10.0.0.2"})
    assert chosen(report, add_ports="pxe") == [MAC2]


def test_active_mode_chooses_the_nics_with_an_ip() -> None:
    assert chosen(THREE, add_ports="active") == [MAC2, MAC3]


def test_all_mode_chooses_every_nic() -> None:
    assert chosen(THREE, add_ports="all") == [MAC1, MAC2, MAC3]


def test_disabled_mode_chooses_none() -> None:
    assert chosen(THREE, add_ports="disabled") == []


def test_processed_data_shows_the_nics_the_chosen_ones_and_the_pxe_mac() -> None:
    data = run(agent_report((MAC1, MAC2), pxe=MAC1, ips={MAC1: "10.0.0.1"})).processed_data()
    assert data["all_interfaces"] == {"eth0": {"mac": MAC1, "ip": "10.0.0.1", "pxe": True},
                                      "eth1": {"mac": MAC2, "ip": None, "pxe": False}}
    assert data["interfaces"] == {"eth0": {"mac": MAC1, "ip": "10.0.0.1", "pxe": True}}
    assert (data["macs"], data["boot_mac"]) == ([MAC1], MAC1)
