"""The hook plugin API: typed facts on the processing context, and `load_hooks`, which
refuses a chain in which a hook needs a fact no earlier hook provides.

Third-party hooks are simulated with entry points naming classes of this module."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from ironsight.common import config
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins import base
from ironsight.discoverd.plugins.base import (
    Fact,
    HookError,
    ProcessingContext,
    ProcessingHook,
    load_hooks,
)
from ironsight.discoverd.plugins.capabilities import Capabilities
from ironsight.discoverd.plugins.facts import INTERFACES
from ironsight.discoverd.plugins.ports import Ports
from ironsight.discoverd.plugins.ramdisk_error import RamdiskError
from ironsight.discoverd.plugins.root_disk import RootDiskSelection
from ironsight.discoverd.plugins.scheduler import Scheduler
from ironsight.discoverd.plugins.validate_interfaces import ValidateInterfaces

from ..declared_hooks import with_declared
from ..helpers import agent_report, context


@dataclass(frozen=True)
class Colour:
    name: str

    def store(self) -> dict[str, Any]:
        return {"colour": self.name}


COLOUR = Fact("colour", Colour, "the node's colour (tests)", Colour.store)
SIZE = Fact("size", int, "a fact that stores nothing (tests)")

# --- facts on the context ---------------------------------------------------------------------


def test_a_fact_set_is_what_a_later_hook_gets() -> None:
    ctx = context(agent_report())
    ctx.set(COLOUR, Colour("red"))
    assert ctx.get(COLOUR) == Colour("red")
    assert ctx.has(COLOUR) and not ctx.has(SIZE)


def test_a_fact_of_the_wrong_type_is_refused_naming_both_types() -> None:
    ctx = context(agent_report())
    with pytest.raises(TypeError, match="fact 'colour' takes a Colour, not str"):
        ctx.set(COLOUR, "red")  # type: ignore[misc]
    assert not ctx.has(COLOUR)


def test_a_fact_nobody_set_is_a_hook_error_naming_it() -> None:
    with pytest.raises(HookError, match="fact 'colour' was not provided"):
        context(agent_report()).get(COLOUR)


def test_facts_of_the_same_name_are_different_facts() -> None:
    ctx = context(agent_report())
    ctx.set(SIZE, 1)
    assert not ctx.has(Fact("size", int, "another package's size"))


def test_processed_data_is_the_report_with_what_every_fact_stores() -> None:
    ctx = context(agent_report(extra="kept"))
    ctx.set(COLOUR, Colour("red"))
    ctx.set(SIZE, 3)
    assert ctx.processed_data() == {**ctx.data, "colour": "red"}


def test_what_a_fact_stores_wins_over_the_report() -> None:
    ctx = context(agent_report(colour="from the report"))
    ctx.set(COLOUR, Colour("red"))
    assert ctx.processed_data()["colour"] == "red"
    assert ctx.data["colour"] == "from the report"  # the report itself is left as it was


def test_a_fact_drops_the_report_keys_it_replaces() -> None:
    shape = Fact("shape", str, "replaces the raw `sides` (tests)", lambda v: {"shape": v},
                 replaces=("sides",))
    ctx = context(agent_report(sides=[1, 2, 3]))
    ctx.set(shape, "triangle")
    assert "sides" not in ctx.processed_data()
    assert ctx.processed_data()["shape"] == "triangle"
    assert ctx.data["sides"] == [1, 2, 3]


# --- warnings and port patches ------------------------------------------------------------------


def test_a_warning_is_logged_and_listed_once(caplog: pytest.LogCaptureFixture) -> None:
    ctx = context(agent_report(), node={"uuid": "node-7"})
    ctx.warn("LLDP: something odd")
    ctx.warn("LLDP: something odd")
    assert ctx.changes.warnings == ["LLDP: something odd"]
    assert [r.getMessage() for r in caplog.records] == ["Node node-7: LLDP: something odd"]


def test_port_patches_of_several_hooks_add_up() -> None:
    ctx = context(agent_report())
    first = {"op": "replace", "path": "/pxe_enabled", "value": False}
    second = {"op": "add", "path": "/physical_network", "value": "physnet_a"}
    ctx.changes.patch_port("p1", first)
    ctx.changes.patch_port("p1", second)
    ctx.changes.patch_port("p2")
    assert ctx.changes.port_patches == {"p1": [first, second]}


# --- properties -------------------------------------------------------------------------------


def with_properties(properties: dict[str, Any], **processing: str) -> ProcessingContext:
    return context(agent_report(), node={"properties": properties}, processing=processing)


def test_set_property_fills_a_missing_or_empty_property() -> None:
    ctx = with_properties({"b": ""})
    ctx.set_property("a", 1)
    ctx.set_property("b", 2)
    assert ctx.changes.properties == {"a": 1, "b": 2}


def test_set_property_keeps_an_existing_one() -> None:
    ctx = with_properties({"a": 5})
    ctx.set_property("a", 1)
    assert ctx.changes.properties == {}


def test_set_property_overwrites_with_overwrite_existing() -> None:
    ctx = with_properties({"a": 5}, overwrite_existing="true")
    ctx.set_property("a", 1)
    assert ctx.changes.properties == {"a": 1}


# --- load_hooks -------------------------------------------------------------------------------

SPECIAL = Fact("special", str, "a fact no built-in hook provides (tests)")


class NeedsSpecial(ProcessingHook):
    name = "needs_special"
    requires = (SPECIAL,)


class ProvidesSpecial(ProcessingHook):
    name = "provides_special"
    provides = (SPECIAL,)


class AlsoInterfaces(ProcessingHook):
    name = "also_interfaces"
    provides = (INTERFACES,)


class NotAHook:
    pass


REAL = tuple(with_declared(importlib.metadata.entry_points)(group=base.GROUP))


def ours(name: str, attribute: str) -> EntryPoint:
    return EntryPoint(name, f"{__name__}:{attribute}", base.GROUP)


FAKES = (ours("needs_special", "NeedsSpecial"), ours("provides_special", "ProvidesSpecial"),
         ours("also_interfaces", "AlsoInterfaces"), ours("not_a_hook", "NotAHook"),
         EntryPoint("broken", "ironsight_no_such_module:Hook", base.GROUP))


@pytest.fixture(autouse=True)
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed hooks plus this module's (and one that cannot be imported)."""
    def entry_points(group: str) -> Iterable[EntryPoint]:
        assert group == base.GROUP
        return (*REAL, *FAKES)

    monkeypatch.setattr(base, "entry_points", entry_points)


