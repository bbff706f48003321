"""What processing adds around the engine: the facts rules see and the history summary."""

from __future__ import annotations

from ironsight.discoverd.rules.model import ActionTrace, Outcome, RuleTrace
from ironsight.discoverd.rules.runner import patched, summary, with_properties


def test_rules_see_the_node_with_the_hooks_property_changes() -> None:
    node = {"uuid": "u", "properties": {"cpus": 2, "memory_mb": 1}}
    merged = with_properties(node, {"cpus": 8, "local_gb": 10})
    assert merged["properties"] == {"cpus": 8, "memory_mb": 1, "local_gb": 10}
    assert node["properties"] == {"cpus": 2, "memory_mb": 1}


def test_rules_see_ports_with_the_hooks_port_patches() -> None:
    port = {"uuid": "p", "pxe_enabled": False, "extra": {"a": 1}}
    assert patched(port, [{"op": "replace", "path": "/pxe_enabled", "value": True},
                          {"op": "remove", "path": "/extra/a"},
                          {"op": "add", "path": "/missing/x", "value": 1}]) == {
        "uuid": "p", "pxe_enabled": True, "extra": {}}


def _outcome(*traces: RuleTrace, failure: str | None = None) -> Outcome:
    return Outcome(node={}, plugin_data={}, ports=[], traces=list(traces), failure=failure)


def test_the_history_names_matched_rules_and_the_paths_and_traits_they_changed() -> None:
    text = summary(_outcome(
        RuleTrace("u1", "gpu", True, actions=[ActionTrace("set-attribute", {}, [
            {"op": "replace", "path": "/node/resource_class", "value": "gpu-large"}]),
            ActionTrace("add-trait", {}, [{"op": "add", "path": "/traits/-",
                                          "value": "CUSTOM_GPU"}])]),
        RuleTrace("u2", None, False),
        RuleTrace("u3", None, True)))
    assert text == ("Inspection rules matched: 'gpu' (u1): replace /node/resource_class, "
                    "add trait CUSTOM_GPU; u3: no change")
    assert "gpu-large" not in text  # values are not shown, only paths


def test_no_matched_rule_means_no_history_event() -> None:
    assert summary(_outcome(RuleTrace("u2", None, False))) is None
