"""Every node's document (fleet/document.py), kept in memory and brought up to date before
each fleet query, so that a query over 10,000 nodes evaluates and never parses.

Up to date by stamps, not by time: when each node last changed on the bare-metal side
(`GET /v1/fleet/stamps?since=`: only the nodes changed since the previous answer, by index,
and how many there are, which tells of deletions) and when each introspection last changed
here (a start, a report, a state, a reapply). Only the nodes whose stamp changed are fetched
again: their API fields (one by one when few, the detail listing when many) and their latest
processed data (one statement per batch).

Repeated values are shared between documents (`_Interner`): a fleet is made of a few models,
and their CPU flags, PCI devices and strings repeat node after node. Documents are never
modified after they are built, which makes the sharing safe.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import String, and_, bindparam, cast, func, or_, select

from ironsight.common.cel import Program
from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.discoverd.db.models import data, introspections
from ironsight.discoverd.fleet import document, query
from ironsight.discoverd.fleet.query import Evaluated
from ironsight.discoverd.ironic import BareMetal

LOG = logging.getLogger(__name__)

DETAIL_LISTING_ABOVE = 50  # more changed nodes than this: the detail listing, not one GET each
BATCH = 500  # uuids per data statement (under every database's parameter limit)
BUILD_BATCH = 200  # documents built per trip to a worker thread
FETCH_CONCURRENCY = 16
VERDICTS_KEPT = 16  # evaluated expressions kept for their next pages

# When each introspection last changed (a start, a report, a state, a reapply), as the
# database's text: compared, never parsed; all of them, or those since a time (by index).
_CHANGED = func.coalesce(introspections.c.updated_at, introspections.c.started_at)
_STAMPS = select(introspections.c.uuid, cast(_CHANGED, String))
_STAMPS_SINCE = _STAMPS.where(or_(introspections.c.updated_at >= bindparam("since"),
                                  introspections.c.started_at >= bindparam("since")))
_COUNT = select(func.count()).select_from(introspections)
# Changes are asked for from this long before the previous answer was read: a change stamped
# by a replica whose clock is behind, or committed a while after it was stamped, is still
# found.
LOOKBACK = dt.timedelta(seconds=60)
_latest = data.alias("latest")
_LATEST_DATA = (
    select(data.c.uuid, data.c.data, data.c.stored_at)
    .where(data.c.uuid.in_(bindparam("uuids", expanding=True)), data.c.processed.is_(True),
           data.c.run == select(func.max(_latest.c.run))
           .where(and_(_latest.c.uuid == data.c.uuid, _latest.c.processed.is_(True)))
           .scalar_subquery()))


Fetch = Callable[[str | None], Awaitable[tuple[list[Any], int, str | None]]]


class Seen:
    """The stamps of one side (the bare-metal nodes, or this service's introspections) as
    last seen, brought up to date by asking only for what changed since the previous answer
    was read (less LOOKBACK), by the answering side's clock; everything again when the count
    shows rows gone."""

    def __init__(self) -> None:
        self.stamps: dict[str, str] = {}
        self.read_at: str | None = None  # the side's clock when it read the previous answer

    async def update(self, fetch: Fetch) -> dict[str, str]:
        since = None
        if self.read_at is not None:
            since = (dt.datetime.fromisoformat(self.read_at) - LOOKBACK).isoformat(sep=" ")
        rows, count, read_at = await fetch(since)
        stamps = dict(self.stamps) if since is not None else {}
        stamps.update((str(k), str(v)) for k, v in rows)
        if since is not None and len(stamps) != count:  # some went: all of them again
            rows, count, read_at = await fetch(None)
            stamps = {str(k): str(v) for k, v in rows}
        self.stamps, self.read_at = stamps, read_at
        return stamps


@dataclass(frozen=True)
class Entry:
    node_stamp: str
    data_stamp: str | None
    doc: dict[str, Any]


class _Interner:
    """Sharing of what repeats between documents: strings, flat records (a PCI device, a
    DIMM: a dict of scalars, keyed by its items) and lists of scalars (CPU flags). Keys are
    built by C-level tuple hashing, so sharing costs a fraction of building a document."""

    def __init__(self) -> None:
        self.table: dict[Any, Any] = {}

    def __call__(self, value: Any) -> Any:
        return self._intern(value)

    def _intern(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._shared(value) if len(value) <= 64 else value
        if isinstance(value, dict):
            items = {self._shared(k): self._intern(v) for k, v in value.items()}
            if all(type(v) in _SCALARS for v in items.values()):
                pairs = tuple((k, type(v), v) for k, v in items.items())
                return self._record(("d", hash(pairs)), pairs, items)
            return items
        if isinstance(value, list):
            members = [self._intern(v) for v in value]
            if all(type(v) in _SCALARS for v in members):
                kinds = tuple((type(v), v) for v in members)
                return self._record(("l", hash(kinds)), kinds, members)
            return members
        return value

    def _record(self, key: tuple[str, int], typed: tuple[Any, ...], value: Any) -> Any:
        """Keyed by the hash of `typed` (its values with their types: `true` is not `1`)
        only, so that no key tuple is kept alive; shared on a hit of equal typed values."""
        found = self.table.get(key)
        if found is None:
            self.table[key] = value
            return value
        return found if _typed(found) == typed else value

    def _shared(self, text: str) -> str:
        found = self.table.get(text)
        if found is None:
            found = self.table[text] = text
        return str(found)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _typed(value: Any) -> tuple[Any, ...]:
    if isinstance(value, dict):
        return tuple((k, type(v), v) for k, v in value.items())
    return tuple((type(v), v) for v in value)


class FleetIndex:
    def __init__(self, db: Database, ironic: BareMetal) -> None:
        self.db = db
        self.ironic = ironic
        self.entries: dict[str, Entry] = {}
        self._interner = _Interner()
        self._interned_at = 0  # table size after the last full re-interning
        self._lock = asyncio.Lock()
        self.generation = 0  # +1 whenever a document changes
        self._nodes_seen = Seen()  # the bare-metal nodes' stamps
        self._data_seen = Seen()  # this service's introspections' stamps
        self._verdicts: OrderedDict[tuple[str, int], Evaluated] = OrderedDict()
        self._latest: dict[str, tuple[str, int]] = {}  # an expression's newest verdict

    def __len__(self) -> int:
        return len(self.entries)

    def documents(self) -> Iterator[dict[str, Any]]:
        """In a stable order (by UUID), as pagination needs."""
        for uuid in sorted(self.entries):
            yield self.entries[uuid].doc

    def document(self, uuid: str) -> dict[str, Any] | None:
        entry = self.entries.get(uuid)
        return entry.doc if entry is not None else None

    async def verdict(self, program: Program, *, fresh: bool = True) -> Evaluated:
        """`program` over every current document. The pages after the first of one query
        (`fresh=False`) are cut from the evaluation its first page made, as long as it is
        kept: one consistent answer, and no refresh per page."""
        if not fresh:
            kept = self._latest.get(program.source)
            if kept is not None and kept in self._verdicts:
                return self._verdicts[kept]
        async with self._lock:
            await self._refresh()
            key = (program.source, self.generation)
            found = self._verdicts.get(key)
            if found is not None:
                return found
            docs = list(self.documents())  # a snapshot: evaluated off the event loop
        found = await asyncio.to_thread(query.evaluate, program, docs)
        self._verdicts[key] = found
        self._latest[program.source] = key
        while len(self._verdicts) > VERDICTS_KEPT:
            old, _ = self._verdicts.popitem(last=False)
            if self._latest.get(old[0]) == old:
                del self._latest[old[0]]
        return found

    async def snapshot(self) -> list[dict[str, Any]]:
        """Every current document, in UUID order."""
        async with self._lock:
            await self._refresh()
            return list(self.documents())

    async def refresh(self) -> int:
        """Bring every document up to date; how many were rebuilt or dropped. Concurrent
        callers wait for the one refresh under way and then make their own (cheap when
        nothing changed)."""
        async with self._lock:
            return await self._refresh()

    async def _refresh(self) -> int:
        node_stamps = await self._node_stamps()
        data_stamps = await self._data_stamps()
        gone = self.entries.keys() - node_stamps.keys()
        for uuid in gone:
            del self.entries[uuid]
        entries = self.entries
        stale_nodes = [u for u, s in node_stamps.items()
                       if u not in entries or entries[u].node_stamp != s]
        stale_data = [u for u in node_stamps
                      if u not in entries or entries[u].data_stamp != data_stamps.get(u)]
        rebuilt = 0
        if stale_nodes or stale_data:
            nodes = await self._nodes(stale_nodes)
            stale = list(dict.fromkeys([*stale_nodes, *stale_data]))
            for batch in _batches(stale, BUILD_BATCH):
                loaded = await self._data([u for u in batch if u in data_stamps])
                # building and sharing is CPU work: off the event loop, a batch at a time
                rebuilt += await asyncio.to_thread(self._build, batch, nodes, loaded,
                                                   node_stamps, data_stamps)
            self._maybe_reintern()
        self._changed(rebuilt + len(gone))
        return rebuilt + len(gone)

    def _build(self, uuids: Sequence[str], nodes: Mapping[str, dict[str, Any]],
               loaded: Mapping[str, tuple[dict[str, Any], dt.datetime | None]],
               node_stamps: Mapping[str, str], data_stamps: Mapping[str, Any]) -> int:
        rebuilt = 0
        for uuid in uuids:
            old = self.entries.get(uuid)
            node = nodes.get(uuid) or (_node_part(old.doc) if old is not None else None)
            if node is None:  # deleted between the listing and the fetch
                self.entries.pop(uuid, None)
                continue
            body, stored_at = loaded.get(uuid, (None, None))
            doc = document.build(node, body, stored_at)
            self.entries[uuid] = Entry(node_stamps[uuid], data_stamps.get(uuid),
                                       self._interner(doc))
            rebuilt += 1
        return rebuilt

    def _changed(self, count: int) -> None:
        """New first pages evaluate again; pages of queries under way keep their verdict."""
        if count:
            self.generation += 1

    def _maybe_reintern(self) -> None:
        """Drop subtrees no document uses any more: when the table has grown to three times
        its size after the last full interning, every document is interned again into a
        new one."""
        size = len(self._interner.table)
        if not self._interned_at:  # the first build: every entry in the table is in use
            self._interned_at = size
        if size <= max(3 * self._interned_at, 10_000):
            return
        self._interner = _Interner()
        self.entries = {u: Entry(e.node_stamp, e.data_stamp, self._interner(e.doc))
                        for u, e in self.entries.items()}
        self._interned_at = len(self._interner.table)

    async def _node_stamps(self) -> dict[str, str]:
        async def fetch(since: str | None) -> tuple[list[Any], int, str | None]:
            body = await self.ironic.node_stamps(since)
            return body["nodes"], int(body["count"]), body.get("now")

        return await self._nodes_seen.update(fetch)

    async def _data_stamps(self) -> dict[str, str]:
        async def fetch(since: str | None) -> tuple[list[Any], int, str | None]:
            now = utcnow().isoformat(sep=" ")  # before the reads, as the bare-metal side's
            async with self.db.read() as conn:
                if since is None:
                    rows = (await conn.execute(_STAMPS)).all()
                else:
                    rows = (await conn.execute(_STAMPS_SINCE,
                                               {"since": dt.datetime.fromisoformat(since)})
                            ).all()
                count = (await conn.execute(_COUNT)).scalar_one()
            return rows, int(count), now

        return await self._data_seen.update(fetch)

    async def _nodes(self, uuids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not uuids:
            return {}
        if len(uuids) > DETAIL_LISTING_ABOVE:
            wanted = set(uuids)
            return {str(n["uuid"]): n for n in await self.ironic.list_nodes_detail()
                    if n.get("uuid") in wanted}
        gate = asyncio.Semaphore(FETCH_CONCURRENCY)

        async def one(uuid: str) -> dict[str, Any] | None:
            async with gate:
                try:
                    return await self.ironic.get_node(uuid)
                except Exception as exc:  # deleted since the listing: gone from the index
                    if getattr(exc, "code", None) == 404:
                        return None
                    raise

        found = await asyncio.gather(*(one(u) for u in uuids))
        return {str(n["uuid"]): n for n in found if n is not None}

    async def _data(self, uuids: Sequence[str]
                    ) -> dict[str, tuple[dict[str, Any], dt.datetime | None]]:
        loaded: dict[str, tuple[dict[str, Any], dt.datetime | None]] = {}
        for batch in _batches(uuids, BATCH):
            async with self.db.read() as conn:
                rows = (await conn.execute(_LATEST_DATA, {"uuids": batch})).all()
            for uuid, body, stored_at in rows:
                if isinstance(body, dict):
                    loaded[str(uuid)] = (body, stored_at)
        return loaded


NODE_DERIVED = ("inventory", "plugin_data", "hardware", "inspected", "inspected_at")


def _node_part(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in NODE_DERIVED}


def _batches(items: Sequence[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start:start + size])
