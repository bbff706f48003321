"""An introspection's end in error and its power off (Lifecycle), with the same stand-ins
as test_introspect.py: a `FakeBareMetal` that records calls (the real bare-metal service is
exercised by tests/functional/discoverd/), a real node cache (SQLite in tmp_path) and a clock
whose sleeps take no time.
"""

from __future__ import annotations

from ironsight.discoverd import states
from ironsight.discoverd.ironic import IronicError

from .helpers import MAC1, UUID1, Build, Discoverd

OFF = {"power_state": "power off", "target_power_state": None, "last_error": None}
TURNING_OFF = {"power_state": "power on", "target_power_state": "power off", "last_error": None}


# --- fail -------------------------------------------------------------------------------------


async def test_fail_ends_the_introspection_with_the_message(di: Discoverd) -> None:
    await di.cache.start(UUID1, manage_boot=True, macs=[MAC1], bmc_addresses=[])
    assert await di.introspector.lifecycle.fail(UUID1, "it broke") is True
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.ERROR, "it broke")
    assert len(di.notifications) == 1


async def test_fail_of_an_ended_introspection_changes_nothing(di: Discoverd) -> None:
    await di.cache.start(UUID1, manage_boot=True, macs=[MAC1], bmc_addresses=[])
    await di.introspector.lifecycle.fail(UUID1, "first")
    assert await di.introspector.lifecycle.fail(UUID1, "second") is False
    assert await di.error(UUID1) == "first"
    assert len(di.notifications) == 1


# --- power off --------------------------------------------------------------------------------


async def test_power_off_returns_once_the_node_reports_off(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.power_answers = [TURNING_OFF, TURNING_OFF, OFF]
    assert await di.introspector.lifecycle.power_off(UUID1, why="test") is None
    assert di.ironic.names() == ["set_power", "get_power", "get_power", "get_power"]


async def test_power_off_polls_with_a_growing_delay_up_to_a_second(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.power_answers = [TURNING_OFF] * 6 + [OFF]
    await di.introspector.lifecycle.power_off(UUID1, why="test")
    assert di.clock.sleeps == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]


async def test_power_off_reports_the_bare_metal_error(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.power_answers = [{"power_state": "power on", "target_power_state": None,
                                "last_error": "IPMI timed out"}]
    assert await di.introspector.lifecycle.power_off(UUID1, why="abort") == (
        f"Failed to power off node {UUID1} (abort): IPMI timed out")


async def test_power_off_gives_up_at_its_timeout(build: Build) -> None:
    di = build(introspection={"power_off_timeout": "30"})
    di.ironic.add_node(UUID1)
    di.ironic.power_answers = [TURNING_OFF]
    assert await di.introspector.lifecycle.power_off(UUID1, why="abort") == (
        f"Node {UUID1} did not power off within 30 s (abort)")
    assert 30 < sum(di.clock.sleeps) < 32


async def test_power_off_refused_by_the_api_is_reported(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.fail["set_power"] = IronicError("Node is locked", code=409)
    assert await di.introspector.lifecycle.power_off(UUID1, why="abort") == (
        f"Failed to power off node {UUID1} (abort): Node is locked")
