"""Secrets in the inventory and plugin data, per [inspection_rules] mask_secrets."""

from __future__ import annotations

import pytest

from ironsight.discoverd.rules import masking
from ironsight.discoverd.rules.model import MaskPolicy

from .builders import facts, rule, run

READ_SECRET = {"op": "set-attribute",
               "args": {"path": "extra.seen", "value": "{inventory[bmc_password]}"}}


def test_masked_replaces_secret_keys_at_any_depth() -> None:
    data = {"a": {"password": "p", "list": [{"auth_token": "t"}]}, "bmc_password": "b"}
    assert masking.masked(data) == {"a": {"password": "***", "list": [{"auth_token": "***"}]},
                                    "bmc_password": "***"}
    assert data["bmc_password"] == "b"


@pytest.mark.parametrize(("policy", "sensitive", "seen"), [
    (MaskPolicy.ALWAYS, False, "***"),
    (MaskPolicy.ALWAYS, True, "***"),
    (MaskPolicy.SENSITIVE, False, "***"),
    (MaskPolicy.SENSITIVE, True, "s3cret"),
    (MaskPolicy.NEVER, False, "s3cret"),
])
async def test_which_rules_see_secrets(policy: MaskPolicy, sensitive: bool, seen: str) -> None:
    outcome = await run(rule(READ_SECRET, sensitive=sensitive), mask=policy)
    assert outcome.node["extra"]["seen"] == seen


async def test_masked_plugin_data_reflects_earlier_changes() -> None:
    outcome = await run(rule({"op": "set-plugin-data", "args": {"path": "x", "value": 1}},
                             {"op": "set-attribute",
                              "args": {"path": "extra.x", "value": "{plugin_data[x]}"}}),
                        the_facts=facts(plugin_data={"password": "p"}))
    assert outcome.node["extra"]["x"] == 1
    assert outcome.plugin_data == {"password": "p", "x": 1}


async def test_a_sensitive_rules_trace_hides_its_values() -> None:
    outcome = await run(rule(READ_SECRET, sensitive=True,
                             conditions=[{"op": "eq", "args": {"values": ["{node.name}",
                                                                          "compute-0"]}}]),
                        mask=MaskPolicy.SENSITIVE)
    trace = outcome.traces[0]
    assert trace.masked and trace.matched
    assert trace.conditions[0].args == {"values": ["***", "***"], "force_strings": "***"}
    assert trace.actions[0].args == {"path": "***", "value": "***"}
    assert trace.actions[0].changes == [{"op": "add", "path": "/node/extra/seen",
                                         "value": "***"}]
    assert "s3cret" not in repr(trace.to_dict())


async def test_a_sensitive_rules_warnings_hide_their_text() -> None:
    outcome = await run(rule({"op": "log", "args": {"msg": "{inventory[secret_thing]}"}},
                             sensitive=True))
    assert outcome.traces[0].warnings == ["(hidden: the rule is sensitive) warning 1"]
    assert "secret_thing" not in " ".join(outcome.warnings)
