"""The fake driver: instant, in-memory power and boot device per node, inspection that
succeeds at once, and Ironic's fake indicators, console and vendor methods."""

from __future__ import annotations

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import InspectOutcome, NodeContext
from ironsight.baremetal.drivers.fake import (
    FakeConsole,
    FakeInspect,
    FakeManagement,
    FakePower,
    FakeVendor,
)
from ironsight.common import config
from ironsight.common.exceptions import (
    InvalidParameterValue,
    MissingParameterValue,
    UnsupportedDriverExtension,
)

CONF = config.load()


def node(uuid: str = "node-1", power_state: str | None = None) -> NodeContext:
    return NodeContext(uuid=uuid, driver="fake", driver_info={"anything": object()},
                       power_state=power_state)


async def test_new_node_is_off_by_default() -> None:
    assert await FakePower(CONF).get_power_state(node()) == states.POWER_OFF


async def test_new_node_starts_in_its_recorded_power_state() -> None:
    assert await FakePower(CONF).get_power_state(node(power_state=states.POWER_ON)) == \
        states.POWER_ON


@pytest.mark.parametrize(("target", "result"), [
    (states.POWER_ON, states.POWER_ON),
    (states.POWER_OFF, states.POWER_OFF),
    (states.REBOOT, states.POWER_ON),
])
async def test_set_power_state_ends_in_the_target(target: str, result: str) -> None:
    power = FakePower(CONF)
    await power.set_power_state(node(), target, timeout=1)
    assert await power.get_power_state(node()) == result


async def test_power_state_is_kept_per_node() -> None:
    power = FakePower(CONF)
    await power.set_power_state(node("a"), states.POWER_ON, timeout=1)
    assert await power.get_power_state(node("b")) == states.POWER_OFF


async def test_power_state_outlives_the_recorded_one() -> None:
    power = FakePower(CONF)
    await power.set_power_state(node(), states.POWER_ON, timeout=1)
    assert await power.get_power_state(node(power_state=states.POWER_OFF)) == states.POWER_ON


async def test_unknown_power_target_is_refused() -> None:
    with pytest.raises(InvalidParameterValue, match="hibernate"):
        await FakePower(CONF).set_power_state(node(), "hibernate", timeout=1)


async def test_a_fresh_node_boots_from_pxe_not_persistently() -> None:
    assert await FakeManagement(CONF).get_boot_device(node()) == {"boot_device": "pxe",
                                                                  "persistent": False}


async def test_boot_device_is_remembered_per_node() -> None:
    management = FakeManagement(CONF)
    await management.set_boot_device(node("a"), "disk", persistent=True)
    assert await management.get_boot_device(node("a")) == {"boot_device": "disk",
                                                           "persistent": True}
    assert await management.get_boot_device(node("b")) == {"boot_device": "pxe",
                                                           "persistent": False}


async def test_unknown_boot_device_is_refused() -> None:
    with pytest.raises(InvalidParameterValue, match="floppy"):
        await FakeManagement(CONF).set_boot_device(node(), "floppy")


async def test_inspection_finishes_at_once() -> None:
    assert await FakeInspect(CONF).start(node()) == InspectOutcome.done()


def test_validate_accepts_any_driver_info() -> None:
    for interface in (FakePower(CONF), FakeManagement(CONF), FakeInspect(CONF)):
        interface.validate(node())


async def test_power_delay_makes_a_power_action_take_that_long() -> None:
    import time

    slow = NodeContext(uuid="slow", driver="fake", driver_info={"fake_power_delay": 0.05})
    started = time.monotonic()
    await FakePower(CONF).set_power_state(slow, states.POWER_ON, 10)
    assert time.monotonic() - started >= 0.05


@pytest.mark.parametrize("bad", ["soon", -1, 1e9])
def test_power_delay_must_be_a_sane_number_of_seconds(bad: object) -> None:
    odd = NodeContext(uuid="odd", driver="fake", driver_info={"fake_power_delay": bad})
    with pytest.raises(InvalidParameterValue, match="'fake_power_delay'"):
        FakePower(CONF).validate(odd)


async def test_fake_indicators_are_ironics_table() -> None:
    assert await FakeManagement(CONF).supported_indicators(node()) == {
        "chassis": {"led-0": {"readonly": True, "states": ["off", "on"]}},
        "system": {"led": {"readonly": False, "states": ["blinking", "off", "on"]}},
    }


async def test_every_fake_indicator_reads_on() -> None:
    management = FakeManagement(CONF)
    assert await management.get_indicator_state(node(), "system", "led") == "on"
    assert await management.get_indicator_state(node(), "chassis", "led-0") == "on"


async def test_an_unknown_indicator_component_is_refused() -> None:
    with pytest.raises(InvalidParameterValue, match="Invalid component disk specified"):
        await FakeManagement(CONF).get_indicator_state(node(), "disk", "led")


async def test_an_unknown_indicator_is_refused() -> None:
    with pytest.raises(InvalidParameterValue, match="Invalid indicator led-9 specified"):
        await FakeManagement(CONF).get_indicator_state(node(), "system", "led-9")


async def test_fake_indicators_cannot_be_set() -> None:
    with pytest.raises(UnsupportedDriverExtension, match="does not support "
                                                         "set_indicator_state"):
        await FakeManagement(CONF).set_indicator_state(node(), "system", "led", "off")


async def test_the_fake_console_is_reached_by_nothing() -> None:
    console = FakeConsole(CONF)
    await console.start_console(node())
    assert await console.get_console(node()) == {}
    await console.stop_console(node())


def test_fake_vendor_methods_are_ironics() -> None:
    found = {name: m.metadata() for name, m in FakeVendor(CONF).methods().items()}
    assert found["third_method_sync"] == {
        "http_methods": ["POST"], "async": False, "attach": False,
        "description": "Test if the value of bar is meow", "require_exclusive_lock": True}
    assert found["fourth_method_shared_lock"]["require_exclusive_lock"] is False
    assert sorted(found) == ["fourth_method_shared_lock", "log_passthrough",
                             "second_method", "third_method_sync"]


@pytest.mark.parametrize(("method", "word"), [
    ("second_method", "kazoo"), ("third_method_sync", "meow"),
    ("fourth_method_shared_lock", "woof")])
async def test_a_comparing_vendor_method_is_true_for_its_word_only(method: str,
                                                                   word: str) -> None:
    run = FakeVendor(CONF).methods()[method].run
    assert await run(node(), {"bar": word}) is True
    assert await run(node(), {"bar": "other"}) is False


def test_a_comparing_vendor_method_needs_bar() -> None:
    with pytest.raises(MissingParameterValue,
                       match="Parameter 'bar' not passed to method 'second_method'"):
        FakeVendor(CONF).validate(node(), "second_method", {})


def test_a_comparing_vendor_method_takes_nothing_but_bar() -> None:
    with pytest.raises(InvalidParameterValue, match="baz"):
        FakeVendor(CONF).validate(node(), "second_method", {"bar": "x", "baz": 1})


def test_log_passthrough_takes_any_arguments() -> None:
    FakeVendor(CONF).validate(node(), "log_passthrough", {"anything": [1, 2]})
