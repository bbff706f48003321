"""Records: a port update on its own node takes no lock; it is one conditional write made
while the node is unlocked and the port unchanged since it was read."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ironsight.baremetal.conductor import records as records_module
from ironsight.baremetal.conductor.records import Records
from ironsight.baremetal.conductor.task import TaskManager
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.drivers.loader import DriverSet
from ironsight.common.db import Database
from ironsight.common.exceptions import NodeLocked

from .helpers import history, make_node, node


@pytest.fixture
def records(db: Database, tasks: TaskManager) -> Records:
    return Records(db, tasks, DriverSet({}, {}))


@pytest.fixture(autouse=True)
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records_module, "LOCK_INTERVAL", 0.01)


async def a_port(db: Database, uuid: str) -> str:
    event = dbapi.history_row(None, "Port created", event_type="port")
    async with db.single() as conn:
        row = await dbapi.create_port(conn, uuid, {"address": "52:54:00:00:00:0a"}, event)
    assert row is not None
    return str(row["uuid"])


def set_pxe(value: bool) -> Any:
    return lambda row: {**row, "pxe_enabled": value}


async def test_a_port_update_takes_no_lock_and_leaves_the_lock_epoch_alone(
        db: Database, records: Records) -> None:
    uuid = await make_node(db)
    port = await a_port(db, uuid)
    before = (await records.get_node(uuid))["lock_epoch"]
    updated = await records.update_port(port, set_pxe(False))
    assert updated["pxe_enabled"] is False and updated["updated_at"] is not None
    assert (await records.get_port(port))["pxe_enabled"] is False
    assert (await records.get_node(uuid))["lock_epoch"] == before


async def test_a_port_update_on_a_node_locked_throughout_is_refused_and_changes_nothing(
        db: Database, records: Records, other: TaskManager) -> None:
    uuid = await make_node(db)
    port = await a_port(db, uuid)
    await other.acquire(uuid)
    with pytest.raises(NodeLocked):
        await records.update_port(port, set_pxe(False))
    assert (await records.get_port(port))["pxe_enabled"] is True


async def test_a_port_update_waits_for_a_lock_given_back_meanwhile(
        db: Database, records: Records, other: TaskManager,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records_module, "LOCK_INTERVAL", 0.2)
    uuid = await make_node(db)
    port = await a_port(db, uuid)
    held = await other.acquire(uuid)

    async def give_back() -> None:
        await asyncio.sleep(0.1)
        await held.release()

    releasing = asyncio.create_task(give_back())
    await records.update_port(port, set_pxe(False))
    await releasing
    assert (await records.get_port(port))["pxe_enabled"] is False


async def test_a_port_changed_since_read_gets_the_change_applied_to_its_new_self(
        db: Database, records: Records) -> None:
    uuid = await make_node(db)
    port = await a_port(db, uuid)
    first = True

    def change(row: dict[str, Any]) -> dict[str, Any]:
        nonlocal first
        if first:  # another writer gets in between this read and its write
            first = False
            loop_write.append(row)
        return {**row, "pxe_enabled": False}

    loop_write: list[dict[str, Any]] = []
    original = records.get_port

    async def get_port_then_someone_writes(ident: str) -> dict[str, Any]:
        row = await original(ident)
        if first:
            async with db.single() as conn:
                assert await dbapi.update_port_if_unlocked(conn, row, {"extra": {"by": "x"}})
        return row

    records.get_port = get_port_then_someone_writes  # type: ignore[method-assign]
    await records.update_port(port, change)
    after = await original(port)
    assert (after["pxe_enabled"], after["extra"]) == (False, {"by": "x"})


def set_extra(value: Any) -> Any:
    return lambda row: {**row, "extra": value}


async def test_a_node_update_takes_no_lock_and_raises_the_lock_epoch(
        db: Database, records: Records) -> None:
    uuid = await make_node(db)
    before = await records.get_node(uuid)
    updated = await records.update_node(uuid, set_extra({"rack": "r1"}))
    after = await records.get_node(uuid)
    assert (after["extra"], after["reservation"]) == ({"rack": "r1"}, None)
    assert after["lock_epoch"] == updated["lock_epoch"] == before["lock_epoch"] + 1


async def test_a_node_update_records_its_history_row(db: Database, records: Records) -> None:
    uuid = await make_node(db)
    await records.update_node(uuid, set_extra({"rack": "r1"}))
    assert "Node updated: extra" in [e["event"] for e in await history(db, uuid)]


async def test_a_node_update_on_a_node_locked_throughout_is_refused_and_changes_nothing(
        db: Database, records: Records, other: TaskManager) -> None:
    uuid = await make_node(db)
    await other.acquire(uuid)
    with pytest.raises(NodeLocked):
        await records.update_node(uuid, set_extra({"rack": "r1"}))
    assert (await records.get_node(uuid))["extra"] in ({}, None)


async def test_a_node_write_at_a_stale_epoch_is_refused(db: Database, tasks: TaskManager) -> None:
    """Read, then someone took and gave back the lock: the unlocked write must not land."""
    uuid = await make_node(db)
    row = await node(db, uuid)
    taken = await tasks.acquire(uuid)
    await taken.release()
    async with db.single() as conn:
        assert not await dbapi.update_locked_node(conn, row["id"], None, row["lock_epoch"],
                                                  {"extra": {"late": True}})
    assert (await node(db, uuid))["extra"] in ({}, None)
