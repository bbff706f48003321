"""Starting, booting and aborting introspections (Introspector).

The bare-metal API is a `FakeBareMetal` that records calls: these are unit tests of discoverd
alone, so a stand-in behind the `BareMetal` protocol is legitimate; the real bare-metal
service is exercised by tests/functional/discoverd/ (test_start.py, test_abort.py).
The node cache is real (SQLite in tmp_path).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ironsight.common.exceptions import DatabaseUnavailable, Invalid, NoFreeWorker, NotFound
from ironsight.discoverd import states
from ironsight.discoverd.introspect import ABORT_MESSAGE, VALID_STATES, bmc_addresses
from ironsight.discoverd.ironic import IronicError
from ironsight.discoverd.lifecycle import STEP_DB_ATTEMPTS

from .helpers import BMC1, MAC1, MAC2, UUID1, Build, Discoverd

OFF = {"power_state": "power off", "target_power_state": None, "last_error": None}
TURNING_OFF = {"power_state": "power on", "target_power_state": "power off", "last_error": None}

# --- BMC addresses ----------------------------------------------------------------------------


async def test_bmc_address_is_taken_from_ipmi_address() -> None:
    assert await bmc_addresses({"ipmi_address": BMC1}) == [BMC1]


async def test_first_bmc_field_set_is_used() -> None:
    info = {"ipmi_address": "", "redfish_address": "https://192.0.2.7:8000/redfish/v1",
            "drac_address": "192.0.2.8"}
    assert await bmc_addresses(info) == ["192.0.2.7"]


async def test_bracketed_ipv6_bmc_address_is_read() -> None:
    assert await bmc_addresses({"ipmi_address": "[2001:db8::15]"}) == ["2001:db8::15"]


@pytest.mark.parametrize("info", [{}, {"ipmi_address": "127.0.0.1"}, {"ipmi_address": "::1"},
                                  {"ipmi_address": 42}], ids=["none", "v4-loopback",
                                                              "v6-loopback", "not-a-string"])
async def test_no_usable_bmc_address_gives_none(info: dict[str, Any]) -> None:
    assert await bmc_addresses(info) == []


async def test_bmc_address_that_does_not_resolve_gives_none(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def unresolvable(*args: Any, **kwargs: Any) -> Any:
        raise OSError("Name or service not known")

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", unresolvable)
    assert await bmc_addresses({"ipmi_address": "bmc.example.invalid"}) == []


# --- start ------------------------------------------------------------------------------------


async def test_start_returns_the_uuid_of_a_node_named_by_name(di: Discoverd) -> None:
    di.ironic.add_node(UUID1, name="node-1")
    assert await di.introspector.start("node-1") == UUID1


async def test_start_records_the_introspection_with_its_lookup_attributes(
        di: Discoverd) -> None:
    di.ironic.add_node(UUID1, macs=(MAC1, MAC2.upper()), driver_info={"ipmi_address": BMC1})
    await di.introspector.start(UUID1)
    assert await di.state(UUID1) == states.STARTING
    assert await di.cache.introspection_macs() == {MAC1, MAC2}
    assert await di.cache.lookup([], [BMC1]) == UUID1


async def test_start_tells_the_pxe_filter_before_answering(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    await di.introspector.start(UUID1)
    assert len(di.notifications) == 1


async def test_start_boots_the_node_over_pxe_then_waits(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    await di.introspector.start(UUID1)
    await di.settle()
    asked = [call for call in di.ironic.calls if call[0] != "get_power"]
    assert asked[-2:] == [("set_boot_device_pxe", UUID1), ("set_power", UUID1, "rebooting")]
    assert await di.state(UUID1) == states.WAITING


async def test_start_waits_until_the_reboot_is_carried_out(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.power_answers = [{"power_state": "power off", "target_power_state": "power on"},
                               {"power_state": "power on", "target_power_state": None}]
    await di.introspector.start(UUID1)
    await di.settle()
    assert di.ironic.names()[-3:] == ["set_power", "get_power", "get_power"]
    assert await di.state(UUID1) == states.WAITING


async def test_a_reboot_that_did_not_happen_is_asked_for_once_more(di: Discoverd) -> None:
    """The conductor doing it died, say: the action ends without the node rebooted."""
    di.ironic.add_node(UUID1)
    di.ironic.power_answers = [
        {"power_state": "power off", "target_power_state": None,
         "last_error": "Conductor c:1 died while working on this node"},
        {"power_state": "power on", "target_power_state": None}]
    await di.introspector.start(UUID1)
    await di.settle()
    assert [c[2] for c in di.ironic.calls if c[0] == "set_power"] == ["rebooting", "rebooting"]
    assert await di.state(UUID1) == states.WAITING


async def test_a_reboot_that_fails_twice_fails_the_start_naming_why(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.power_answers = [{"power_state": "power off", "target_power_state": None,
                                "last_error": "IPMI timed out"}]
    await di.introspector.start(UUID1)
    await di.settle()
    assert await di.error(UUID1) == (f"Failed to boot node {UUID1} into the discovery "
                                     "ramdisk: IPMI timed out")


async def test_start_without_managing_boot_leaves_power_and_boot_alone(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    await di.introspector.start(UUID1, manage_boot=False)
    await di.settle()
    assert di.ironic.names() == ["get_node", "list_ports"]  # not even validate_power
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.manage_boot) == (states.WAITING, False)


@pytest.mark.parametrize("provision_state", VALID_STATES)
async def test_start_accepts_the_states_introspection_is_allowed_in(
        di: Discoverd, provision_state: str) -> None:
    di.ironic.add_node(UUID1, provision_state=provision_state)
    await di.introspector.start(UUID1)
    assert await di.state(UUID1) == states.STARTING


async def test_start_refuses_a_node_in_another_state_naming_it(di: Discoverd) -> None:
    di.ironic.add_node(UUID1, provision_state="available")
    with pytest.raises(Invalid, match='provision state "available"'):
        await di.introspector.start(UUID1)
    with pytest.raises(NotFound):
        await di.cache.get(UUID1)
    assert "set_power" not in di.ironic.names()


async def test_start_accepts_any_state_in_maintenance(di: Discoverd) -> None:
    di.ironic.add_node(UUID1, provision_state="active", maintenance=True)
    await di.introspector.start(UUID1)
    assert await di.state(UUID1) == states.STARTING


async def test_start_refuses_a_node_whose_power_interface_does_not_validate(
        di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.power_valid = (False, "Missing ipmi_address")
    with pytest.raises(Invalid, match="Failed validation of power interface for node "
                                      f"{UUID1}, reason: Missing ipmi_address"):
        await di.introspector.start(UUID1)
    with pytest.raises(NotFound):
        await di.cache.get(UUID1)


async def test_start_refuses_a_node_without_lookup_attributes(di: Discoverd) -> None:
    di.ironic.add_node(UUID1, macs=(), driver_info={"ipmi_address": "127.0.0.1"})
    with pytest.raises(Invalid, match="No lookup attributes were found"):
        await di.introspector.start(UUID1)
    with pytest.raises(NotFound):
        await di.cache.get(UUID1)


async def test_start_of_an_unknown_node_is_the_bare_metal_404(di: Discoverd) -> None:
    with pytest.raises(IronicError, match="could not be found") as raised:
        await di.introspector.start("no-such-node")
    assert raised.value.code == 404


async def test_start_with_every_worker_busy_is_refused_and_records_nothing(
        build: Build) -> None:
    di = build(workers_size=1)
    di.ironic.add_node(UUID1)
    release = asyncio.Event()
    di.workers.spawn(release.wait, name="busy")
    try:
        with pytest.raises(NoFreeWorker):
            await di.introspector.start(UUID1)
    finally:
        release.set()
    with pytest.raises(NotFound):
        await di.cache.get(UUID1)


async def test_boot_failure_ends_the_introspection_with_the_reason(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.fail["set_power"] = IronicError("Node is locked", code=409)
    await di.introspector.start(UUID1)
    await di.settle()
    intro = await di.cache.get(UUID1)
    assert intro.state == states.ERROR
    assert intro.error == (f"Failed to boot node {UUID1} into the discovery ramdisk: "
                           "Node is locked")
    assert len(di.notifications) == 2  # started, ended


async def test_crash_while_booting_ends_the_introspection_instead_of_leaving_it_starting(
        di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.fail["set_boot_device_pxe"] = RuntimeError("boom")
    await di.introspector.start(UUID1)
    await di.settle()
    assert await di.error(UUID1) == "Unexpected error during start: boom"


def database_away_for(calls: int, real: Any) -> Any:
    """`real`, raising DatabaseUnavailable on its first `calls` calls."""
    left = [calls]

    async def flaky(*args: Any) -> Any:
        if left[0]:
            left[0] -= 1
            raise DatabaseUnavailable(RuntimeError("connection refused"))
        return await real(*args)
    return flaky


async def test_a_step_that_meets_an_unavailable_database_runs_again_and_goes_on(
        di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.cache.transition = database_away_for(2, di.cache.transition)  # type: ignore[method-assign]
    await di.introspector.start(UUID1)
    await di.settle()
    assert (await di.cache.get(UUID1)).state == states.WAITING
    assert di.ironic.names().count("set_boot_device_pxe") == 3  # the step ran three times


async def test_a_step_whose_database_stays_away_ends_the_introspection_in_error(
        di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.set_boot_device_pxe = database_away_for(  # type: ignore[method-assign]
        STEP_DB_ATTEMPTS, di.ironic.set_boot_device_pxe)
    await di.introspector.start(UUID1)
    await di.settle()
    assert await di.error(UUID1) == ("Unexpected error during start: The database is "
                                     "unavailable; please retry later.")


# --- abort ------------------------------------------------------------------------------------


async def waiting(di: Discoverd, *, manage_boot: bool = True) -> None:
    di.ironic.add_node(UUID1)
    await di.introspector.start(UUID1, manage_boot=manage_boot)
    await di.settle()
    assert await di.state(UUID1) == states.WAITING
    di.ironic.calls.clear()
    di.notifications.clear()


async def test_abort_is_aborting_when_it_answers(di: Discoverd) -> None:
    await waiting(di)
    await di.introspector.abort(UUID1)
    assert await di.state(UUID1) == states.ABORTING


async def test_abort_ends_with_canceled_by_operator_and_powers_off(di: Discoverd) -> None:
    await waiting(di)
    await di.introspector.abort(UUID1)
    await di.settle()
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.ERROR, ABORT_MESSAGE)
    assert ("set_power", UUID1, "power off") in di.ironic.calls


async def test_abort_drops_the_lookup_attributes_and_tells_the_pxe_filter(
        di: Discoverd) -> None:
    await waiting(di)
    await di.introspector.abort(UUID1)
    await di.settle()
    assert await di.cache.introspection_macs() == set()
    assert len(di.notifications) == 2  # aborting, aborted


async def test_abort_of_a_starting_introspection_is_allowed(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    await di.introspector.start(UUID1)
    await di.introspector.abort(UUID1)
    await di.settle()
    assert await di.error(UUID1) == ABORT_MESSAGE
    assert di.ironic.nodes[UUID1]["power_state"] == "power off"  # the boot did not win


async def test_abort_without_managing_boot_leaves_power_alone(di: Discoverd) -> None:
    await waiting(di, manage_boot=False)
    await di.introspector.abort(UUID1)
    await di.settle()
    assert await di.error(UUID1) == ABORT_MESSAGE
    assert "set_power" not in di.ironic.names()


async def test_abort_ends_even_when_the_power_off_fails(di: Discoverd) -> None:
    await waiting(di)
    di.ironic.fail["set_power"] = IronicError("BMC unreachable", code=500)
    await di.introspector.abort(UUID1)
    await di.settle()
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.ERROR, ABORT_MESSAGE)


async def test_abort_of_a_finished_introspection_is_refused_naming_its_state(
        di: Discoverd) -> None:
    await waiting(di)
    await di.cache.transition(UUID1, "process")
    await di.cache.transition(UUID1, "finish")
    with pytest.raises(Invalid, match='in state "finished" \\(only starting or waiting\\)'):
        await di.introspector.abort(UUID1)
    assert (await di.cache.get(UUID1)).error is None


async def test_abort_of_an_unknown_introspection_is_not_found(di: Discoverd) -> None:
    with pytest.raises(NotFound):
        await di.introspector.abort(UUID1)
