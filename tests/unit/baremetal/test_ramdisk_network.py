"""A node's network_data as the ramdisk's static network parameters."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.baremetal.ramdisk_network import static_args
from ironsight.common.exceptions import InvalidParameterValue

MAC_A, MAC_B = "52:54:00:00:00:0a", "52:54:00:00:00:0b"
DEFAULT_V4 = {"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "192.0.2.1"}
DEFAULT_V6 = {"network": "::", "netmask": "::", "gateway": "fd00::1"}


def data(*networks: dict[str, Any], services: list[dict[str, Any]] | None = None
         ) -> dict[str, Any]:
    return {"links": [{"id": "a", "type": "phy", "ethernet_mac_address": MAC_A},
                      {"id": "b", "type": "phy", "ethernet_mac_address": MAC_B.upper()}],
            "networks": list(networks), "services": services or []}


def v4(link: str = "a", address: str = "192.0.2.10", **extra: Any) -> dict[str, Any]:
    return {"id": f"v4-{link}", "link": link, "type": "ipv4", "ip_address": address,
            "netmask": "255.255.255.0", **extra}


@pytest.mark.parametrize("value", [None, {}])
def test_no_network_data_leaves_the_ramdisk_on_dhcp(value: Any) -> None:
    assert static_args(value) == []


def test_dhcp_networks_leave_the_ramdisk_on_dhcp() -> None:
    assert static_args(data({"id": "d", "link": "a", "type": "ipv4_dhcp"})) == []


def test_a_static_ipv4_network_gives_address_gateway_and_boot_nic() -> None:
    assert static_args(data(v4(routes=[DEFAULT_V4]))) == [
        "BOOTIF=01-52-54-00-00-00-0a", "ironsight.ip=192.0.2.10/24",
        "ironsight.gateway=192.0.2.1"]


def test_an_address_with_its_prefix_needs_no_netmask() -> None:
    network = {"id": "n", "link": "a", "type": "ipv4", "ip_address": "192.0.2.10/25"}
    assert "ironsight.ip=192.0.2.10/25" in static_args(data(network))


def test_dual_stack_on_one_link_gives_both_families() -> None:
    v6 = {"id": "v6", "link": "a", "type": "ipv6", "ip_address": "fd00::10",
          "netmask": "ffff:ffff:ffff:ffff::", "routes": [DEFAULT_V6]}
    args = static_args(data(v4(routes=[DEFAULT_V4]), v6))
    assert args[1:] == ["ironsight.ip=192.0.2.10/24", "ironsight.gateway=192.0.2.1",
                        "ironsight.ip=fd00::10/64", "ironsight.gateway=fd00::1"]


def test_the_link_of_the_pxe_port_is_preferred() -> None:
    args = static_args(data(v4("a", "192.0.2.10"), v4("b", "198.51.100.10")), [MAC_B])
    assert args[:2] == ["BOOTIF=01-52-54-00-00-00-0b", "ironsight.ip=198.51.100.10/24"]


def test_a_route_that_is_not_the_default_gives_no_gateway() -> None:
    route = {"network": "10.0.0.0", "netmask": "255.0.0.0", "gateway": "192.0.2.254"}
    assert not [a for a in static_args(data(v4(routes=[route])))
                if a.startswith("ironsight.gateway")]


def test_dns_services_become_nameservers() -> None:
    args = static_args(data(v4(), services=[{"type": "dns", "address": "192.0.2.53"},
                                            {"type": "dns", "address": "fd00::53"},
                                            {"type": "ntp", "address": "192.0.2.123"}]))
    assert args[-1] == "ironsight.dns=192.0.2.53,fd00::53"


def test_an_address_that_is_not_one_is_refused_naming_network_data() -> None:
    with pytest.raises(InvalidParameterValue, match=r"network_data.*'nope'"):
        static_args(data(v4(address="nope")))


def test_an_ipv6_address_in_an_ipv4_network_is_refused() -> None:
    with pytest.raises(InvalidParameterValue, match="type ipv4 has the address fd00::1"):
        static_args(data({"id": "x", "link": "a", "type": "ipv4", "ip_address": "fd00::1/64"}))


@pytest.mark.parametrize("bad", [[], "text", 5])
def test_network_data_that_is_not_an_object_is_refused(bad: Any) -> None:
    if bad == []:
        assert static_args(bad) == []  # empty: nothing asked
        return
    with pytest.raises(InvalidParameterValue, match="network_data"):
        static_args(bad)


def test_networks_that_are_not_a_list_are_refused() -> None:
    with pytest.raises(InvalidParameterValue, match="'networks' is not a list"):
        static_args({"networks": 5})
