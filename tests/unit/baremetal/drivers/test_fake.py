"""The fake driver: instant, in-memory power and boot device per node, inspection that
succeeds at once."""

from __future__ import annotations

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import InspectOutcome, NodeContext
from ironsight.baremetal.drivers.fake import FakeInspect, FakeManagement, FakePower
from ironsight.common import config
from ironsight.common.exceptions import InvalidParameterValue

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


async def test_boot_device_is_unset_at_first() -> None:
    assert await FakeManagement(CONF).get_boot_device(node()) == {"boot_device": None,
                                                                  "persistent": None}


async def test_boot_device_is_remembered_per_node() -> None:
    management = FakeManagement(CONF)
    await management.set_boot_device(node("a"), "pxe", persistent=True)
    assert await management.get_boot_device(node("a")) == {"boot_device": "pxe",
                                                           "persistent": True}
    assert (await management.get_boot_device(node("b")))["boot_device"] is None


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
