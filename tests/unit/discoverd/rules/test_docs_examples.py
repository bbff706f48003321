"""The rules in docs/rules.md are valid, and do what the text says they do."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ironsight.discoverd.rules import engine, validate
from ironsight.discoverd.rules.model import Facts, MaskPolicy, Rule

from ..helpers import MAC1, MAC2
from .builders import PORT1, PORT2, facts, inventory

DOC = Path(__file__).parents[4] / "docs" / "rules.md"


def examples() -> list[Any]:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), re.S)
    return [json.loads(block) for block in blocks]


def parse(body: dict[str, Any]) -> Rule:
    if "op" in body:  # a lone condition
        return validate.parse_ironic({"conditions": [body], "actions": [
            {"op": "log", "args": {"msg": "held"}}]})
    if any("action" in a for a in body["actions"]):
        return validate.parse_inspector(body)
    return validate.parse_ironic(body)


@pytest.mark.parametrize("example", examples())
def test_every_example_is_a_valid_rule(example: Any) -> None:
    for body in example if isinstance(example, list) else [example]:
        parse(body)


def rules_containing(text: str) -> list[Rule]:
    found = [e for e in examples() if text in json.dumps(e)]
    assert found, text
    return [parse(b) for e in found for b in (e if isinstance(e, list) else [e])]


async def test_the_size_example_classes_a_small_machine() -> None:
    outcome = await engine.apply_rules(rules_containing("baremetal-small"), facts(),
                                       mask=MaskPolicy.ALWAYS)
    assert outcome.node["resource_class"] == "baremetal-small"


async def test_the_loop_example_holds_for_an_address_in_the_network() -> None:
    rules = rules_containing('"in-net"')
    elsewhere = await engine.apply_rules(rules, facts(), mask=MaskPolicy.ALWAYS)
    inside = facts()
    inside.inventory["interfaces"][1]["ipv4_address"] = "10.20.1.5"
    there = await engine.apply_rules(rules, inside, mask=MaskPolicy.ALWAYS)
    assert (elsewhere.traces[0].matched, there.traces[0].matched) == (False, True)
    assert there.traces[0].conditions[0].args["address"] == "10.20.1.5"


async def test_the_lldp_example_fills_both_ports() -> None:
    lldp = {name: {"switch_chassis_id": f"00:00:00:00:00:0{i}", "switch_port_id": f"Te1/{i}",
                   "switch_system_name": f"leaf-{i}"}
            for i, name in enumerate(("eth0", "eth1"))}
    the_facts = facts(plugin_data={"parsed_lldp": lldp})
    outcome = await engine.apply_rules(rules_containing("set-port-attribute"), the_facts,
                                       mask=MaskPolicy.ALWAYS)
    assert outcome.failure is None and outcome.warnings == []
    assert [p["address"] for p in outcome.ports] == [MAC1, MAC2]
    assert outcome.ports[1]["local_link_connection"] == {
        "switch_id": "00:00:00:00:00:01", "port_id": "Te1/1", "switch_info": "leaf-1"}
    assert {PORT1, PORT2} == set(outcome.port_patches)


def _behind_switch(port: str, nic: str = "eth0") -> Facts:
    """A machine (x86_64, 8 GiB) whose `nic` is on `port` of the lab's switch."""
    return facts(plugin_data={"parsed_lldp": {nic: {
        "switch_chassis_id": "02:00:0a:14:00:01", "switch_port_id": port}}})


async def test_the_lab_switch_example_classes_a_machine_on_a_tap_port() -> None:
    outcome = await engine.apply_rules(rules_containing("CUSTOM_LAB_SWITCH"),
                                       _behind_switch("tap2"), mask=MaskPolicy.ALWAYS)
    assert outcome.node["resource_class"] == "lab-tcg"
    assert outcome.traits_add == ["CUSTOM_LAB_SWITCH"]
    assert outcome.node["properties"]["capabilities"].split(",") == [
        "boot_mode:bios", "lab_switch_port:tap2"]


async def test_the_lab_switch_example_skips_a_machine_on_another_port() -> None:
    outcome = await engine.apply_rules(rules_containing("CUSTOM_LAB_SWITCH"),
                                       _behind_switch("Te1/7"), mask=MaskPolicy.ALWAYS)
    assert (outcome.traces[0].matched, outcome.failure) == (False, None)
    assert not outcome.changed


async def test_the_lab_switch_example_skips_another_nic_name_with_a_warning() -> None:
    outcome = await engine.apply_rules(rules_containing("CUSTOM_LAB_SWITCH"),
                                       _behind_switch("tap2", nic="ens3"),
                                       mask=MaskPolicy.ALWAYS)
    assert (outcome.traces[0].matched, outcome.failure) == (False, None)
    assert not outcome.changed
    assert any("parsed_lldp" in w and "eth0" in w for w in outcome.warnings), outcome.warnings


async def test_the_inspector_example_applies_in_its_scope() -> None:
    node_facts = facts()
    node_facts.node["properties"].update(inspection_scope="gpu", cpu_arch="x86_64")
    node_facts.plugin_data["memory_mb"] = 8192
    outcome = await engine.apply_rules(rules_containing("Successful rule"), Facts(
        node_facts.node, inventory(), node_facts.plugin_data, node_facts.ports),
        mask=MaskPolicy.ALWAYS)
    assert outcome.node["extra"]["rule_success"] == "yes"
    assert "cpus:4" in outcome.node["properties"]["capabilities"]
