"""Facts and rules for the rules engine's tests: a realistic node as the bare-metal API shows
it, an ironic-python-agent inventory (helpers.agent_report), and a one-call runner."""

from __future__ import annotations

import copy
from typing import Any

from ironsight.discoverd.rules import engine, validate
from ironsight.discoverd.rules.model import ApiCall, Facts, MaskPolicy, Outcome, Rule

from ..helpers import MAC1, MAC2, UUID1, agent_report

PORT1 = "aaaaaaaa-0000-4000-8000-000000000001"
PORT2 = "aaaaaaaa-0000-4000-8000-000000000002"


def node(**fields: Any) -> dict[str, Any]:
    """A node as `GET /v1/nodes/{uuid}` returns it while it is inspected."""
    doc: dict[str, Any] = {
        "uuid": UUID1, "name": "compute-0", "driver": "ipmi", "provision_state": "inspecting",
        "driver_info": {"ipmi_address": "192.0.2.1", "ipmi_username": "admin",
                        "ipmi_password": "******"},
        "properties": {"capabilities": "boot_mode:bios"}, "extra": {}, "instance_info": {},
        "resource_class": None, "traits": [],
    }
    doc.update(fields)
    return doc


def inventory(**report: Any) -> dict[str, Any]:
    """The inventory of a two-NIC x86_64 machine with 8 GiB (agent_report's), a BMC
    password and LLDP-less interfaces."""
    inv = agent_report((MAC1, MAC2), **report)["inventory"]
    inv["bmc_password"] = "s3cret"
    inv["system_vendor"] = {"manufacturer": "ACME", "product_name": "Rack 1000",
                            "serial_number": "SN123"}
    return copy.deepcopy(inv)


def ports() -> list[dict[str, Any]]:
    return [{"uuid": PORT1, "address": MAC1, "node_uuid": UUID1, "pxe_enabled": True,
             "local_link_connection": {}, "physical_network": None, "extra": {}},
            {"uuid": PORT2, "address": MAC2, "node_uuid": UUID1, "pxe_enabled": False,
             "local_link_connection": {}, "physical_network": None, "extra": {}}]


def facts(*, plugin_data: dict[str, Any] | None = None, **node_fields: Any) -> Facts:
    return Facts(node=node(**node_fields), inventory=inventory(),
                 plugin_data=copy.deepcopy(plugin_data) if plugin_data is not None else {
                     "root_disk": {"name": "/dev/sda", "size": 100 * 1024**3}},
                 ports=ports())


def rule(*actions: dict[str, Any], conditions: list[dict[str, Any]] | None = None,
         **fields: Any) -> Rule:
    """An Ironic-dialect rule, parsed as the API would."""
    body: dict[str, Any] = {"actions": list(actions), **fields}
    if conditions is not None:
        body["conditions"] = conditions
    return validate.parse_ironic(body, built_in=not 0 <= fields.get("priority", 0) <= 9999)


async def run(*rules: Rule, the_facts: Facts | None = None,
              mask: MaskPolicy = MaskPolicy.ALWAYS, api_call: ApiCall | None = None,
              compact: bool = False) -> Outcome:
    return await engine.apply_rules(list(rules), the_facts or facts(), mask=mask,
                                    api_call=api_call, compact=compact)


def matched(outcome: Outcome) -> list[bool]:
    return [t.matched for t in outcome.traces]
