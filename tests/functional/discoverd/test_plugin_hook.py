"""A third-party processing hook, installed as a package (tests/plugins/example_hook: its
entry point `nic_count` in `ironsight.processing_hooks`), runs in a real discoverd: it is
found by name, its declared needs are checked at start, and what it decides reaches the node
and the stored data."""

from __future__ import annotations

import httpx
import pytest

from ironsight.common import config, plugins
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins.base import load_hooks

from .helpers import introspect, ipa_payload, make_node, node

DEFAULT_HOOKS = ",".join(config.ProcessingSection().processing_hooks)


def hooks(chain: str) -> config.Config:
    return config.load(overrides={"processing": {"processing_hooks": chain}})


def test_the_installed_plugin_is_found_by_its_entry_point_name() -> None:
    assert "nic_count" in plugins.names(plugins.PROCESSING_HOOKS)


def test_the_plugin_loads_after_the_hook_it_needs() -> None:
    loaded = load_hooks(hooks(f"{DEFAULT_HOOKS},nic_count"))
    assert [h.name for h in loaded][-1] == "nic_count"


def test_the_plugin_before_the_hook_it_needs_refuses_to_load_naming_both() -> None:
    with pytest.raises(ConfigError, match=r"hook 'nic_count' needs 'interfaces', which hook "
                                          r"'validate_interfaces' provides, but "
                                          r"'validate_interfaces' comes after it"):
        load_hooks(hooks("ramdisk_error,nic_count,validate_interfaces"))


def test_the_plugin_without_the_hook_it_needs_names_the_one_to_add() -> None:
    with pytest.raises(ConfigError, match=r"hook 'nic_count' needs 'interfaces', which hook "
                                          r"'validate_interfaces' provides; add "
                                          r"'validate_interfaces' before 'nic_count'"):
        load_hooks(hooks("ramdisk_error,nic_count"))


@pytest.mark.discoverd_conf(processing={"processing_hooks": f"{DEFAULT_HOOKS},nic_count"})
async def test_the_plugin_fills_its_property_and_stores_its_fact(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=3)
    doc = await introspect(di, m, ipa_payload(m))
    assert doc["error"] is None
    assert (await node(bm, m.uuid))["properties"]["nic_count"] == 3
    processed = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    assert processed["nic_count"] == {"total": 3, "with_address": 1}
    assert processed["changes"]["properties"]["nic_count"] == 3
