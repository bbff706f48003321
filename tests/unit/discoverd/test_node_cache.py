"""The node cache on a real database, SQLite and PostgreSQL: introspection records, lookup,
conditional state transitions, stored data, timeouts and ownership."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import socket

import pytest

from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.common.exceptions import Conflict, Invalid, NotFound
from ironsight.discoverd import states
from ironsight.discoverd.node_cache import NodeCache

from .helpers import BMC1, BMC2, MAC1, MAC2, MAC3, UUID1, UUID2, UUID3


@pytest.fixture
def db(db_each: Database) -> Database:
    """Each backend: the node cache's transitions and upserts are other SQL on PostgreSQL."""
    return db_each


async def start(cache: NodeCache, uuid: str = UUID1, *, macs: tuple[str, ...] = (MAC1,),
                bmcs: tuple[str, ...] = (), manage_boot: bool = True) -> None:
    await cache.start(uuid, manage_boot=manage_boot, macs=macs, bmc_addresses=bmcs)


async def state(cache: NodeCache, uuid: str = UUID1) -> str:
    return (await cache.get(uuid)).state


async def move(cache: NodeCache, uuid: str, *events: str) -> None:
    for event in events:
        assert await cache.transition(uuid, event), event


# --- records ----------------------------------------------------------------------------------


async def test_unknown_introspection_is_not_found_naming_the_node(cache: NodeCache) -> None:
    with pytest.raises(NotFound, match=f"Could not find node {UUID1} in cache"):
        await cache.get(UUID1)


async def test_start_records_a_starting_introspection_owned_by_this_process(
        cache: NodeCache) -> None:
    before = utcnow()
    await start(cache, manage_boot=True)
    intro = await cache.get(UUID1)
    assert (intro.state, intro.manage_boot, intro.owner) == (states.STARTING, True, cache.owner)
    assert intro.started_at >= before
    assert (intro.finished_at, intro.error, intro.finished) == (None, None, False)


async def test_start_without_managed_boot_waits_at_once(cache: NodeCache) -> None:
    """The caller boots the node: there is nothing for discoverd to do before the report."""
    await start(cache, manage_boot=False)
    intro = await cache.get(UUID1)
    assert (intro.state, intro.manage_boot) == (states.WAITING, False)


async def test_start_returns_what_it_recorded(cache: NodeCache) -> None:
    returned = await cache.start(UUID1, manage_boot=True, macs=[MAC1], bmc_addresses=[])
    assert returned == await cache.get(UUID1)


async def test_start_again_while_waiting_restarts_it(cache: NodeCache) -> None:
    await start(cache)
    await move(cache, UUID1, "wait")
    first = await cache.get(UUID1)
    await start(cache)
    again = await cache.get(UUID1)
    assert again.state == states.STARTING
    assert again.started_at > first.started_at


@pytest.mark.parametrize("events", [(), ("process",), ("wait", "abort")],
                         ids=["starting", "processing", "aborting"])
async def test_start_is_refused_while_a_step_is_running(cache: NodeCache,
                                                        events: tuple[str, ...]) -> None:
    await start(cache)
    await move(cache, UUID1, *events)
    current = await state(cache)
    with pytest.raises(Conflict, match=f"already {current}; wait for it or abort it first"):
        await start(cache)
    assert await state(cache) == current


async def test_start_after_an_end_begins_afresh(cache: NodeCache) -> None:
    await start(cache)
    await cache.transition(UUID1, "error", error="boom")
    await cache.store_data(UUID1, {"raw": 1}, processed=False)
    await start(cache, macs=(MAC2,))
    intro = await cache.get(UUID1)
    assert (intro.state, intro.error, intro.finished_at) == (states.STARTING, None, None)
    assert await cache.lookup([MAC2], []) == UUID1


async def test_a_new_introspection_keeps_the_previous_data_readable(cache: NodeCache) -> None:
    await introspect_once(cache, {"run": 1})
    await start(cache)
    assert await cache.get_data(UUID1, processed=False) == {"run": 1}
    assert await cache.get_data(UUID1, processed=True) == {"processed": {"run": 1}}


async def test_restart_replaces_the_lookup_attributes(cache: NodeCache) -> None:
    await start(cache, macs=(MAC1,))
    await move(cache, UUID1, "wait")
    await start(cache, macs=(MAC2,))
    with pytest.raises(NotFound):
        await cache.lookup([MAC1], [])
    assert await cache.lookup([MAC2], []) == UUID1


