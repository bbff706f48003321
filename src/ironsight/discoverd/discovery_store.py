"""discoverd's records of auto-discovery: identity claims, discovered nodes, the MACs found
not to be unique and the delivery manifest (the tables of db/models.py, 0009)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import String, bindparam, cast, delete, func, insert, or_, select, text, update
from sqlalchemy.exc import IntegrityError

from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.discoverd.db.models import claims, discovered, manifest, non_unique_macs
from ironsight.discoverd.manifest import ManifestEntry

Key = tuple[str, str]  # (kind, value): ("mac", "52:54:..."), ("system", "serial|uuid")


class DiscoveryStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # --- claims ---------------------------------------------------------------------------

    async def claim(self, node_uuid: str, keys: Sequence[Key]) -> bool:
        """Claim every key for the node, all or none: False when one is claimed already
        (another report of the same machine got there first)."""
        if not keys:
            return True
        now = utcnow()
        try:
            async with self.db.begin() as conn:
                await conn.execute(insert(claims), [
                    {"kind": k, "value": v, "node_uuid": node_uuid, "created_at": now}
                    for k, v in keys])
        except IntegrityError:
            return False
        return True

    async def owners(self, keys: Iterable[Key]) -> dict[Key, str]:
        wanted = list(keys)
        if not wanted:
            return {}
        found: dict[Key, str] = {}
        for kind in {k for k, _ in wanted}:
            values = [v for k, v in wanted if k == kind]
            async with self.db.read() as conn:
                rows = await conn.execute(select(claims.c.value, claims.c.node_uuid).where(
                    claims.c.kind == kind, claims.c.value.in_(values)))
                found.update({(kind, str(v)): str(n) for v, n in rows})
        return found

    async def settled(self, node_uuid: str, grace: float) -> bool:
        """Whether the node's creation is over (recorded, or claimed more than `grace`
        seconds ago: a creation that died half-way), not under way in another report."""
        async with self.db.read() as conn:
            if (await conn.execute(select(discovered.c.node_uuid).where(
                    discovered.c.node_uuid == node_uuid, discovered.c.complete.is_(True))
                    )).first() is not None:
                return True
            first = (await conn.execute(select(func.min(claims.c.created_at)).where(
                claims.c.node_uuid == node_uuid))).scalar()
        return first is None or (utcnow() - first).total_seconds() > grace

    async def system_keys_of(self, node_uuids: Iterable[str]) -> dict[str, str]:
        """node -> its system key, for the nodes that have one."""
        nodes = sorted(set(node_uuids))
        if not nodes:
            return {}
        async with self.db.read() as conn:
            rows = await conn.execute(select(claims.c.node_uuid, claims.c.value).where(
                claims.c.kind == "system", claims.c.node_uuid.in_(nodes)))
            return {str(n): str(v) for n, v in rows}

    async def set_system_key(self, node_uuid: str, key: str) -> None:
        """The node's report said it is machine `key` (the latest report wins: a board
        swapped keeps its node)."""
        async with self.db.begin() as conn:
            await conn.execute(delete(claims).where(
                claims.c.kind == "system",
                (claims.c.value == key) | (claims.c.node_uuid == node_uuid)))
            await conn.execute(insert(claims), {"kind": "system", "value": key,
                                                "node_uuid": node_uuid,
                                                "created_at": utcnow()})

    async def move_claims(self, keys: Sequence[Key], node_uuid: str) -> None:
        """Give `keys` to the node (a conflict resolved as the same machine)."""
        async with self.db.begin() as conn:
            for kind, value in keys:
                await conn.execute(delete(claims).where(claims.c.kind == kind,
                                                        claims.c.value == value))
                await conn.execute(insert(claims), {"kind": kind, "value": value,
                                                    "node_uuid": node_uuid,
                                                    "created_at": utcnow()})

    # --- non-unique MACs ------------------------------------------------------------------

    async def non_unique(self) -> dict[str, str]:
        async with self.db.read() as conn:
            rows = await conn.execute(select(non_unique_macs.c.mac, non_unique_macs.c.reason))
            return {str(m): str(r) for m, r in rows}

    async def mark_non_unique(self, mac: str, reason: str) -> None:
        """Record a shared MAC; its claim goes (it identifies nobody now)."""
        try:
            async with self.db.begin() as conn:
                await conn.execute(insert(non_unique_macs), {
                    "mac": mac, "reason": reason[:255], "recorded_at": utcnow()})
                await conn.execute(delete(claims).where(claims.c.kind == "mac",
                                                        claims.c.value == mac))
        except IntegrityError:
            pass  # recorded already (another replica, at the same time)

    # --- discovered nodes -----------------------------------------------------------------

    async def reserve(self, node_uuid: str, subnet: str, limit: int,
                      since: dt.datetime) -> bool:
        """Take one of the subnet's `limit` creations since `since` for the node, or False
        when they are taken: the count and the row in one transaction, which replicas take
        in turn (an advisory lock per subnet on PostgreSQL; SQLite has one writer), so that
        concurrent reports never exceed the limit."""
        async with self.db.begin() as conn:
            if self.db.backend == "postgresql":
                await conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:subnet))"),
                                   {"subnet": f"ironsight-discovery:{subnet}"})
            taken = (await conn.execute(select(func.count()).select_from(discovered).where(
                discovered.c.subnet == subnet, discovered.c.created_at >= since))).scalar()
            if int(taken or 0) >= limit:
                return False
            await conn.execute(insert(discovered), {
                "node_uuid": node_uuid, "created_at": utcnow(), "subnet": subnet,
                "seen_count": 0, "complete": False})
        return True

    async def record(self, node_uuid: str, *, source: str | None, subnet: str | None,
                     serial: str | None, system_uuid: str | None,
                     manifest_serial: str | None, bmc_probe: dict[str, Any] | None) -> None:
        """The node is created: its record complete (its reservation's row, or a new one)."""
        values = {"source_address": source, "serial": serial, "system_uuid": system_uuid,
                  "manifest_serial": manifest_serial, "bmc_probe": bmc_probe,
                  "complete": True}
        async with self.db.begin() as conn:
            done = await conn.execute(update(discovered).where(
                discovered.c.node_uuid == node_uuid).values(**values))
            if not done.rowcount:
                await conn.execute(insert(discovered), {
                    "node_uuid": node_uuid, "created_at": utcnow(), "subnet": subnet,
                    "seen_count": 0, **values})

    async def seen_again(self, node_uuid: str) -> None:
        async with self.db.single() as conn:
            await conn.execute(update(discovered).where(discovered.c.node_uuid == node_uuid)
                               .values(seen_count=discovered.c.seen_count + 1,
                                       last_seen_at=utcnow()))

    async def discovered(self, node_uuids: Iterable[str] | None = None
                         ) -> dict[str, dict[str, Any]]:
        query = select(discovered).where(discovered.c.complete.is_(True))
        if node_uuids is not None:
            query = query.where(discovered.c.node_uuid.in_(sorted(set(node_uuids))))
        async with self.db.read() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return {str(r["node_uuid"]): {
            **{k: v for k, v in r.items() if k not in ("created_at", "last_seen_at")},
            "created_at": r["created_at"].isoformat(),
            "last_seen_at": r["last_seen_at"].isoformat() if r["last_seen_at"] else None}
            for r in rows}

    async def forget(self, node_uuid: str) -> None:
        """The node is gone (deleted by an operator), or its creation failed: its records,
        its place in the rate and its claims go too."""
        async with self.db.begin() as conn:
            await conn.execute(delete(discovered).where(discovered.c.node_uuid == node_uuid))
            await conn.execute(delete(claims).where(claims.c.node_uuid == node_uuid))

    # --- manifest -------------------------------------------------------------------------

    async def import_manifest(self, entries: Sequence[ManifestEntry]) -> tuple[int, int]:
        """Add the rows, replacing those of the same serial (keeping whether they arrived).
        (added, replaced)."""
        now = utcnow()
        async with self.db.begin() as conn:
            known: set[str] = set()
            serials = [e.serial for e in entries]
            for start in range(0, len(serials), 1000):  # bound the statement's parameters
                known.update(str(s) for s in (await conn.execute(select(manifest.c.serial).where(
                    manifest.c.serial.in_(serials[start:start + 1000])))).scalars())
            new = [{"serial": e.serial, "entry": e.to_dict(), "imported_at": now}
                   for e in entries if e.serial not in known]
            if new:
                await conn.execute(insert(manifest), new)
            again = [{"b_serial": e.serial, "entry": e.to_dict(), "imported_at": now}
                     for e in entries if e.serial in known]
            if again:
                await conn.execute(update(manifest).where(
                    manifest.c.serial == bindparam("b_serial")).values(
                    entry=bindparam("entry"), imported_at=bindparam("imported_at")), again)
        return len(new), len(again)

    async def manifest_rows(self) -> list[dict[str, Any]]:
        async with self.db.read() as conn:
            rows = (await conn.execute(select(manifest).order_by(manifest.c.serial))
                    ).mappings().all()
        return [dict(r) for r in rows]

    async def manifest_entry(self, serial: str | None, macs: Sequence[str]
                             ) -> ManifestEntry | None:
        """The row of the machine: by serial, else by one of its MACs."""
        async with self.db.read() as conn:
            if serial is not None:
                row = (await conn.execute(select(manifest.c.entry).where(
                    manifest.c.serial == serial))).scalar()
                if row is not None:
                    return ManifestEntry.from_dict(row)
        if not macs:
            return None
        wanted = set(macs)
        text_of = cast(manifest.c.entry, String)  # the rows' text must name a MAC (in SQL)
        async with self.db.read() as conn:
            rows = (await conn.execute(select(manifest.c.entry).where(
                or_(*(text_of.contains(m, autoescape=True) for m in macs))))).scalars().all()
        for entry in rows:
            if wanted & set(entry.get("macs") or ()):
                return ManifestEntry.from_dict(entry)
        return None

    async def arrived(self, serial: str, node_uuid: str) -> None:
        async with self.db.single() as conn:
            await conn.execute(update(manifest).where(manifest.c.serial == serial).values(
                node_uuid=node_uuid, arrived_at=utcnow()))
