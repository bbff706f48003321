"""discoverd's replicas: any number share one database. Each registers a row and heartbeats
it; a replica silent for `[introspection] heartbeat_timeout` (or, on this host, whose process
is gone) is dead, and the others take over the steps it was running (recovery.py)."""

from __future__ import annotations

import datetime as dt
import os
import socket
from dataclasses import dataclass

from sqlalchemy import delete, insert, select, update

from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.common.process import pid_alive
from ironsight.discoverd.db.models import members


def member_name() -> str:
    """host:pid: unique per process, and what introspections record as their owner."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class Member:
    name: str
    hostname: str
    pid: int
    started_at: dt.datetime
    heartbeat_at: dt.datetime
    pxe_network: str | None
    pxe_since: dt.datetime | None


class Members:
    def __init__(self, db: Database, name: str, timeout: float) -> None:
        self.db = db
        self.name = name
        self.timeout = dt.timedelta(seconds=timeout)

    async def register(self) -> None:
        now = utcnow()
        async with self.db.begin() as conn:
            await conn.execute(delete(members).where(members.c.name == self.name))
            await conn.execute(insert(members).values(
                name=self.name, hostname=socket.gethostname(), pid=os.getpid(),
                started_at=now, heartbeat_at=now))

    async def heartbeat(self) -> None:
        """Also registers again a replica the others gave up for dead (it had stalled)."""
        async with self.db.single() as conn:
            result = await conn.execute(update(members).where(members.c.name == self.name)
                                        .values(heartbeat_at=utcnow()))
        if not result.rowcount:
            await self.register()

    async def set_pxe(self, network: str | None) -> None:
        """Record that this replica serves the PXE side of `network` (None: no longer)."""
        async with self.db.single() as conn:
            await conn.execute(update(members).where(members.c.name == self.name).values(
                pxe_network=network, pxe_since=utcnow() if network else None))

    async def unregister(self) -> None:
        async with self.db.single() as conn:
            await conn.execute(delete(members).where(members.c.name == self.name))

    async def all(self) -> list[Member]:
        async with self.db.read() as conn:
            rows = (await conn.execute(select(members).order_by(members.c.name))).mappings()
            return [Member(**row) for row in rows]

    async def live(self) -> set[str]:
        """The members that are alive as far as one can tell from here (this one is)."""
        deadline = utcnow() - self.timeout
        host = socket.gethostname()
        return {self.name} | {m.name for m in await self.all()
                               if m.heartbeat_at >= deadline
                               and not (m.hostname == host and not pid_alive(m.pid))}

    async def forget_dead(self, live: set[str]) -> None:
        """Drop the rows of members seen dead (their steps are taken over meanwhile)."""
        async with self.db.single() as conn:
            await conn.execute(delete(members).where(members.c.name.not_in(sorted(live))))