async def test_start_with_a_mac_of_another_introspection_is_refused_naming_both(
        cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,))
    with pytest.raises(Conflict) as raised:
        await start(cache, UUID2, macs=(MAC2, MAC1))
    message = str(raised.value)
    assert f"mac {MAC1} (node {UUID1})" in message and UUID2 in message
    assert MAC2 not in message


async def test_start_with_a_bmc_address_of_another_introspection_is_refused(
        cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(), bmcs=(BMC1,))
    with pytest.raises(Conflict, match=f"bmc_address {BMC1}"):
        await start(cache, UUID2, macs=(MAC2,), bmcs=(BMC1,))


async def test_refused_start_records_nothing(cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,))
    with pytest.raises(Conflict):
        await start(cache, UUID2, macs=(MAC2, MAC1))
    with pytest.raises(NotFound):
        await cache.get(UUID2)
    with pytest.raises(NotFound):
        await cache.lookup([MAC2], [])


async def test_refused_restart_leaves_the_running_introspection_as_it_was(
        cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,))
    await move(cache, UUID1, "wait")
    await start(cache, UUID2, macs=(MAC2,))
    with pytest.raises(Conflict):
        await start(cache, UUID1, macs=(MAC1, MAC2))
    assert await state(cache, UUID1) == states.WAITING
    assert await cache.lookup([MAC1], []) == UUID1


async def test_get_many_returns_the_known_ones(cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,))
    await start(cache, UUID2, macs=(MAC2,))
    found = await cache.get_many([UUID1, UUID2, UUID3])
    assert sorted(i.uuid for i in found) == [UUID1, UUID2]


# --- listing ----------------------------------------------------------------------------------


@pytest.fixture
async def three(cache: NodeCache) -> NodeCache:
    """UUID1, UUID2, UUID3 started in that order; UUID2 waiting."""
    for uuid, mac in ((UUID1, MAC1), (UUID2, MAC2), (UUID3, MAC3)):
        await start(cache, uuid, macs=(mac,))
    await move(cache, UUID2, "wait")
    return cache


async def test_list_is_newest_first(three: NodeCache) -> None:
    found = await three.list_recent(limit=10, marker=None, state=None)
    assert [i.uuid for i in found] == [UUID3, UUID2, UUID1]


async def test_list_pages_after_the_marker(three: NodeCache) -> None:
    first = await three.list_recent(limit=2, marker=None, state=None)
    rest = await three.list_recent(limit=2, marker=first[-1].uuid, state=None)
    assert [i.uuid for i in first + rest] == [UUID3, UUID2, UUID1]


async def test_list_filters_by_state(three: NodeCache) -> None:
    found = await three.list_recent(limit=10, marker=None, state=[states.WAITING])
    assert [i.uuid for i in found] == [UUID2]


async def test_list_with_an_unknown_marker_is_invalid(three: NodeCache) -> None:
    with pytest.raises(Invalid, match="marker: node nope could not be found"):
        await three.list_recent(limit=10, marker="nope", state=None)


# --- lookup -----------------------------------------------------------------------------------


async def test_lookup_by_mac(cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,))
    await start(cache, UUID2, macs=(MAC2,))
    assert await cache.lookup([MAC2, "02:00:00:00:00:99"], []) == UUID2


async def test_lookup_by_bmc_address(cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,), bmcs=(BMC1,))
    await start(cache, UUID2, macs=(MAC2,), bmcs=(BMC2,))
    assert await cache.lookup(["02:00:00:00:00:99"], [BMC2]) == UUID2


async def test_lookup_without_any_address_is_not_found(cache: NodeCache) -> None:
    await start(cache)
    with pytest.raises(NotFound, match="no MAC address and no BMC address"):
        await cache.lookup([], ["", ""])


async def test_lookup_matching_nothing_is_not_found_naming_the_attributes(
        cache: NodeCache) -> None:
    await start(cache)
    with pytest.raises(NotFound, match=f"'mac': \\['{MAC2}'\\]"):
        await cache.lookup([MAC2], [])


async def test_lookup_with_more_matching_attributes_wins(cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1, MAC2))
    await start(cache, UUID2, macs=(MAC3,), bmcs=(BMC1,))
    assert await cache.lookup([MAC1, MAC2], [BMC1]) == UUID1


async def test_lookup_with_tied_scores_is_an_error_naming_the_nodes(cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,))
    await start(cache, UUID2, macs=(MAC2,), bmcs=(BMC1,))
    with pytest.raises(Invalid, match=f"Multiple nodes match .*: {UUID1}, {UUID2}"):
        await cache.lookup([MAC1], [BMC1])


