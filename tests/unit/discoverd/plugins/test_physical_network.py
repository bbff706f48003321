"""`physical-network`: ports' `physical_network` from their NICs' addresses and a CIDR map."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins.base import Changes
from ironsight.discoverd.plugins.facts import INTERFACES, Interfaces, Nic
from ironsight.discoverd.plugins.physical_network import PhysicalNetwork, PhysnetCidrMap

from ..helpers import MAC1, MAC2, agent_report, context

MAP = "10.0.0.0/24:physnet_a,2001:db8::/64:physnet_b"


def port(mac: str, physnet: str | None = None) -> dict[str, Any]:
    return {"uuid": f"port-{mac[-2:]}", "address": mac, "physical_network": physnet}


def run(report: dict[str, Any], *ports: dict[str, Any], cidr_map: str = MAP,
        hook: type[PhysicalNetwork] = PhysicalNetwork) -> Changes:
    ctx = context(report, ports=ports, processing={"physical_network_cidr_map": cidr_map})
    macs = [i["mac_address"] for i in report["inventory"]["interfaces"]]
    ctx.set(INTERFACES, Interfaces({f"eth{i}": Nic(mac, None, i == 0)
                                    for i, mac in enumerate(macs)}, {}, MAC1))
    hook(ctx.conf).before_update(ctx)
    return ctx.changes


def replace(physnet: str) -> list[dict[str, Any]]:
    return [{"op": "replace", "path": "/physical_network", "value": physnet}]


def test_requires_the_interfaces() -> None:
    assert PhysicalNetwork.requires == (INTERFACES,)


def test_a_port_gets_the_physical_network_of_its_ipv4_network() -> None:
    changes = run(agent_report(ips={MAC1: "10.0.0.17"}), port(MAC1))
    assert changes.port_patches == {"port-01": replace("physnet_a")}


def test_an_ipv6_address_is_mapped_when_the_ipv4_one_is_not() -> None:
    report = agent_report(ips={MAC1: "192.0.2.5"})
    report["inventory"]["interfaces"][0]["ipv6_address"] = "2001:db8::42"
    assert run(report, port(MAC1)).port_patches == {"port-01": replace("physnet_b")}


def test_an_address_outside_every_network_changes_nothing() -> None:
    assert run(agent_report(ips={MAC1: "192.0.2.5"}), port(MAC1)).port_patches == {}


def test_a_nic_without_an_address_changes_nothing() -> None:
    assert run(agent_report(ips={}), port(MAC1)).port_patches == {}


def test_a_port_with_that_physical_network_already_is_not_patched() -> None:
    changes = run(agent_report(ips={MAC1: "10.0.0.17"}), port(MAC1, "physnet_a"))
    assert changes.port_patches == {}


def test_a_different_physical_network_is_replaced_as_upstream_does() -> None:
    changes = run(agent_report(ips={MAC1: "10.0.0.17"}), port(MAC1, "old"))
    assert changes.port_patches == {"port-01": replace("physnet_a")}


def test_a_nic_without_a_port_gives_the_field_of_the_port_created_for_it() -> None:
    changes = run(agent_report((MAC1, MAC2), ips={MAC1: "10.0.0.1", MAC2: "10.0.0.2"}),
                  port(MAC1, "physnet_a"))
    assert changes.port_fields == {MAC2: {"physical_network": "physnet_a"}}


def test_the_first_matching_network_wins() -> None:
    changes = run(agent_report(ips={MAC1: "10.0.0.17"}), port(MAC1),
                  cidr_map="10.0.0.0/8:wide,10.0.0.0/24:narrow")
    assert changes.port_patches == {"port-01": replace("wide")}


def test_no_map_changes_nothing() -> None:
    assert run(agent_report(ips={MAC1: "10.0.0.17"}), port(MAC1), cidr_map="").port_patches \
        == {}


@pytest.mark.parametrize("bad", ["10.0.0.0/24", "not-a-net:physnet", "10.0.0.0/24:"])
def test_a_bad_map_entry_stops_the_service_naming_the_option(bad: str) -> None:
    ctx = context(agent_report(), processing={"physical_network_cidr_map": bad})
    with pytest.raises(ConfigError, match=r"\[processing\] physical_network_cidr_map"):
        PhysicalNetwork(ctx.conf)


def test_inspector_era_name_does_the_same() -> None:
    changes = run(agent_report(ips={MAC1: "10.0.0.17"}), port(MAC1), hook=PhysnetCidrMap)
    assert PhysnetCidrMap.name == "physnet_cidr_map"
    assert changes.port_patches == {"port-01": replace("physnet_a")}
