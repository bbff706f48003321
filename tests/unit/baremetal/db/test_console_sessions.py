"""The console's ended sessions, on each database: a logout is known to every replica until
the cookie would have ended anyway, and no longer kept after that."""

from __future__ import annotations

import time

from sqlalchemy import func, select

from ironsight.baremetal.db.console_sessions import RevokedSessions
from ironsight.baremetal.db.models import console_revoked
from ironsight.common.db import Database

SID = "a" * 64


async def rows(db: Database) -> int:
    async with db.read() as conn:
        (count,) = next(iter(await conn.execute(
            select(func.count()).select_from(console_revoked))))
        return int(count)


async def test_a_revoked_session_is_known_as_revoked(db: Database) -> None:
    revoked = RevokedSessions(db)
    assert not await revoked.revoked(SID)
    await revoked.revoke(SID, time.time() + 3600)
    assert await revoked.revoked(SID)
    assert not await revoked.revoked("b" * 64)


async def test_revoking_twice_keeps_one_record(db: Database) -> None:
    revoked = RevokedSessions(db)
    await revoked.revoke(SID, time.time() + 3600)
    await revoked.revoke(SID, time.time() + 7200)
    assert await rows(db) == 1


async def test_a_logout_clears_the_records_of_sessions_past_their_end(db: Database) -> None:
    revoked = RevokedSessions(db)
    await revoked.revoke("c" * 64, time.time() - 1)  # its cookie has ended already
    await revoked.revoke(SID, time.time() + 3600)
    assert await rows(db) == 1
    assert await revoked.revoked(SID)