async def test_a_mac_reported_twice_counts_once(cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,))
    await start(cache, UUID2, macs=(MAC2,), bmcs=(BMC1,))
    with pytest.raises(Invalid, match="Multiple nodes match"):
        await cache.lookup([MAC1, MAC1], [BMC1])


async def test_an_ended_introspection_is_not_found_again(cache: NodeCache) -> None:
    await start(cache, macs=(MAC1,), bmcs=(BMC1,))
    await move(cache, UUID1, "wait", "process", "finish")
    with pytest.raises(NotFound):
        await cache.lookup([MAC1], [BMC1])


# --- transitions ------------------------------------------------------------------------------


async def test_allowed_transition_moves_the_introspection(cache: NodeCache) -> None:
    await start(cache)
    assert await cache.transition(UUID1, "wait") is True
    assert await state(cache) == states.WAITING


async def test_transition_from_a_state_that_does_not_allow_it_changes_nothing(
        cache: NodeCache) -> None:
    await start(cache)
    await move(cache, UUID1, "wait", "process")
    assert await cache.transition(UUID1, "abort") is False
    assert await state(cache) == states.PROCESSING


async def test_transition_of_an_unknown_introspection_is_false(cache: NodeCache) -> None:
    assert await cache.transition(UUID1, "wait") is False


async def test_a_callback_before_wait_is_saved_may_still_process(cache: NodeCache) -> None:
    await start(cache)
    assert await cache.transition(UUID1, "process")


async def test_two_racing_transitions_only_one_wins(cache: NodeCache) -> None:
    await start(cache)
    await move(cache, UUID1, "wait")
    won = await asyncio.gather(cache.transition(UUID1, "process"),
                               cache.transition(UUID1, "abort"))
    assert sorted(won) == [False, True]


async def test_final_state_records_the_end_and_the_error(cache: NodeCache) -> None:
    await start(cache)
    await cache.transition(UUID1, "error", error="boom")
    intro = await cache.get(UUID1)
    assert (intro.state, intro.error, intro.finished) == (states.ERROR, "boom", True)
    assert intro.finished_at is not None and intro.finished_at >= intro.started_at


async def test_final_state_drops_the_lookup_attributes(cache: NodeCache) -> None:
    await start(cache, macs=(MAC1, MAC2))
    assert await cache.introspection_macs() == {MAC1, MAC2}
    await cache.transition(UUID1, "timeout", error="Introspection timeout")
    assert await cache.introspection_macs() == set()


async def test_active_state_keeps_the_given_owner(cache: NodeCache) -> None:
    await start(cache)
    await move(cache, UUID1, "wait")
    await cache.transition(UUID1, "process", owner="other-host:7")
    assert (await cache.get(UUID1)).owner == "other-host:7"


async def test_waiting_is_owned_by_nobody(cache: NodeCache) -> None:
    await start(cache)
    await cache.transition(UUID1, "wait", owner="ignored:1")
    assert (await cache.get(UUID1)).owner is None


async def test_reapply_clears_the_previous_error(cache: NodeCache) -> None:
    await start(cache)
    await cache.transition(UUID1, "error", error="boom")
    await cache.transition(UUID1, "reapply")
    intro = await cache.get(UUID1)
    assert (intro.state, intro.error) == (states.REAPPLYING, None)


# --- timeouts ---------------------------------------------------------------------------------


async def test_timed_out_ends_unfinished_introspections_started_before_the_deadline(
        cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,), manage_boot=False)
    await start(cache, UUID2, macs=(MAC2,))
    await move(cache, UUID2, "wait")
    ended = await cache.timed_out(utcnow() + dt.timedelta(seconds=1))
    assert sorted(ended) == [(UUID1, False), (UUID2, True)]
    for uuid in (UUID1, UUID2):
        intro = await cache.get(uuid)
        assert (intro.state, intro.error) == (states.ERROR, "Introspection timeout")


async def test_timed_out_leaves_introspections_started_after_the_deadline(
        cache: NodeCache) -> None:
    await start(cache)
    assert await cache.timed_out(utcnow() - dt.timedelta(seconds=60)) == []
    assert await state(cache) == states.STARTING


async def test_timed_out_leaves_finished_introspections(cache: NodeCache) -> None:
    await start(cache)
    await move(cache, UUID1, "process", "finish")
    assert await cache.timed_out(utcnow() + dt.timedelta(seconds=1)) == []
    assert (await cache.get(UUID1)).error is None


# --- ownership (restarts) ---------------------------------------------------------------------


