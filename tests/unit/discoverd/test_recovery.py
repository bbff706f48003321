"""Nothing stays unfinished (Recovery): timed-out introspections are ended and their nodes
powered off; what a dead process of this host left half-done is resumed at start.

The bare-metal API is a `FakeBareMetal` that records calls: these are unit tests of discoverd
alone, so a stand-in behind the `BareMetal` protocol is legitimate; the real bare-metal
service is exercised by tests/functional/discoverd/ (test_timeout.py, test_restart.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt

import pytest

from ironsight.common.clock import utcnow
from ironsight.discoverd import recovery, states
from ironsight.discoverd.db.models import members
from ironsight.discoverd.introspect import ABORT_MESSAGE
from ironsight.discoverd.members import Members
from ironsight.discoverd.node_cache import NodeCache

from .helpers import MAC1, MAC2, UUID1, UUID2, Build, Discoverd, agent_report

NO_RAW_DATA = "The service restarted while processing and no raw data was stored to resume"


def later(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Move the clock the clean-up reads `seconds` ahead."""
    moved = utcnow() + dt.timedelta(seconds=seconds)
    monkeypatch.setattr(recovery, "utcnow", lambda: moved)


async def started(di: Discoverd, uuid: str = UUID1, mac: str = MAC1, *,
                  manage_boot: bool = True) -> None:
    await di.cache.start(uuid, manage_boot=manage_boot, macs=[mac], bmc_addresses=[])


# --- timeouts ---------------------------------------------------------------------------------


async def test_clean_up_ends_introspections_older_than_the_timeout(
        di: Discoverd, monkeypatch: pytest.MonkeyPatch) -> None:
    di.ironic.add_node(UUID1)
    await started(di)
    later(monkeypatch, di.conf.introspection.timeout + 1)
    assert await di.recovery.clean_up() == [UUID1]
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.ERROR, "Introspection timeout")


async def test_clean_up_leaves_introspections_within_the_timeout(
        di: Discoverd, monkeypatch: pytest.MonkeyPatch) -> None:
    await started(di)
    later(monkeypatch, di.conf.introspection.timeout - 60)
    assert await di.recovery.clean_up() == []
    assert await di.state(UUID1) == states.STARTING


