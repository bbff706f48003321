"""The engine: order, matching, failure, what later rules see, traces and patches."""

from __future__ import annotations

import copy

from ironsight.discoverd.rules import engine, validate
from ironsight.discoverd.rules.model import MaskPolicy

from .builders import facts, matched, rule, run

TRUE = {"op": "is-true", "args": {"value": True}}
FALSE = {"op": "is-false", "args": {"value": True}}


def log(msg: str) -> dict[str, object]:
    return {"op": "log", "args": {"msg": msg}}


def fail(msg: str) -> dict[str, object]:
    return {"op": "fail", "args": {"msg": msg}}


def set_extra(key: str, value: object) -> dict[str, object]:
    return {"op": "set-attribute", "args": {"path": f"extra.{key}", "value": value}}


async def test_rules_run_by_priority_highest_first() -> None:
    outcome = await run(rule(log("low"), priority=1), rule(log("high"), priority=90),
                        rule(log("middle"), priority=50))
    assert [e.message for e in outcome.logs] == ["high", "middle", "low"]


async def test_equal_priorities_keep_the_given_order() -> None:
    outcome = await run(rule(log("a")), rule(log("b")), rule(log("c")))
    assert [e.message for e in outcome.logs] == ["a", "b", "c"]


async def test_built_in_priorities_may_be_outside_the_user_range() -> None:
    outcome = await run(rule(log("user"), priority=0), rule(log("last"), priority=-5),
                        rule(log("first"), priority=20000))
    assert [e.message for e in outcome.logs] == ["first", "user", "last"]


async def test_an_empty_condition_list_matches() -> None:
    outcome = await run(rule(log("x")))
    assert matched(outcome) == [True]


async def test_conditions_are_anded() -> None:
    outcome = await run(rule(log("x"), conditions=[TRUE, FALSE]))
    assert matched(outcome) == [False] and outcome.logs == []


async def test_evaluation_stops_at_the_first_false_condition() -> None:
    broken = {"op": "in-net", "args": {"address": "10.0.0.1", "subnet": "{node.name}"}}
    outcome = await run(rule(log("x"), conditions=[FALSE, broken]))
    assert outcome.failure is None
    assert [c.result for c in outcome.traces[0].conditions] == [False, None]


async def test_fail_stops_further_rules() -> None:
    outcome = await run(rule(fail("stop"), priority=2), rule(log("after"), priority=1))
    assert outcome.failure is not None and outcome.failure.endswith(": stop")
    assert outcome.logs == [] and len(outcome.traces) == 1


async def test_fail_stops_further_actions_of_its_rule() -> None:
    outcome = await run(rule(fail("stop"), log("after")))
    assert outcome.logs == []


async def test_changes_before_a_failure_are_in_the_outcome() -> None:
    outcome = await run(rule(set_extra("a", 1), fail("stop")))
    assert outcome.node_patch == [{"op": "add", "path": "/extra/a", "value": 1}]


async def test_later_rules_see_earlier_changes() -> None:
    outcome = await run(
        rule(set_extra("stage", "one"), priority=2),
        rule(log("saw it"), priority=1,
             conditions=[{"op": "eq", "args": {"values": ["{node.extra[stage]}", "one"]}}]))
    assert [e.message for e in outcome.logs] == ["saw it"]


async def test_later_conditions_see_traits_added_earlier() -> None:
    outcome = await run(
        rule({"op": "add-trait", "args": {"name": "CUSTOM_A"}}, priority=2),
        rule(log("has it"), priority=1,
             conditions=[{"op": "contains", "args": {"value": "{node.traits}",
                                                     "regex": "CUSTOM_A"}}]))
    assert [e.message for e in outcome.logs] == ["has it"]


async def test_the_facts_are_not_modified() -> None:
    given = facts()
    before = copy.deepcopy(given)
    await run(rule(set_extra("a", 1), {"op": "set-plugin-data",
                                       "args": {"path": "x", "value": 1}},
                   {"op": "set-port-attribute",
                    "args": {"port_id": given.ports[0]["uuid"], "path": "extra.x",
                             "value": 1}}), the_facts=given)
    assert given == before


async def test_several_actions_make_one_patch() -> None:
    outcome = await run(rule(set_extra("a", 1), set_extra("b", 2)),
                        rule({"op": "set-attribute",
                              "args": {"path": "properties.cpu_arch",
                                       "value": "{inventory[cpu][architecture]}"}}))
    assert outcome.node_patch == [
        {"op": "add", "path": "/extra/a", "value": 1},
        {"op": "add", "path": "/extra/b", "value": 2},
        {"op": "add", "path": "/properties/cpu_arch", "value": "x86_64"}]
    assert outcome.changed


async def test_nothing_changed_means_no_patch() -> None:
    outcome = await run(rule(log("only a log")))
    assert outcome.node_patch == [] and not outcome.changed


async def test_a_bad_reference_is_a_warning_in_the_trace() -> None:
    r = rule(set_extra("discovered", "{node.auto_discovered}"), description="discovery")
    outcome = await run(r)
    assert outcome.failure is None
    assert outcome.node["extra"]["discovered"] == "{node.auto_discovered}"
    assert "auto_discovered" in outcome.traces[0].warnings[0]
    assert outcome.warnings[0].startswith(f"rule 'discovery' ({r.uuid}): could not interpolate")


