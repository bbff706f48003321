"""Each attempt's timeline: the phases discoverd records itself, the attempt's result and
failure code, the ramdisk's hello, and how many attempts a node keeps.

The node cache and the timeline are the real ones (SQLite; the one statement whose SQL is
the backend's, `record`, runs on both); the bare-metal API is helpers.FakeBareMetal."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ironsight.common.db import Database
from ironsight.common.exceptions import Invalid, NotFound
from ironsight.discoverd import diagnosis as d
from ironsight.discoverd import recovery, states
from ironsight.discoverd.callback_token import TokenRefused
from ironsight.discoverd.ironic import IronicError
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.timeline import Timeline

from .helpers import MAC1, MAC2, UUID1, UUID2, Build, Discoverd, agent_report


async def waiting(di: Discoverd, uuid: str = UUID1) -> None:
    di.ironic.add_node(uuid)
    await di.introspector.start(uuid)
    await di.settle()
    assert await di.state(uuid) == states.WAITING


async def latest(di: Discoverd, uuid: str = UUID1) -> dict[str, Any]:
    return (await di.cache.timeline.attempts(uuid))[-1]


def names(attempt: dict[str, Any]) -> list[str]:
    return [p["phase"] for p in attempt["phases"]]


async def test_a_started_introspection_records_its_start_and_the_power_on(
        di: Discoverd) -> None:
    await waiting(di)
    attempt = await latest(di)
    assert names(attempt) == [d.STARTED, d.POWER_ON_REQUESTED, d.POWERED_ON]
    assert (attempt["attempt"], attempt["result"], attempt["failure_code"]) == (
        1, "running", None)
    assert attempt["phases"][0]["source"] == "discoverd"


async def test_a_running_attempt_says_where_it_stands(di: Discoverd) -> None:
    await waiting(di)
    assert (await latest(di))["diagnosis"]["code"] == d.BOOT_NO_DHCP


async def test_a_successful_attempt_records_every_step_to_its_end(di: Discoverd) -> None:
    await waiting(di)
    token = await di.cache.issue_token(UUID1)
    await di.processor.hello({"macs": [MAC1]}, token, "10.0.0.5")
    await di.processor.process(agent_report(), token)
    await di.settle()
    attempt = await latest(di)
    assert names(attempt) == [d.STARTED, d.POWER_ON_REQUESTED, d.POWERED_ON, d.HELLO,
                              d.REPORT_RECEIVED, d.PROCESSING_DONE, d.POWERED_OFF, d.FINISHED]
    assert (attempt["result"], attempt["failure_code"], attempt["diagnosis"]) == (
        "success", None, None)
    assert attempt["finished_at"] == attempt["phases"][-1]["at"]
    ats = [p["at"] for p in attempt["phases"]]
    assert ats == sorted(ats)


async def test_a_ramdisk_error_ends_the_attempt_with_ramdisk_error(di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(Invalid):
        await di.processor.process(agent_report(error="disk on fire"),
                                   await di.cache.issue_token(UUID1))
    attempt = await latest(di)
    assert (attempt["result"], attempt["failure_code"]) == ("failed", d.RAMDISK_ERROR)
    assert "disk on fire" in attempt["diagnosis"]["phrase"]


async def test_a_power_on_failure_is_power_failed(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    di.ironic.fail["set_power"] = IronicError("BMC unreachable", code=500)
    await di.introspector.start(UUID1)
    await di.settle()
    attempt = await latest(di)
    assert (attempt["result"], attempt["failure_code"]) == ("failed", d.POWER_FAILED)


async def test_an_operators_abort_is_aborted(di: Discoverd) -> None:
    await waiting(di)
    await di.introspector.abort(UUID1)
    await di.settle()
    assert (await latest(di))["failure_code"] == d.ABORTED


async def test_an_abort_for_a_timeout_is_named_after_the_stalled_step(di: Discoverd) -> None:
    await waiting(di)
    await di.cache.timeline.record(UUID1, d.DHCP_LEASE, "pxe", {"ip": "10.0.0.5"})
    await di.introspector.abort(UUID1, stalled=True)
    await di.settle()
    attempt = await latest(di)
    assert (attempt["result"], attempt["failure_code"]) == ("failed", d.BOOT_NO_LOADER)
    assert attempt["diagnosis"]["phrase"].endswith("but the boot loader was never fetched")


async def test_discoverds_own_timeout_is_named_after_the_stalled_step(
        di: Discoverd, monkeypatch: pytest.MonkeyPatch) -> None:
    await waiting(di)
    for phase in (d.DHCP_LEASE, d.LOADER_FETCHED, d.SCRIPT_FETCHED, d.KERNEL_FETCHED):
        await di.cache.timeline.record(UUID1, phase, "pxe")
    moved = dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(days=1)
    monkeypatch.setattr(recovery, "utcnow", lambda: moved)
    assert await di.recovery.clean_up() == [UUID1]
    assert (await latest(di))["failure_code"] == d.BOOT_NO_RAMDISK


async def test_each_new_attempt_has_its_own_timeline(di: Discoverd) -> None:
    await waiting(di)
    await di.introspector.abort(UUID1)
    await di.settle()
    await di.introspector.start(UUID1)
    await di.settle()
    attempts = await di.cache.timeline.attempts(UUID1)
    assert [(a["attempt"], a["result"]) for a in attempts] == [(1, "failed"), (2, "running")]
    assert names(attempts[1])[0] == d.STARTED


async def test_only_the_last_timeline_history_attempts_are_kept(build: Build) -> None:
    di = build()
    di.cache.timeline.keep_runs = 2
    di.ironic.add_node(UUID1)
    for _ in range(4):
        await di.introspector.start(UUID1)
        await di.settle()
        await di.introspector.abort(UUID1)
        await di.settle()
    assert [a["attempt"] for a in await di.cache.timeline.attempts(UUID1)] == [3, 4]


async def test_a_node_never_introspected_has_no_timeline(di: Discoverd) -> None:
    with pytest.raises(NotFound):
        await di.cache.timeline.attempts(UUID2)


async def test_a_phase_of_a_node_not_under_introspection_is_not_recorded(
        db_each: Database) -> None:
    cache = NodeCache(db_each)
    assert not await cache.timeline.record(UUID2, d.DHCP_LEASE, "pxe")
    await cache.start(UUID1, manage_boot=True, macs=[MAC1], bmc_addresses=[])
    assert await cache.timeline.record(UUID1, d.DHCP_LEASE, "pxe", {"ip": "10.0.0.5"})
    phases = (await cache.timeline.attempts(UUID1))[-1]["phases"]
    assert phases[-1] == {"phase": d.DHCP_LEASE, "at": phases[-1]["at"], "source": "pxe",
                          "ip": "10.0.0.5"}


async def test_a_phase_that_cannot_be_stored_is_lost_without_failing_the_caller(
        db: Database) -> None:
    timeline = Timeline(db)
    await db.close()
    assert await timeline.record(UUID1, d.HELLO, "ramdisk") is False


# --- the ramdisk's hello ------------------------------------------------------------------


async def test_a_hello_with_the_boots_token_is_recorded_with_its_address(
        di: Discoverd) -> None:
    await waiting(di)
    token = await di.cache.issue_token(UUID1)
    assert await di.processor.hello({"macs": [MAC1.upper()]}, token, "10.0.0.5") == UUID1
    hello = (await latest(di))["phases"][-1]
    assert (hello["phase"], hello["source"], hello["address"]) == (d.HELLO, "ramdisk",
                                                                   "10.0.0.5")


async def test_a_hello_with_a_wrong_token_changes_nothing(di: Discoverd) -> None:
    await waiting(di)
    await di.cache.issue_token(UUID1)
    before = await latest(di)
    with pytest.raises(TokenRefused):
        await di.processor.hello({"macs": [MAC1]}, "not-the-token", "10.0.0.5")
    assert await latest(di) == before
    assert await di.state(UUID1) == states.WAITING


async def test_a_hello_without_a_token_changes_nothing(di: Discoverd) -> None:
    await waiting(di)
    before = await latest(di)
    with pytest.raises(TokenRefused):
        await di.processor.hello({"macs": [MAC1]}, None, "10.0.0.5")
    assert await latest(di) == before


async def test_a_hello_of_an_unknown_mac_is_not_found(di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(NotFound):
        await di.processor.hello({"macs": [MAC2]}, "x", "10.0.0.5")


@pytest.mark.parametrize("body", [{}, {"macs": []}, {"macs": "52:54:00:00:00:01"},
                                  {"macs": [1]}])
async def test_a_hello_without_macs_is_refused_naming_the_field(di: Discoverd,
                                                                body: dict[str, Any]) -> None:
    with pytest.raises(Invalid, match="'macs'"):
        await di.processor.hello(body, "x", "10.0.0.5")


async def test_a_hello_after_the_report_is_refused(di: Discoverd) -> None:
    await waiting(di)
    token = await di.cache.issue_token(UUID1)
    await di.processor.process(agent_report(), token)
    with pytest.raises(Exception) as caught:
        await di.processor.hello({"macs": [MAC1]}, token, "10.0.0.5")
    assert getattr(caught.value, "code", None) in (400, 404, 409)
    await di.settle()
    assert d.HELLO not in names(await latest(di))


# --- the ramdisk's progress beats and log ----------------------------------------------------


async def test_beats_with_the_token_keep_the_ramdisks_log_and_stage(di: Discoverd) -> None:
    await waiting(di)
    token = await di.cache.issue_token(UUID1)
    await di.processor.beat({"macs": [MAC1], "stage": "collecting", "log": "one\n"}, token,
                            "10.0.0.5")
    await di.processor.beat({"macs": [MAC1], "stage": "posting", "log": "two\n"}, token,
                            "10.0.0.5")
    found = await di.cache.timeline.logs(UUID1)
    assert (found["attempt"], found["stage"], found["log"]) == (1, "posting", "one\ntwo\n")


async def test_only_the_last_64_kib_of_the_log_are_kept(di: Discoverd) -> None:
    await waiting(di)
    token = await di.cache.issue_token(UUID1)
    for i in range(5):
        await di.processor.beat({"macs": [MAC1], "stage": "s", "log": f"{i}" * 20000}, token,
                                None)
    log = (await di.cache.timeline.logs(UUID1))["log"]
    assert len(log) == 64 * 1024 and log.endswith("4" * 20000)


async def test_a_beat_with_a_wrong_token_keeps_nothing(di: Discoverd) -> None:
    await waiting(di)
    await di.cache.issue_token(UUID1)
    with pytest.raises(TokenRefused):
        await di.processor.beat({"macs": [MAC1], "stage": "s", "log": "x"}, "nope", None)
    assert (await di.cache.timeline.logs(UUID1))["log"] == ""


@pytest.mark.parametrize(("body", "field"), [
    ({"macs": [MAC1], "log": "x"}, "stage"), ({"macs": [MAC1], "stage": "s" * 33}, "stage"),
    ({"macs": [MAC1], "stage": "s", "log": 5}, "log"), ({"stage": "s"}, "macs")])
async def test_a_bad_beat_is_refused_naming_the_field(di: Discoverd, body: dict[str, Any],
                                                      field: str) -> None:
    with pytest.raises(Invalid, match=f"'{field}'"):
        await di.processor.beat(body, "x", None)


async def test_the_log_of_an_attempt_survives_its_failure_and_goes_with_its_timeline(
        build: Build) -> None:
    di = build()
    di.cache.timeline.keep_runs = 1
    await waiting(di)
    token = await di.cache.issue_token(UUID1)
    await di.processor.beat({"macs": [MAC1], "stage": "s", "log": "last words"}, token, None)
    await di.introspector.abort(UUID1, stalled=True)
    await di.settle()
    assert (await di.cache.timeline.logs(UUID1, 1))["log"] == "last words"
    await di.introspector.start(UUID1)
    await di.settle()
    await di.introspector.abort(UUID1)
    await di.settle()
    with pytest.raises(NotFound):
        await di.cache.timeline.logs(UUID1, 1)
    assert (await di.cache.timeline.logs(UUID1))["log"] == ""
