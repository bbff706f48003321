"""Inspection rules in processing (Processor._update_node): they run after the hooks, on the
node as the hooks leave it, and their changes are written with the hooks' in as few
bare-metal requests as possible; a `fail` ends the introspection in error naming the rule;
every run leaves traces in the processed data and one history event.

The bare-metal API is a `FakeBareMetal` (see test_process.py for why); the node cache, the
rule storage, the hooks and the engine are the real ones. tests/functional/discoverd/
test_rules.py runs the same over real HTTP."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd import states
from ironsight.discoverd.ironic import IronicError
from ironsight.discoverd.rules.model import Rule
from ironsight.discoverd.rules.validate import parse_ironic

from .helpers import MAC1, MAC2, UUID1, Discoverd, agent_report


async def waiting(di: Discoverd, **node: Any) -> None:
    di.ironic.add_node(UUID1, **node)
    await di.introspector.start(UUID1)
    await di.settle()
    di.ironic.calls.clear()


async def add_rule(di: Discoverd, **body: Any) -> Rule:
    return await di.rules.rules.store.create(parse_ironic(body))


async def processed(di: Discoverd, report: dict[str, Any] | None = None) -> None:
    assert await di.processor.process(report or agent_report()) == {"uuid": UUID1}
    await di.settle()


GPU_RULE = {
    "description": "big memory",
    "conditions": [{"op": "ge", "args": {"values": ["{inventory[memory][physical_mb]}",
                                                    8192]}}],
    "actions": [
        {"op": "set-attribute", "args": {"path": "/resource_class", "value": "large"}},
        {"op": "add-trait", "args": {"name": "CUSTOM_LARGE"}},
        {"op": "set-capability", "args": {"name": "big", "value": "yes"}},
        {"op": "set-port-attribute", "args": {"port_id": MAC1,
                                              "path": "/extra/rack", "value": "r1"}}]}


async def test_a_matching_rule_changes_the_node_its_traits_and_ports(di: Discoverd) -> None:
    await waiting(di)
    await add_rule(di, **GPU_RULE)
    await processed(di)
    assert await di.state(UUID1) == states.FINISHED
    node = di.ironic.nodes[UUID1]
    assert node["resource_class"] == "large"
    assert node["traits"] == ["CUSTOM_LARGE"]
    assert "big:yes" in node["properties"]["capabilities"].split(",")
    assert node["properties"]["memory_mb"] == 8192  # the hooks' changes are written too
    assert di.ironic.ports[UUID1][0]["extra"] == {"rack": "r1"}


async def test_hooks_and_rules_node_changes_go_in_one_request(di: Discoverd) -> None:
    """The node's fields, its traits and the history event: one request, one transaction."""
    await waiting(di)
    await add_rule(di, **GPU_RULE)
    await processed(di)
    writes = [c for c in di.ironic.calls
              if c[0] in ("patch_node", "add_trait", "remove_trait", "add_history",
                          "apply_changes")]
    assert [c[0] for c in writes] == ["apply_changes"]
    _, _, patch, add, remove, event = writes[0]
    assert {op["path"] for op in patch} >= {"/properties/memory_mb", "/resource_class"}
    assert (add, remove) == (["CUSTOM_LARGE"], [])
    assert event is not None and "big memory" in event


async def test_rules_see_the_hooks_properties(di: Discoverd) -> None:
    await waiting(di)
    await add_rule(di, conditions=[{"op": "eq", "args": {
        "values": ["{node.properties[cpus]}", 4]}}],
        actions=[{"op": "set-attribute", "args": {"path": "/extra/seen", "value": "4"}}])
    await processed(di, agent_report(cpus=4))
    assert di.ironic.nodes[UUID1]["extra"] == {"seen": "4"}


async def test_rules_can_set_attributes_of_ports_the_hooks_create(di: Discoverd) -> None:
    await waiting(di, macs=())
    await add_rule(di, actions=[{"op": "set-port-attribute", "args": {
        "port_id": MAC1, "path": "/extra/new", "value": "yes"}}])
    await processed(di, agent_report((MAC1, MAC2)))
    assert [p["extra"] for p in di.ironic.ports[UUID1]
            if p["address"] == MAC1] == [{"new": "yes"}]