def previous_process(db: Database, owner: str) -> NodeCache:
    """A node cache as another process saw it (its owner name)."""
    cache = NodeCache(db)
    cache.owner = owner
    return cache


async def test_active_introspection_of_a_dead_process_of_this_host_is_found(
        cache: NodeCache, dead_owner: str) -> None:
    await start(previous_process(cache.db, dead_owner))
    assert [i.uuid for i in await cache.owned_by_dead_processes()] == [UUID1]


async def test_active_introspection_without_owner_is_found(cache: NodeCache) -> None:
    await start(cache)
    await cache.transition(UUID1, "process", owner=None)
    assert [i.uuid for i in await cache.owned_by_dead_processes()] == [UUID1]


async def test_own_introspections_are_not_taken_over(cache: NodeCache) -> None:
    await start(cache)
    assert await cache.owned_by_dead_processes() == []


async def test_introspections_of_a_live_process_are_not_taken_over(cache: NodeCache) -> None:
    await start(previous_process(cache.db, f"{socket.gethostname()}:{os.getppid()}"))
    assert await cache.owned_by_dead_processes() == []


async def test_introspections_of_another_host_are_not_taken_over(cache: NodeCache) -> None:
    await start(previous_process(cache.db, "some-other-host:12345"))
    assert await cache.owned_by_dead_processes() == []


async def test_waiting_introspection_is_not_taken_over(cache: NodeCache,
                                                       dead_owner: str) -> None:
    old = previous_process(cache.db, dead_owner)
    await start(old)
    await old.transition(UUID1, "wait")
    assert await cache.owned_by_dead_processes() == []


async def test_claim_takes_over_in_the_state_seen(cache: NodeCache, dead_owner: str) -> None:
    await start(previous_process(cache.db, dead_owner))
    (seen,) = await cache.owned_by_dead_processes()
    assert await cache.claim(seen) is True
    assert (await cache.get(UUID1)).owner == cache.owner


async def test_claim_fails_when_the_state_moved_meanwhile(cache: NodeCache,
                                                          dead_owner: str) -> None:
    await start(previous_process(cache.db, dead_owner))
    (seen,) = await cache.owned_by_dead_processes()
    await previous_process(cache.db, dead_owner).transition(UUID1, "wait")
    assert await cache.claim(seen) is False
    assert (await cache.get(UUID1)).owner is None


async def test_an_abandoned_introspection_is_claimed_once(cache: NodeCache,
                                                          dead_owner: str) -> None:
    await start(previous_process(cache.db, dead_owner))
    other = previous_process(cache.db, f"{socket.gethostname()}:{os.getppid()}")
    ours, theirs = await cache.owned_by_dead_processes(), await other.owned_by_dead_processes()
    won = [await cache.claim(ours[0]), await other.claim(theirs[0])]
    assert won == [True, False]


# --- stored data ------------------------------------------------------------------------------


async def test_raw_and_processed_data_are_kept_apart(cache: NodeCache) -> None:
    await start(cache)
    await cache.store_data(UUID1, {"kind": "raw"}, processed=False)
    await cache.store_data(UUID1, {"kind": "processed"}, processed=True)
    assert await cache.get_data(UUID1, processed=False) == {"kind": "raw"}
    assert await cache.get_data(UUID1, processed=True) == {"kind": "processed"}


async def test_storing_data_again_replaces_it(cache: NodeCache) -> None:
    await start(cache)
    await cache.store_data(UUID1, {"n": 1}, processed=True)
    await cache.store_data(UUID1, {"n": 2}, processed=True)
    assert await cache.get_data(UUID1, processed=True) == {"n": 2}


async def test_an_accepted_report_is_processing_with_the_report_stored(
        cache: NodeCache) -> None:
    await start(cache)
    await move(cache, UUID1, "wait")
    assert await cache.accept_report(UUID1, {"report": 1}, "me") is True
    intro = await cache.get(UUID1)
    assert (intro.state, intro.owner) == (states.PROCESSING, "me")
    assert await cache.get_data(UUID1, processed=False) == {"report": 1}


async def test_a_report_not_accepted_stores_nothing_and_keeps_the_earlier_one(
        cache: NodeCache) -> None:
    await start(cache)
    await move(cache, UUID1, "wait")
    assert await cache.accept_report(UUID1, {"report": 1}, "me") is True
    assert await cache.accept_report(UUID1, {"report": 2}, "late") is False
    assert await cache.get_data(UUID1, processed=False) == {"report": 1}
    assert (await cache.get(UUID1)).owner == "me"


