"""discoverd's replicas: registered, heartbeating, and told dead by their silence or, on this
host, by their process being gone."""

from __future__ import annotations

import datetime as dt
import os
import socket

import pytest

from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.discoverd.db.models import members
from ironsight.discoverd.members import Members


@pytest.fixture
def db(db_each: Database) -> Database:
    """Each backend (heartbeats and claims run as single statements on PostgreSQL)."""
    return db_each

HOST = socket.gethostname()
ME = f"{HOST}:{os.getpid()}"


def replica(db: Database, name: str) -> Members:
    return Members(db, name, timeout=60)


async def silent_since(db: Database, name: str, ago: dt.timedelta) -> None:
    async with db.begin() as conn:
        await conn.execute(members.update().where(members.c.name == name)
                           .values(heartbeat_at=utcnow() - ago))


async def test_a_registered_replica_is_live(db: Database) -> None:
    other = replica(db, "elsewhere:7")
    await other.register()
    assert await replica(db, ME).live() == {ME, "elsewhere:7"}


async def test_a_replica_silent_past_the_timeout_is_dead(db: Database) -> None:
    other = replica(db, "elsewhere:7")
    await other.register()
    await silent_since(db, "elsewhere:7", dt.timedelta(minutes=5))
    assert await replica(db, ME).live() == {ME}


async def test_a_replica_of_this_host_whose_process_is_gone_is_dead_at_once(
        db: Database) -> None:
    gone = f"{HOST}:{2**22 + 4321}"  # above Linux's pid_max: no process has it
    async with db.begin() as conn:
        await conn.execute(members.insert().values(
            name=gone, hostname=HOST, pid=2**22 + 4321, started_at=utcnow(),
            heartbeat_at=utcnow()))
    assert gone not in await replica(db, ME).live()


async def test_heartbeat_registers_again_a_replica_given_up_for_dead(db: Database) -> None:
    me = replica(db, ME)
    await me.register()
    await me.forget_dead(set())  # another replica judged us dead (we had stalled)
    assert [m.name for m in await me.all()] == []
    await me.heartbeat()
    assert [m.name for m in await me.all()] == [ME]


async def test_forget_dead_keeps_the_live(db: Database) -> None:
    for name in ("a:1", "b:2"):
        await replica(db, name).register()
    await replica(db, "a:1").forget_dead({"a:1"})
    assert [m.name for m in await replica(db, "a:1").all()] == ["a:1"]


async def test_unregister_removes_the_row(db: Database) -> None:
    me = replica(db, ME)
    await me.register()
    await me.unregister()
    assert await me.all() == []
