"""Signed webhooks: fleet change and discovery events POSTed to receivers (a CMDB), so that
they need not poll.

Durable outbox: `enqueue` writes one `pending` row per event and receiver
(`di_webhook_deliveries`), in the caller's transaction when it gives one, so that an event
and its deliveries commit together (or not at all). Whichever replica claims a due row sends
it: the claim is one UPDATE that sets a lease (owner, until) only where none is held, so two
replicas never send one row at once; a replica that dies mid-send leaves a lease that
expires, and the row is sent again. Delivery is therefore at least once: receivers dedupe by
the `X-Ironsight-Delivery` header (the event's id).

Each POST is signed: `X-Ironsight-Signature: sha256=<hex HMAC-SHA256(key, "<timestamp>." +
body)>`, the timestamp (`X-Ironsight-Timestamp`, Unix seconds) inside the MAC, so that a
captured request cannot be replayed later (`verify` is the receiver's check). A 2xx answer
delivers; anything else is retried with exponential backoff (±10 % jitter) until
`[webhooks] max_attempts`, then the row is `failed` (listed, and retried by an operator).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import datetime as dt
import hashlib
import heapq
import hmac
import json
import logging
import random
import time
import uuid as uuidlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
from sqlalchemy import and_, delete, insert, or_, select, update

from ironsight.common.clock import utcnow
from ironsight.common.config import WEBHOOK_EVENTS, WebhooksSection
from ironsight.common.db import Conn, Database
from ironsight.common.exceptions import ConfigError, Conflict, NotFound
from ironsight.discoverd.db.models import webhook_deliveries as wd

LOG = logging.getLogger(__name__)

EVENT_TYPES = WEBHOOK_EVENTS
STATUSES = ("pending", "delivered", "failed")
OUTCOMES = ("delivered", "retried", "failed")
BATCH = 50  # rows one claim takes, all sent at once (so each is sent within its lease)
INTERVAL = 1.0  # seconds between two looks for due rows
PRUNE_EVERY = 3600.0
MAX_ERROR = 500  # characters of last_error kept
USER_AGENT = "ironsight-webhooks"
TOLERANCE = 300  # seconds a receiver accepts a timestamp off its clock


@dataclass(frozen=True)
class Event:
    """One event for the receivers: `type` one of EVENT_TYPES, `node` the node it is about
    (None: several or none), `data` its JSON-serialisable details."""

    type: str
    node: str | None
    data: dict[str, Any] = field(default_factory=dict)


# --- signatures ----------------------------------------------------------------------------


def encode(payload: dict[str, Any]) -> bytes:
    """The body sent, and signed: compact JSON, keys sorted (the same bytes every time)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


def sign(secret: bytes, timestamp: str, body: bytes) -> str:
    """The `X-Ironsight-Signature` value of `body` sent at `timestamp`."""
    mac = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: bytes, timestamp: str, body: bytes, signature: str, now: float,
           tolerance: float = TOLERANCE) -> bool:
    """A receiver's check of a delivery: the timestamp within `tolerance` seconds of `now`
    (an old request is a replay), and the signature recomputed, compared in constant time."""
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):
        return False
    if abs(now - int(timestamp)) > tolerance:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body).encode(),
                               signature.encode("utf-8", "replace"))


def backoff_delay(attempts: int, backoff: float, max_backoff: float,
                  rand: Callable[[], float] = random.random) -> float:
    """Seconds before the next attempt of a delivery tried `attempts` times: `backoff`
    doubled at each attempt after the first, capped at `max_backoff`, ±10 % jitter (so that
    the retries of a receiver's outage do not all come back at once)."""
    base = min(backoff * 2.0 ** min(max(attempts - 1, 0), 64), max_backoff)
    return base * (0.9 + 0.2 * rand())