async def test_a_report_for_a_finished_introspection_is_not_stored(cache: NodeCache) -> None:
    await start(cache)
    await move(cache, UUID1, "wait", "process", "finish")
    assert await cache.accept_report(UUID1, {"report": 3}, "me") is False
    with pytest.raises(NotFound):
        await cache.get_data(UUID1, processed=False)


async def test_a_report_accepted_without_storing_is_processing(cache: NodeCache) -> None:
    await start(cache)
    await move(cache, UUID1, "wait")
    assert await cache.accept_report(UUID1, None, "me") is True
    assert (await cache.get(UUID1)).state == states.PROCESSING


@pytest.mark.parametrize(("processed", "kind"), [(True, "processed"), (False, "unprocessed")])
async def test_missing_data_is_not_found_naming_its_kind(cache: NodeCache, processed: bool,
                                                         kind: str) -> None:
    await start(cache)
    with pytest.raises(NotFound, match=f"No {kind} introspection data stored for node {UUID1}"):
        await cache.get_data(UUID1, processed=processed)


async def test_introspection_macs_are_those_in_progress(cache: NodeCache) -> None:
    await start(cache, UUID1, macs=(MAC1,))
    await start(cache, UUID2, macs=(MAC2, MAC3))
    await cache.transition(UUID1, "error", error="boom")
    assert await cache.introspection_macs() == {MAC2, MAC3}


# --- data history -----------------------------------------------------------------------------


async def introspect_once(cache: NodeCache, report: dict[str, int]) -> None:
    """One whole introspection of UUID1 that stores `report` and its processed data."""
    await start(cache)
    await move(cache, UUID1, "wait")
    assert await cache.accept_report(UUID1, report, "me") is True
    await cache.store_data(UUID1, {"processed": report}, processed=True)
    await move(cache, UUID1, "finish")


async def test_each_start_of_a_node_is_a_new_run(cache: NodeCache) -> None:
    for n in (1, 2, 3):
        await introspect_once(cache, {"run": n})
    assert [r.run for r in await cache.history(UUID1)] == [3, 2, 1]


async def test_the_latest_data_is_the_newest_runs(cache: NodeCache) -> None:
    for n in (1, 2):
        await introspect_once(cache, {"run": n})
    assert await cache.get_data(UUID1, processed=False) == {"run": 2}
    assert await cache.get_data(UUID1, processed=True) == {"processed": {"run": 2}}


async def test_each_runs_data_stays_readable_by_its_run(cache: NodeCache) -> None:
    for n in (1, 2):
        await introspect_once(cache, {"run": n})
    assert await cache.get_run_data(UUID1, 1, processed=False) == {"run": 1}
    assert await cache.get_run_data(UUID1, 1, processed=True) == {"processed": {"run": 1}}


async def test_a_node_keeps_the_data_of_its_last_runs_only(db: Database) -> None:
    cache = NodeCache(db, keep=2)
    for n in (1, 2, 3):
        await introspect_once(cache, {"run": n})
    assert [r.run for r in await cache.history(UUID1)] == [3, 2]
    with pytest.raises(NotFound, match="run 1"):
        await cache.get_run_data(UUID1, 1, processed=False)


async def test_runs_without_a_report_do_not_count_against_the_kept_ones(db: Database) -> None:
    cache = NodeCache(db, keep=2)
    await introspect_once(cache, {"run": 1})
    await start(cache)
    await move(cache, UUID1, "timeout")  # run 2 never reported
    await introspect_once(cache, {"run": 3})
    assert [r.run for r in await cache.history(UUID1)] == [3, 1]


async def test_history_tells_when_each_run_started_and_its_data_was_stored(
        cache: NodeCache) -> None:
    await introspect_once(cache, {"run": 1})
    intro = await cache.get(UUID1)
    [run] = await cache.history(UUID1)
    assert run.started_at == intro.started_at
    assert run.received_at is not None and run.processed_at is not None
    assert intro.started_at <= run.received_at <= run.processed_at


async def test_processed_data_goes_to_the_run_of_the_report_it_came_from(
        cache: NodeCache) -> None:
    """A reapply after a run that stored no report processes the previous run's report."""
    await introspect_once(cache, {"run": 1})
    await start(cache)
    await move(cache, UUID1, "timeout")
    await cache.store_data(UUID1, {"reprocessed": 1}, processed=True)
    assert [r.run for r in await cache.history(UUID1)] == [1]
    assert await cache.get_run_data(UUID1, 1, processed=True) == {"reprocessed": 1}


async def test_a_nodes_history_is_empty_without_stored_data(cache: NodeCache) -> None:
    await start(cache)
    assert await cache.history(UUID1) == []