async def test_clean_up_ends_an_introspection_once(di: Discoverd,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    di.ironic.add_node(UUID1)
    await started(di)
    later(monkeypatch, di.conf.introspection.timeout + 1)
    await di.recovery.clean_up()
    assert await di.recovery.clean_up() == []


async def test_clean_up_powers_the_timed_out_nodes_off(di: Discoverd,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    di.ironic.add_node(UUID1)
    await started(di)
    later(monkeypatch, di.conf.introspection.timeout + 1)
    await di.recovery.clean_up()
    await di.settle()
    assert di.ironic.calls[0] == ("set_power", UUID1, "power off")


async def test_clean_up_leaves_power_alone_without_managed_boot(
        di: Discoverd, monkeypatch: pytest.MonkeyPatch) -> None:
    await started(di, manage_boot=False)
    later(monkeypatch, di.conf.introspection.timeout + 1)
    assert await di.recovery.clean_up() == [UUID1]
    await di.settle()
    assert di.ironic.calls == []


async def test_clean_up_tells_the_pxe_filter_once_for_all(di: Discoverd,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.add_node(UUID2, macs=(MAC2,))
    await started(di, UUID1, MAC1)
    await started(di, UUID2, MAC2)
    later(monkeypatch, di.conf.introspection.timeout + 1)
    assert len(await di.recovery.clean_up()) == 2
    assert len(di.notifications) == 1


async def test_clean_up_that_ends_nothing_tells_nobody(di: Discoverd) -> None:
    await started(di)
    await di.recovery.clean_up()
    assert di.notifications == []


async def test_timeout_zero_never_ends_introspections(build: Build,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    di = build(introspection={"timeout": "0"})
    await started(di)
    later(monkeypatch, 10**6)
    assert await di.recovery.clean_up() == []
    assert await di.state(UUID1) == states.STARTING


async def test_periodic_clean_up_runs_again_after_a_failed_pass(
        di: Discoverd, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recovery, "asyncio", di.clock)
    passes: list[None] = []
    second_pass = asyncio.Event()

    async def clean_up() -> list[str]:
        passes.append(None)
        if len(passes) == 1:
            raise RuntimeError("database went away")
        second_pass.set()
        return []

    monkeypatch.setattr(di.recovery, "clean_up", clean_up)
    task = asyncio.get_running_loop().create_task(di.recovery.run_clean_up())
    try:
        await asyncio.wait_for(second_pass.wait(), timeout=5)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert di.clock.sleeps[:2] == [di.conf.introspection.clean_up_period] * 2


# --- resuming after a restart -----------------------------------------------------------------


async def left_by(di: Discoverd, owner: str, *events: str, manage_boot: bool = True,
                  raw: dict[str, object] | None = None) -> None:
    """UUID1 as a previous process `owner` left it: started, then `events`, raw data `raw`."""
    old = NodeCache(di.cache.db)
    old.owner = owner
    await old.start(UUID1, manage_boot=manage_boot, macs=[MAC1], bmc_addresses=[])
    for event in events:
        assert await old.transition(UUID1, event, owner=owner)
    if raw is not None:
        await old.store_data(UUID1, raw, processed=False)


async def test_resume_takes_over_and_counts_what_it_resumed(di: Discoverd,
                                                            dead_owner: str) -> None:
    di.ironic.add_node(UUID1)
    await left_by(di, dead_owner)
    assert await di.recovery.resume() == 1
    assert (await di.cache.get(UUID1)).owner == di.cache.owner


async def test_resume_of_starting_boots_the_node_again(di: Discoverd, dead_owner: str) -> None:
    di.ironic.add_node(UUID1)
    await left_by(di, dead_owner)
    await di.recovery.resume()
    await di.settle()
    asked = [call for call in di.ironic.calls if call[0] != "get_power"]
    assert asked == [("set_boot_device_pxe", UUID1), ("set_power", UUID1, "rebooting")]
    assert await di.state(UUID1) == states.WAITING


async def test_resume_of_aborting_finishes_the_abort(di: Discoverd, dead_owner: str) -> None:
    di.ironic.add_node(UUID1)
    await left_by(di, dead_owner, "wait", "abort")
    await di.recovery.resume()
    await di.settle()
    assert await di.error(UUID1) == ABORT_MESSAGE
    assert ("set_power", UUID1, "power off") in di.ironic.calls


async def test_resume_of_processing_processes_the_stored_report_again(
        di: Discoverd, dead_owner: str) -> None:
    di.ironic.add_node(UUID1)
    await left_by(di, dead_owner, "process", raw=agent_report(cpus=24))
    await di.recovery.resume()
    await di.settle()
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.FINISHED, None)
    assert di.ironic.nodes[UUID1]["properties"]["cpus"] == 24
    assert ("set_power", UUID1, "power off") in di.ironic.calls


async def test_resume_of_processing_without_raw_data_ends_in_error(di: Discoverd,
                                                                   dead_owner: str) -> None:
    di.ironic.add_node(UUID1)
    await left_by(di, dead_owner, "process")
    await di.recovery.resume()
    await di.settle()
    assert await di.error(UUID1) == NO_RAW_DATA


async def test_resume_of_processing_without_raw_data_powers_the_node_off(
        di: Discoverd, dead_owner: str) -> None:
    di.ironic.add_node(UUID1)
    await left_by(di, dead_owner, "process")
    await di.recovery.resume()
    await di.settle()
    assert ("set_power", UUID1, "power off") in di.ironic.calls


async def test_resume_of_processing_without_raw_data_tells_the_pxe_filter(
        di: Discoverd, dead_owner: str) -> None:
    di.ironic.add_node(UUID1)
    await left_by(di, dead_owner, "process")
    await di.recovery.resume()
    await di.settle()
    assert len(di.notifications) == 1


async def test_resume_of_reapplying_reapplies_the_stored_report(build: Build,
                                                                dead_owner: str) -> None:
    di = build(processing={"overwrite_existing": "true"})
    di.ironic.add_node(UUID1, properties={"cpus": 1})
    await left_by(di, dead_owner, "process", "finish", "reapply", raw=agent_report(cpus=48))
    await di.recovery.resume()
    await di.settle()
    assert await di.state(UUID1) == states.FINISHED
    assert di.ironic.nodes[UUID1]["properties"]["cpus"] == 48
    assert "set_power" not in di.ironic.names()


async def test_waiting_introspection_is_not_resumed(di: Discoverd, dead_owner: str) -> None:
    await left_by(di, dead_owner, "wait")
    assert await di.recovery.resume() == 0
    assert await di.state(UUID1) == states.WAITING


async def live_replica_elsewhere(di: Discoverd, name: str) -> Members:
    """Another discoverd replica, on another host, heartbeating."""
    other = Members(di.cache.db, name, di.conf.introspection.heartbeat_timeout)
    await other.register()
    return other


async def test_introspection_of_a_live_replica_on_another_host_is_not_resumed(
        di: Discoverd) -> None:
    await live_replica_elsewhere(di, "some-other-host:4242")
    await left_by(di, "some-other-host:4242", "process", raw=agent_report())
    assert await di.recovery.resume() == 0
    await di.settle()
    assert await di.state(UUID1) == states.PROCESSING
    assert di.ironic.calls == []


async def test_introspection_of_a_replica_that_stopped_heartbeating_is_taken_over(
        di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    await live_replica_elsewhere(di, "some-other-host:4242")
    await left_by(di, "some-other-host:4242", "process", raw=agent_report())
    async with di.cache.db.begin() as conn:
        await conn.execute(members.update().values(
            heartbeat_at=utcnow() - dt.timedelta(hours=1)))
    assert await di.recovery.resume() == 1
    await di.settle()
    assert await di.state(UUID1) == states.FINISHED


async def test_introspection_of_a_process_that_never_registered_is_taken_over(
        di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    await left_by(di, "some-other-host:4242", "process", raw=agent_report())
    assert await di.recovery.resume() == 1


async def test_nothing_is_resumed_twice(di: Discoverd, dead_owner: str) -> None:
    di.ironic.add_node(UUID1)
    await left_by(di, dead_owner)
    await di.recovery.resume()
    assert await di.recovery.resume() == 0
