"""The console's ended sessions (`bm_console_revoked`): written by a logout, read by every
console request, so that a logout ends the session on every replica sharing the database,
not only in the browser that logged out. A row is kept until the cookie would have ended
anyway; each logout clears the rows past that."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import delete, insert, select

from ironsight.baremetal.db.models import console_revoked
from ironsight.common.clock import utcnow
from ironsight.common.db import Database


class RevokedSessions:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def revoke(self, session: str, expires: float) -> None:
        until = dt.datetime.fromtimestamp(expires, dt.UTC).replace(tzinfo=None)
        async with self.db.begin() as conn:
            await conn.execute(delete(console_revoked).where(
                (console_revoked.c.expires_at < utcnow())
                | (console_revoked.c.session == session)))
            await conn.execute(insert(console_revoked).values(session=session,
                                                              expires_at=until))

    async def revoked(self, session: str) -> bool:
        async with self.db.read() as conn:
            rows = await conn.execute(select(console_revoked.c.session)
                                      .where(console_revoked.c.session == session))
            return any(True for _ in rows)