async def test_a_condition_that_cannot_be_evaluated_fails_the_run() -> None:
    broken = {"op": "in-net", "args": {"address": "10.0.0.1", "subnet": "{node.name}"}}
    outcome = await run(rule(log("x"), conditions=[broken]))
    assert outcome.failure is not None
    assert "condition 0 (in-net) failed: in-net: invalid subnet 'compute-0'" in outcome.failure


async def test_a_sensitive_rules_errors_hide_their_details() -> None:
    broken = {"op": "in-net", "args": {"address": "10.0.0.1", "subnet": "{node.name}"}}
    outcome = await run(rule(log("x"), conditions=[broken], sensitive=True))
    assert outcome.failure is not None and "compute-0" not in outcome.failure
    assert "condition 0 (in-net) failed (details hidden" in outcome.failure


async def test_the_trace_records_conditions_and_changes() -> None:
    r = rule(set_extra("a", "{inventory[cpu][count]}"), description="cpus",
             conditions=[{"op": "!eq", "args": {"values": ["{inventory[cpu][count]}", 0]}}])
    trace = (await run(r)).traces[0].to_dict()
    assert trace == {
        "uuid": r.uuid, "description": "cpus", "matched": True, "skipped": None,
        "conditions": [{"op": "!eq", "args": {"values": [4, 0], "force_strings": False},
                        "result": True}],
        "actions": [{"op": "set-attribute", "args": {"path": "extra.a", "value": 4},
                     "changes": [{"op": "add", "path": "/node/extra/a", "value": 4}]}],
        "warnings": [], "failure": None}


async def test_inspector_rules_apply_only_in_their_scope() -> None:
    scoped = validate.parse_inspector({"scope": "gpu", "actions": [
        {"action": "set-attribute", "path": "/extra/x", "value": 1}]})
    outside = await engine.apply_rules([scoped], facts(), mask=MaskPolicy.ALWAYS)
    inside_facts = facts()
    inside_facts.node["properties"]["inspection_scope"] = "gpu"
    inside = await engine.apply_rules([scoped], inside_facts, mask=MaskPolicy.ALWAYS)
    assert outside.node_patch == [] and outside.traces[0].skipped == "out of scope 'gpu'"
    assert inside.node_patch == [{"op": "add", "path": "/extra/x", "value": 1}]


async def test_both_dialects_apply_together() -> None:
    inspector = validate.parse_inspector({"conditions": [
        {"op": "ge", "field": "data://inventory.memory.physical_mb", "value": 8192}],
        "actions": [{"action": "add-trait", "name": "CUSTOM_8G"}]})
    outcome = await run(inspector, rule(log("ironic")))
    assert outcome.traits_add == ["CUSTOM_8G"] and len(outcome.logs) == 1


# --- compact traces (what processing stores for every report) ----------------------------


async def test_a_compact_trace_of_an_unmatched_rule_names_its_false_condition() -> None:
    r = rule(log("x"), description="big", conditions=[
        TRUE, {"op": "gt", "args": {"values": ["{inventory[memory][physical_mb]}", 1 << 20]}},
        TRUE])
    trace = (await run(r, compact=True)).traces[0].to_dict()
    assert trace == {"uuid": r.uuid, "description": "big", "matched": False,
                     "false_condition": 1}


async def test_a_compact_run_keeps_matched_rules_in_full() -> None:
    r = rule(set_extra("a", "{inventory[cpu][count]}"), conditions=[TRUE])
    compact = (await run(r, compact=True)).traces[0].to_dict()
    full = (await run(r)).traces[0].to_dict()
    assert compact == full and compact["actions"][0]["args"]["value"] == 4


async def test_a_compact_trace_keeps_the_warnings() -> None:
    r = rule(log("x"), conditions=[{"op": "eq", "args": {"values": ["{node.nope}", 1]}}])
    trace = (await run(r, compact=True)).traces[0].to_dict()
    assert trace["false_condition"] == 0 and "nope" in trace["warnings"][0]


async def test_a_compact_trace_of_a_failed_rule_is_in_full() -> None:
    broken = {"op": "in-net", "args": {"address": "10.0.0.1", "subnet": "{node.name}"}}
    trace = (await run(rule(log("x"), conditions=[broken]), compact=True)).traces[0].to_dict()
    assert trace["failure"] is not None and trace["conditions"][0]["op"] == "in-net"


async def test_a_compact_trace_of_a_rule_out_of_scope_says_why() -> None:
    scoped = validate.parse_inspector({"scope": "gpu", "actions": [
        {"action": "set-attribute", "path": "/extra/x", "value": 1}]})
    trace = (await run(scoped, compact=True)).traces[0].to_dict()
    assert trace == {"uuid": scoped.uuid, "description": None, "matched": False,
                     "skipped": "out of scope 'gpu'"}


async def test_full_traces_name_the_false_condition_too() -> None:
    outcome = await run(rule(log("x"), conditions=[TRUE, FALSE, TRUE]))
    assert outcome.traces[0].false_condition == 1
    assert [c.result for c in outcome.traces[0].conditions] == [True, False, None]


async def test_values_read_from_the_inventory_do_not_change_the_facts() -> None:
    given = facts()
    before = copy.deepcopy(given.inventory)
    await run(rule({"op": "set-plugin-data", "args": {"path": "nics",
                                                      "value": "{inventory[interfaces]}"}},
                   {"op": "extend-plugin-data", "args": {"path": "nics", "value": {"x": 1}}}),
              the_facts=given, mask=MaskPolicy.NEVER)
    assert given.inventory == before
