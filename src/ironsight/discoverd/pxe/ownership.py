"""Who runs the PXE side of a provisioning network: exactly one live replica.

Every discoverd replica attached to the network may serve it; one at a time does. On
PostgreSQL the owner holds a session advisory lock on a connection of its own: when its
process dies, its connection closes and PostgreSQL releases the lock, and a standby replica
that asks next takes over. The owner checks its connection at every round; when it is lost,
the lock may be someone else's, so the owner stops serving at once. Keepalives on that
connection make PostgreSQL notice a vanished owner (a host that lost its network) within
seconds rather than hours. On SQLite (replicas of one host sharing one database file) an
exclusive lock on a file next to the database does the same, the kernel releasing it with
the process.
"""

from __future__ import annotations

import abc
import contextlib
import fcntl
import hashlib
import logging
import os
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlalchemy.pool import NullPool

from ironsight.common.db import engine_url

LOG = logging.getLogger(__name__)

# PostgreSQL notices a dead owner's connection after idle + interval * count seconds.
KEEPALIVE = {"keepalives": 1, "keepalives_idle": 3, "keepalives_interval": 1,
             "keepalives_count": 3}


def lock_key(network: str) -> int:
    """The advisory lock of a provisioning network: a signed 64-bit number."""
    digest = hashlib.blake2b(f"ironsight-pxe:{network}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Ownership(abc.ABC):
    @abc.abstractmethod
    async def try_acquire(self) -> bool:
        """Take the ownership if nobody holds it; whether this replica owns it now."""

    @abc.abstractmethod
    async def still_held(self) -> bool:
        """Whether the ownership is still this replica's (checked every round)."""

    @abc.abstractmethod
    async def release(self) -> None: ...


class PostgresOwnership(Ownership):
    def __init__(self, url: str, network: str) -> None:
        self.key = lock_key(network)
        self._engine = create_async_engine(engine_url(url), poolclass=NullPool,
                                           connect_args=dict(KEEPALIVE))
        self._conn: AsyncConnection | None = None

    async def try_acquire(self) -> bool:
        if self._conn is not None:
            return await self.still_held()
        conn = await self._engine.connect()
        try:
            # The server side too: it ends a session whose client vanished.
            for option, value in (("tcp_keepalives_idle", 3), ("tcp_keepalives_interval", 1),
                                  ("tcp_keepalives_count", 3)):
                await conn.execute(text(f"SET {option} = {value}"))
            won = (await conn.execute(text("SELECT pg_try_advisory_lock(:key)"),
                                      {"key": self.key})).scalar()
            await conn.commit()
        except Exception:
            await _close(conn)
            raise
        if not won:
            await _close(conn)
            return False
        self._conn = conn
        return True

    async def still_held(self) -> bool:
        if self._conn is None:
            return False
        try:
            await self._conn.execute(text("SELECT 1"))
            await self._conn.commit()
        except Exception as exc:
            LOG.error("PXE ownership: the connection holding the lock is lost (%s)", exc)
            conn, self._conn = self._conn, None
            await _close(conn)
            return False
        return True

    async def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": self.key})
            await _close(conn)
        await self._engine.dispose()


async def _close(conn: AsyncConnection) -> None:
    with contextlib.suppress(Exception):
        await conn.close()


class FileOwnership(Ownership):
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    async def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    async def still_held(self) -> bool:
        return self._fd is not None

    async def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None


def ownership_for(database_url: str, network: str, state_dir: Path) -> Ownership:
    """The election that fits where discoverd keeps its node cache."""
    url: Any = make_url(database_url)
    if url.get_backend_name() == "postgresql":
        return PostgresOwnership(database_url, network)
    where = Path(url.database).parent if url.database and url.database != ":memory:" \
        else state_dir
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in network)
    return FileOwnership(where / f"pxe-{safe}.lock")
