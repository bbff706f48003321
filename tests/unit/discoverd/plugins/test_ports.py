"""`ports`: create ports for the chosen NICs, delete per `keep_ports`, fix `pxe_enabled`.

The hook works from the `interfaces` fact, set here directly (validate_interfaces has its own
tests), and the node's existing ports."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.base import Changes
from ironsight.discoverd.plugins.facts import INTERFACES, Interfaces, Nic
from ironsight.discoverd.plugins.ports import Ports

from ..helpers import MAC1, MAC2, MAC3, agent_report, context

UNSEEN = "52:54:00:00:00:99"


def port(mac: str, pxe: bool = True) -> dict[str, Any]:
    return {"uuid": f"port-{mac[-2:]}", "address": mac, "pxe_enabled": pxe}


def nics(*, seen: tuple[str, ...] = (MAC1, MAC2), chosen: tuple[str, ...] = (MAC1,),
         boot: str | None = MAC1) -> Interfaces:
    everyone = {f"eth{i}": Nic(mac, None, mac == boot) for i, mac in enumerate(seen)}
    return Interfaces(everyone, {n: i for n, i in everyone.items() if i.mac in chosen}, boot)


def run(interfaces: Interfaces, *existing: dict[str, Any], **processing: str) -> Changes:
    ctx = context(agent_report(), ports=existing, processing=processing)
    ctx.set(INTERFACES, interfaces)
    Ports(ctx.conf).before_update(ctx)
    return ctx.changes


def test_requires_the_interfaces() -> None:
    assert Ports.requires == (INTERFACES,)


def test_chosen_nics_without_a_port_get_one_pxe_enabled_for_the_boot_nic_only() -> None:
    changes = run(nics(chosen=(MAC1, MAC2), boot=MAC2))
    assert changes.create_ports == {MAC1: False, MAC2: True}


def test_without_a_known_boot_nic_every_new_port_is_pxe_enabled() -> None:
    changes = run(nics(chosen=(MAC1, MAC2), boot=None))
    assert changes.create_ports == {MAC1: True, MAC2: True}


def test_a_nic_that_has_a_port_gets_no_second_one() -> None:
    changes = run(nics(chosen=(MAC1, MAC2)), port(MAC1.upper()))
    assert changes.create_ports == {MAC2: False}


def test_nics_not_chosen_get_no_port() -> None:
    assert run(nics(chosen=())).create_ports == {}


def test_keep_ports_all_deletes_nothing() -> None:
    assert run(nics(), port(UNSEEN), port(MAC2, pxe=False)).delete_ports == []


def test_keep_ports_present_deletes_ports_of_nics_not_seen() -> None:
    changes = run(nics(), port(MAC1), port(MAC2, pxe=False), port(UNSEEN),
                  keep_ports="present")
    assert changes.delete_ports == [port(UNSEEN)["uuid"]]


def test_keep_ports_added_keeps_only_ports_of_chosen_nics() -> None:
    changes = run(nics(chosen=(MAC1,)), port(MAC1), port(MAC2, pxe=False), port(UNSEEN),
                  keep_ports="added")
    assert changes.delete_ports == [port(MAC2)["uuid"], port(UNSEEN)["uuid"]]


def test_pxe_enabled_is_fixed_on_the_ports_of_seen_nics() -> None:
    changes = run(nics(seen=(MAC1, MAC2), boot=MAC2), port(MAC1, pxe=True),
                  port(MAC2, pxe=False))
    assert changes.port_patches == {
        port(MAC1)["uuid"]: [{"op": "replace", "path": "/pxe_enabled", "value": False}],
        port(MAC2)["uuid"]: [{"op": "replace", "path": "/pxe_enabled", "value": True}]}


def test_pxe_enabled_of_a_port_that_is_right_is_left_alone() -> None:
    assert run(nics(boot=MAC1), port(MAC1, pxe=True), port(MAC2, pxe=False)).port_patches == {}


def test_pxe_enabled_of_unseen_ports_is_left_alone() -> None:
    assert run(nics(boot=MAC1), port(MAC1), port(UNSEEN, pxe=True)).port_patches == {}


def test_a_port_being_deleted_is_not_patched() -> None:
    changes = run(nics(chosen=(MAC1,), boot=MAC1), port(MAC1), port(MAC2, pxe=True),
                  keep_ports="added")
    assert changes.delete_ports == [port(MAC2)["uuid"]]
    assert changes.port_patches == {}


def test_pxe_enabled_is_not_fixed_without_a_known_boot_nic() -> None:
    assert run(nics(boot=None), port(MAC1, pxe=False), port(MAC2, pxe=True)).port_patches == {}


def test_pxe_enabled_is_not_fixed_with_update_pxe_enabled_off() -> None:
    changes = run(nics(seen=(MAC1, MAC2, MAC3), boot=MAC2), port(MAC1, pxe=True),
                  update_pxe_enabled="false")
    assert changes.port_patches == {}