def read_secret(path: str) -> bytes:
    """The HMAC key of `[webhooks] secret_file`; a ConfigError (naming the file, never its
    content) when it cannot be used."""
    if not path:
        raise ConfigError("[webhooks] secret_file is required when urls are set")
    try:
        secret = Path(path).expanduser().read_bytes().strip()
    except OSError as exc:
        raise ConfigError(f"[webhooks] secret_file: cannot read {path}: "
                          f"{exc.strerror or exc}") from None
    if not secret:
        raise ConfigError(f"[webhooks] secret_file: {path} is empty")
    return secret


def shown_url(url: str) -> str:
    """A URL as the API and the log show it: a password in it masked."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _view(row: Any, payload: bool) -> dict[str, Any]:
    found = {"id": row["id"], "event_id": row["event_id"], "event_type": row["event_type"],
             "url": shown_url(row["url"]), "status": row["status"],
             "attempts": row["attempts"], "created_at": _iso(row["created_at"]),
             "next_attempt_at": _iso(row["next_attempt_at"]),
             "last_attempt_at": _iso(row["last_attempt_at"]),
             "last_status_code": row["last_status_code"], "last_error": row["last_error"],
             "delivered_at": _iso(row["delivered_at"]), "lease_owner": row["lease_owner"],
             "lease_until": _iso(row["lease_until"])}
    if payload:
        found["payload"] = row["payload"]
    return found


@dataclass(frozen=True)
class _Outcome:
    status_code: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class Webhooks:
    """The outbox of one replica (`owner`: its name, host:pid, written on the rows it
    leases)."""

    def __init__(self, db: Database, conf: WebhooksSection, owner: str) -> None:
        self.db = db
        self.conf = conf
        self.owner = owner
        self.events = frozenset(conf.events)
        # read at start, so that a missing or empty key file stops the service there
        self._secret = read_secret(conf.secret_file) if conf.urls else b""
        self.counts: Counter[str] = Counter()  # by outcome, since this replica started
        self._session: aiohttp.ClientSession | None = None
        self._wake = asyncio.Event()
        self._retries: builtins.list[dt.datetime] = []  # a heap of the retries scheduled here

    @property
    def enabled(self) -> bool:
        return bool(self.conf.urls)

    # --- writing ------------------------------------------------------------------------

    async def enqueue(self, conn: Conn | None, events: Sequence[Event]) -> int:
        """Write a pending delivery per configured URL for each event of an enabled type;
        in `conn`'s transaction when given (the event and its deliveries commit together),
        else in one of its own. Returns how many rows were written (0 without URLs)."""
        now = utcnow()
        rows = []
        for event in events:
            if event.type not in EVENT_TYPES:
                raise ValueError(f"unknown webhook event type {event.type!r}")
            if not self.enabled or event.type not in self.events:
                continue
            payload = {"id": str(uuidlib.uuid4()), "type": event.type,
                       "at": now.replace(tzinfo=dt.UTC).isoformat(), "node": event.node,
                       "data": event.data}
            encode(payload)  # not serialisable: the caller's bug, raised here
            rows += [{"event_id": payload["id"], "event_type": event.type, "url": url,
                      "payload": payload, "created_at": now, "status": "pending",
                      "attempts": 0, "next_attempt_at": now} for url in self.conf.urls]
        if not rows:
            return 0
        if conn is not None:
            await conn.execute(insert(wd), rows)
        else:
            async with self.db.single() as own:
                await own.execute(insert(wd), rows)
        self._wake.set()
        return len(rows)

    # --- sending ------------------------------------------------------------------------

    async def _claim(self) -> list[Any]:
        """Lease up to BATCH due rows to this replica, in one UPDATE whose WHERE checks the
        lease again on each row it changes: of two replicas claiming at once, each row goes
        to one (PostgreSQL re-checks a row another transaction changed meanwhile; SQLite
        runs one writer at a time). SKIP LOCKED (PostgreSQL's; SQLite has no row locks and
        SQLAlchemy leaves it out there) lets the second claimer take the next rows rather
        than find the first one's all leased; the rows are chosen once, in a MATERIALIZED
        CTE (as a subquery, PostgreSQL may scan it again, and SKIP LOCKED then yields other
        rows: more than BATCH)."""
        now = utcnow()
        until = now + dt.timedelta(seconds=2 * self.conf.timeout)
        free = or_(wd.c.lease_until.is_(None), wd.c.lease_until < now)
        due = and_(wd.c.status == "pending", wd.c.next_attempt_at <= now, free)
        chosen = (select(wd.c.id).where(due).order_by(wd.c.next_attempt_at, wd.c.id)
                  .limit(BATCH).with_for_update(skip_locked=True)
                  .cte("chosen").prefix_with("MATERIALIZED"))
        statement = (update(wd).where(wd.c.id.in_(select(chosen.c.id)), due)
                     .values(lease_owner=self.owner, lease_until=until)
                     .returning(wd.c.id, wd.c.event_id, wd.c.event_type, wd.c.url,
                                wd.c.payload, wd.c.attempts))
        async with self.db.single() as conn:
            return list((await conn.execute(statement)).mappings().all())

    def _http(self) -> aiohttp.ClientSession:
        # created lazily: a session belongs to the running event loop
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.conf.timeout),
                connector=aiohttp.TCPConnector(limit=BATCH, ssl=True))
        return self._session

    def _scrub(self, text: str, url: str) -> str:
        """An error's text as stored and logged: one line, bounded, never the key (nor a
        password of the URL)."""
        text = " ".join(text.split())
        for secret in (self._secret.decode("utf-8", "replace"), urlsplit(url).password):
            if secret:
                text = text.replace(secret, "***")
        return text[:MAX_ERROR]

    async def _post(self, row: Any) -> _Outcome:
        body = encode(row["payload"])
        timestamp = str(int(time.time()))
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT,
                   "X-Ironsight-Event": row["event_type"],
                   "X-Ironsight-Delivery": row["event_id"],
                   "X-Ironsight-Timestamp": timestamp,
                   "X-Ironsight-Signature": sign(self._secret, timestamp, body)}
        try:
            async with self._http().post(row["url"], data=body, headers=headers,
                                         allow_redirects=False) as resp:
                if 200 <= resp.status < 300:
                    return _Outcome(resp.status, None)
                excerpt = (await resp.content.read(200)).decode("utf-8", "replace")
                return _Outcome(resp.status, self._scrub(
                    f"HTTP {resp.status} {resp.reason or ''}: {excerpt}".strip(" :"),
                    row["url"]))
        except TimeoutError:
            return _Outcome(None, f"no answer within {self.conf.timeout:g} s")
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return _Outcome(None, self._scrub(f"{type(exc).__name__}: {exc}", row["url"]))

    async def _record(self, row: Any, outcome: _Outcome) -> None:
        """The attempt's outcome, on the row this replica still leases (one whose lease
        expired and was taken by another replica is left to it)."""
        now = utcnow()
        attempts = row["attempts"] + 1
        values: dict[str, Any] = {"attempts": attempts, "last_attempt_at": now,
                                  "last_status_code": outcome.status_code,
                                  "lease_owner": None, "lease_until": None}
        if outcome.ok:  # last_error stays: why it took more than one attempt
            what = "delivered"
            values.update(status="delivered", delivered_at=now)
        elif attempts >= self.conf.max_attempts:
            what = "failed"
            values.update(status="failed", last_error=outcome.error)
        else:
            what = "retried"
            delay = backoff_delay(attempts, self.conf.backoff, self.conf.max_backoff)
            after = now + dt.timedelta(seconds=delay)
            values.update(next_attempt_at=after, last_error=outcome.error)
            heapq.heappush(self._retries, after)
        async with self.db.single() as conn:
            done = await conn.execute(update(wd).where(
                wd.c.id == row["id"], wd.c.status == "pending",
                wd.c.lease_owner == self.owner).values(**values))
        if not done.rowcount:  # the lease expired meanwhile: the row is another's now
            LOG.debug("Webhook delivery %d: lease lost before its outcome was recorded",
                      row["id"])
            return
        self.counts[what] += 1
        where = urlsplit(row["url"]).netloc.rpartition("@")[2]
        if what == "failed":
            LOG.error("Webhook delivery %d (%s) to %s failed after %d attempts: %s",
                      row["id"], row["event_type"], where, attempts, outcome.error)
        elif what == "retried":
            LOG.warning("Webhook delivery %d (%s) to %s: attempt %d failed (%s); retrying",
                        row["id"], row["event_type"], where, attempts, outcome.error)

    async def send_due(self) -> int:
        """Claim the due rows and send them, at once; returns how many were claimed."""
        rows = await self._claim()
        if not rows:
            return 0
        outcomes = await asyncio.gather(*(self._post(row) for row in rows))
        for row, outcome in zip(rows, outcomes, strict=True):
            await self._record(row, outcome)
        return len(rows)

    async def run(self) -> None:
        """Send due deliveries (every INTERVAL, sooner when an event is enqueued here or a
        retry falls due) and prune old ones hourly, until cancelled."""
        loop = asyncio.get_running_loop()
        prune_at = loop.time()
        while True:
            self._wake.clear()
            started = utcnow()
            full = False
            try:
                full = await self.send_due() >= BATCH
                if loop.time() >= prune_at:
                    prune_at = loop.time() + PRUNE_EVERY
                    await self.prune()
            except Exception:
                LOG.exception("Sending webhooks failed; retrying later")
            while self._retries and self._retries[0] <= started:  # due then: claimed then
                heapq.heappop(self._retries)
            if full:
                continue
            wait = INTERVAL
            if self._retries:  # a timer may fire early: a few ms more
                left = (self._retries[0] - utcnow()).total_seconds()
                wait = min(wait, max(left, 0.0) + 0.005)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    # --- visibility ---------------------------------------------------------------------

    async def list(self, status: str | None = None, limit: int = 100,
                   marker: int | None = None, *, payload: bool = False
                   ) -> builtins.list[dict[str, Any]]:
        """Newest first; `marker`: the last id of the previous page."""
        query = select(wd).order_by(wd.c.id.desc()).limit(limit)
        if status is not None:
            query = query.where(wd.c.status == status)
        if marker is not None:
            query = query.where(wd.c.id < marker)
        async with self.db.read() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_view(r, payload) for r in rows]

    async def get(self, delivery_id: int) -> dict[str, Any]:
        async with self.db.read() as conn:
            row = (await conn.execute(select(wd).where(wd.c.id == delivery_id))
                   ).mappings().first()
        if row is None:
            raise NotFound(f"Webhook delivery {delivery_id} could not be found.")
        return _view(row, True)

    async def retry(self, delivery_id: int) -> dict[str, Any]:
        """Make a failed or pending delivery due now (its attempts kept: a failed one gets
        one more); a delivered one is a Conflict."""
        async with self.db.single() as conn:
            done = await conn.execute(update(wd).where(
                wd.c.id == delivery_id, wd.c.status.in_(("pending", "failed"))).values(
                status="pending", next_attempt_at=utcnow()))
        view = await self.get(delivery_id)
        if not done.rowcount:
            raise Conflict(f"Webhook delivery {delivery_id} is {view['status']} already")
        self._wake.set()
        del view["payload"]
        return view

    async def prune(self) -> int:
        """Drop the delivered and failed rows older than `keep_days`; returns how many."""
        before = utcnow() - dt.timedelta(days=self.conf.keep_days)
        async with self.db.single() as conn:
            done = await conn.execute(delete(wd).where(wd.c.status != "pending",
                                                       wd.c.created_at < before))
        return int(done.rowcount or 0)