async def test_a_fail_action_ends_in_error_naming_the_rule(di: Discoverd) -> None:
    await waiting(di)
    await add_rule(di, description="no small nodes", actions=[
        {"op": "fail", "args": {"msg": "too small"}}])
    await processed(di)
    assert await di.state(UUID1) == states.ERROR
    error = await di.error(UUID1)
    assert error is not None and "no small nodes" in error and "too small" in error
    assert not {"patch_node", "apply_changes"} & set(di.ironic.names())
    data = await di.cache.get_data(UUID1, processed=True)
    assert data["rules"][0]["failure"] is not None


async def test_traces_are_stored_with_the_processed_data(di: Discoverd) -> None:
    await waiting(di)
    await add_rule(di, **GPU_RULE)
    await add_rule(di, description="never", conditions=[
        {"op": "is-true", "args": {"value": False}}],
        actions=[{"op": "add-trait", "args": {"name": "CUSTOM_NEVER"}}])
    await processed(di)
    traces = (await di.cache.get_data(UUID1, processed=True))["rules"]
    assert {t["description"]: t["matched"] for t in traces} == {"big memory": True,
                                                                 "never": False}
    assert "inventory" in await di.cache.get_data(UUID1, processed=True)


async def test_traces_of_rules_that_did_not_match_are_stored_in_short(di: Discoverd) -> None:
    await waiting(di)
    rule = await add_rule(di, description="never", conditions=[
        {"op": "is-true", "args": {"value": True}}, {"op": "is-true", "args": {"value": False}}],
        actions=[{"op": "add-trait", "args": {"name": "CUSTOM_NEVER"}}])
    await processed(di)
    traces = (await di.cache.get_data(UUID1, processed=True))["rules"]
    assert traces == [{"uuid": rule.uuid, "description": "never", "matched": False,
                       "false_condition": 1}]


async def test_sensitive_rules_traces_hide_their_values(di: Discoverd) -> None:
    await waiting(di)
    await add_rule(di, sensitive=True, actions=[{"op": "set-attribute", "args": {
        "path": "/driver_info/ipmi_password", "value": "s3cret-value"}}])
    await processed(di)
    assert di.ironic.nodes[UUID1]["driver_info"]["ipmi_password"] == "s3cret-value"
    data = await di.cache.get_data(UUID1, processed=True)
    assert "s3cret-value" not in repr(data["rules"])
    assert "s3cret-value" not in repr(di.ironic.history)


async def test_the_history_gets_one_event_naming_matched_rules(di: Discoverd) -> None:
    await waiting(di)
    await add_rule(di, **GPU_RULE)
    await processed(di)
    [(severity, event)] = di.ironic.history[UUID1]
    assert severity == "INFO" and "big memory" in event and "add trait CUSTOM_LARGE" in event


async def test_without_a_matching_rule_nothing_is_added_to_the_history(di: Discoverd) -> None:
    await waiting(di)
    await add_rule(di, conditions=[{"op": "is-true", "args": {"value": False}}],
                   actions=[{"op": "add-trait", "args": {"name": "CUSTOM_NEVER"}}])
    await processed(di)
    assert UUID1 not in di.ironic.history


async def test_without_rules_the_processed_data_has_no_traces(di: Discoverd) -> None:
    await waiting(di)
    await processed(di)
    assert await di.state(UUID1) == states.FINISHED
    assert "rules" not in await di.cache.get_data(UUID1, processed=True)


async def test_reapply_runs_the_rules_again(di: Discoverd) -> None:
    await waiting(di)
    await processed(di)
    await add_rule(di, **GPU_RULE)
    await di.processor.reapply(UUID1, None)
    await di.settle()
    assert await di.state(UUID1) == states.FINISHED
    assert di.ironic.nodes[UUID1]["traits"] == ["CUSTOM_LARGE"]


async def test_node_changes_that_are_refused_end_the_introspection_in_error(
        di: Discoverd) -> None:
    await waiting(di)
    await add_rule(di, **GPU_RULE)
    di.ironic.fail["apply_changes"] = IronicError("Invalid trait", code=400)
    await processed(di)
    assert await di.state(UUID1) == states.ERROR
    assert di.ironic.nodes[UUID1]["traits"] == []