def chain(*names: str) -> config.Config:
    return config.load(overrides={"processing": {"processing_hooks": ",".join(names)}})


DEFAULT = ("ramdisk_error", "validate_interfaces", "root_disk_selection", "scheduler",
           "capabilities", "ports")


def test_default_chain_loads_in_order_with_the_configuration() -> None:
    conf = config.load()
    hooks = load_hooks(conf)
    assert [type(h) for h in hooks] == [RamdiskError, ValidateInterfaces, RootDiskSelection,
                                        Scheduler, Capabilities, Ports]
    assert all(h.conf is conf for h in hooks)


def test_a_third_party_hook_loads_after_the_hook_providing_its_needs() -> None:
    hooks = load_hooks(chain("provides_special", "needs_special"))
    assert [h.name for h in hooks] == ["provides_special", "needs_special"]


def test_an_unknown_hook_is_refused_listing_the_available_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown hook 'nope' \(available: .*ramdisk_error"):
        load_hooks(chain("ramdisk_error", "nope"))


def test_a_hook_before_the_one_providing_its_needs_is_refused_naming_both() -> None:
    with pytest.raises(ConfigError) as raised:
        load_hooks(chain("ramdisk_error", "validate_interfaces", "scheduler",
                         "root_disk_selection"))
    assert str(raised.value) == (
        "[processing] processing_hooks: hook 'scheduler' needs 'root_disk', which hook "
        "'root_disk_selection' provides, but 'root_disk_selection' comes after it; list "
        "'root_disk_selection' first")


def test_a_need_no_configured_hook_provides_names_the_available_provider(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "entry_points", lambda group: REAL)
    with pytest.raises(ConfigError) as raised:
        load_hooks(chain("ramdisk_error", "ports"))
    assert str(raised.value) == (
        "[processing] processing_hooks: hook 'ports' needs 'interfaces', which hook "
        "'validate_interfaces' provides; add 'validate_interfaces' before 'ports'")


def test_a_broken_unconfigured_plugin_does_not_hide_the_provider() -> None:
    with pytest.raises(ConfigError, match="which hook 'provides_special' provides; add"):
        load_hooks(chain("needs_special"))


def test_a_need_no_available_hook_provides_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "entry_points", lambda group: (*REAL, FAKES[0]))
    with pytest.raises(ConfigError, match="hook 'needs_special' needs 'special', which no "
                                          "available hook provides"):
        load_hooks(chain("needs_special"))


def test_two_hooks_providing_the_same_fact_are_refused() -> None:
    with pytest.raises(ConfigError, match="hooks 'validate_interfaces' and 'also_interfaces' "
                                          "both provide 'interfaces'; keep one"):
        load_hooks(chain("validate_interfaces", "also_interfaces"))


def test_an_entry_point_that_is_not_a_processing_hook_is_refused() -> None:
    with pytest.raises(ConfigError, match=f"'not_a_hook' \\({__name__}:NotAHook\\) is not a "
                                          "ProcessingHook"):
        load_hooks(chain("not_a_hook"))


def test_a_hook_that_cannot_be_imported_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match="hook 'broken' cannot be loaded "
                                          r"\(ironsight_no_such_module:Hook\)"):
        load_hooks(chain("broken"))


def test_ironics_lldp_hooks_load_after_the_default_chain() -> None:
    hooks = load_hooks(chain(*DEFAULT, "parse-lldp", "local-link-connection",
                             "physical-network"))
    assert [h.name for h in hooks][-3:] == ["parse-lldp", "local-link-connection",
                                            "physical-network"]


def test_local_link_connection_needs_validate_interfaces_first() -> None:
    with pytest.raises(ConfigError, match="hook 'local-link-connection' needs 'interfaces', "
                       "which hook 'validate_interfaces' provides, but 'validate_interfaces' "
                       "comes after it"):
        load_hooks(chain("local-link-connection", "validate_interfaces"))


def test_a_hook_and_its_inspector_era_name_are_refused_together() -> None:
    with pytest.raises(ConfigError, match="hooks 'parse-lldp' and 'lldp_basic' both provide "
                       "'parsed_lldp'"):
        load_hooks(chain("parse-lldp", "lldp_basic"))


def test_a_hook_may_provide_nothing_and_need_nothing() -> None:
    assert [h.name for h in load_hooks(chain("ramdisk_error"))] == ["ramdisk_error"]
