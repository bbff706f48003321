"""Webhooks (discoverd/webhooks.py) against a real receiver: an aiohttp server on 127.0.0.1
that answers each POST with the status the test scripts and records what it got. Discovery's
events reach it signed; a failing receiver is retried with backoff until it answers 2xx or
the attempts run out; an operator sees the deliveries and retries one through the API; two
senders on one database, a sender that died and a restart never lose or double a delivery;
the key shows nowhere. Backoff is 0.05 s here, so that retries take moments."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web
from sqlalchemy import create_engine, text, update

from ironsight.common import config
from ironsight.common.clock import utcnow
from ironsight.common.db import Database, engine_url
from ironsight.discoverd.db.models import webhook_deliveries as wd
from ironsight.discoverd.service import DiscoverdService
from ironsight.discoverd.service import upgrade_database as upgrade_di
from ironsight.discoverd.webhooks import Event, Webhooks, verify

from .conftest import BOTH_DBS, Discoverds
from .helpers import introspect, ipa_payload, make_node
from .test_discovery import ON, bmc_only_conflict, discover, unknown

KEY = b"the-webhook-key-0f3a9c"
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    at: float


class Receiver:
    """Answers each POST with the next status of `script`, then `default`, after `delay`
    seconds, with `reply` as its body; keeps what it got."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/hook"
        self.got: list[Received] = []
        self.script: list[int] = []
        self.default = 200
        self.delay = 0.0
        self.reply = "ok"

    async def handle(self, request: web.Request) -> web.Response:
        self.got.append(Received(dict(request.headers), await request.read(), time.time()))
        if self.delay:
            await asyncio.sleep(self.delay)
        status = self.script.pop(0) if self.script else self.default
        return web.Response(status=status, text=self.reply)

    def of_type(self, event_type: str) -> list[Received]:
        return [r for r in self.got if r.headers.get("X-Ironsight-Event") == event_type]

    async def wait_for(self, count: int, event_type: str | None = None,
                       timeout: float = 10) -> list[Received]:
        deadline = time.monotonic() + timeout
        while True:
            found = self.of_type(event_type) if event_type else self.got
            if len(found) >= count:
                return found
            assert time.monotonic() < deadline, f"{len(found)} POSTs, not {count}"
            await asyncio.sleep(0.01)


@pytest.fixture
def receiver_socket() -> Iterator[socket.socket]:
    """Bound before the configuration is written, so that it can name the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    with sock:
        yield sock


@pytest.fixture
async def receiver(receiver_socket: socket.socket) -> AsyncIterator[Receiver]:
    found = Receiver(receiver_socket.getsockname()[1])
    app = web.Application()
    app.router.add_post("/hook", found.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.SockSite(runner, receiver_socket).start()
    try:
        yield found
    finally:
        await runner.cleanup()


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "webhook.key"
    path.write_bytes(KEY + b"\n")
    return path


@pytest.fixture
def conf_overrides(receiver_socket: socket.socket, secret_file: Path
                   ) -> dict[str, dict[str, Any]]:
    """Webhooks to the receiver, discovery's events only (what these tests cause)."""
    return {"webhooks": {"urls": f"http://127.0.0.1:{receiver_socket.getsockname()[1]}/hook",
                         "secret_file": str(secret_file), "backoff": "0.05",
                         "max_backoff": "0.1", "max_attempts": str(MAX_ATTEMPTS),
                         "timeout": "2",
                         "events": "discovery.node_created,discovery.conflict"}}


def _empty_outbox(conf: config.Config) -> None:
    """PostgreSQL's databases are the session's: this folder's conftest empties its own
    tables before each test, this one here."""
    engine = create_engine(engine_url(conf.discoverd_database_url))
    try:
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM di_webhook_deliveries"))
    finally:
        engine.dispose()


@pytest.fixture
async def di_service(discoverds: Discoverds, conf: config.Config) -> DiscoverdService:
    _empty_outbox(conf)
    return await discoverds.start()


@pytest.fixture
async def databases(conf: config.Config, db_kind: str
                    ) -> AsyncIterator[Callable[[], Database]]:
    """Opens Databases on the test's discoverd database (each as another process would),
    for senders without a service; all closed at the end."""
    if db_kind != "sqlite":
        upgrade_di(conf)
    _empty_outbox(conf)
    opened: list[Database] = []

    def open_one() -> Database:
        opened.append(Database(conf.discoverd_database_url))
        return opened[-1]

    yield open_one
    for db in opened:
        await db.close()


@pytest.fixture
async def senders(databases: Callable[[], Database], conf: config.Config
                  ) -> AsyncIterator[Callable[[str], Webhooks]]:
    """`senders(owner)`: a Webhooks of its own Database, as one replica's."""
    made: list[Webhooks] = []

    def make(owner: str) -> Webhooks:
        made.append(Webhooks(databases(), conf.webhooks, owner))
        return made[-1]

    yield make
    for hooks in made:
        await hooks.close()


async def deliveries(di: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    resp = await di.get("/v1/webhooks/deliveries", params=params)
    assert resp.status_code == 200, resp.text
    return list(resp.json()["deliveries"])


async def settled(di: httpx.AsyncClient, status: str, timeout: float = 10
                  ) -> dict[str, Any]:
    """The one delivery, once it is `status`."""
    deadline = time.monotonic() + timeout
    while True:
        found = await deliveries(di)
        if found and found[0]["status"] == status:
            assert len(found) == 1, found
            return found[0]
        assert time.monotonic() < deadline, f"not {status}: {found}"
        await asyncio.sleep(0.02)


def conflict_event(n: int = 1) -> Event:
    return Event("discovery.conflict", None, {"conflict_id": n})


# --- discovery's events, signed ----------------------------------------------------------------


@ON
@BOTH_DBS
async def test_a_discovered_node_is_posted_once_signed_with_the_right_headers(
        receiver: Receiver, di: httpx.AsyncClient) -> None:
    _, payload = unknown()
    uuid = await discover(di, payload)
    (got,) = await receiver.wait_for(1, "discovery.node_created")
    body = got.body
    event = httpx.Response(200, content=body).json()
    assert event["type"] == "discovery.node_created" and event["node"] == uuid
    system = payload["inventory"]["system_vendor"]
    assert event["data"] == {"node": uuid, "serial": system["serial_number"],
                             "system_uuid": system["uuid"], "source_address": "127.0.0.1",
                             "status": "pending"}
    headers = got.headers
    assert headers["Content-Type"] == "application/json"
    assert headers["User-Agent"] == "ironsight-webhooks"
    assert headers["X-Ironsight-Event"] == "discovery.node_created"
    assert headers["X-Ironsight-Delivery"] == event["id"]
    assert abs(int(headers["X-Ironsight-Timestamp"]) - time.time()) < 5
    assert verify(KEY, headers["X-Ironsight-Timestamp"], body,
                  headers["X-Ironsight-Signature"], now=time.time())
    shown = await settled(di, "delivered")
    assert (shown["event_id"], shown["attempts"], shown["last_status_code"]) == (
        event["id"], 1, 200)
    await asyncio.sleep(0.2)
    assert len(receiver.of_type("discovery.node_created")) == 1


@ON
async def test_a_discovery_conflict_is_posted_with_its_matched_nodes_and_signals(
        receiver: Receiver, bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, conflict = await bmc_only_conflict(bm, di)
    (got,) = await receiver.wait_for(1, "discovery.conflict")
    event = httpx.Response(200, content=got.body).json()
    assert event["node"] is None
    assert event["data"]["conflict_id"] == conflict["id"]
    assert event["data"]["matched"] == [m.uuid] == conflict["matched"]
    assert event["data"]["signals"] == conflict["signals"]


# --- retries -----------------------------------------------------------------------------------


@BOTH_DBS
async def test_a_receiver_answering_500_twice_gets_the_delivery_at_the_third_attempt(
        receiver: Receiver, di_service: DiscoverdService, di: httpx.AsyncClient) -> None:
    receiver.script = [500, 500]
    await di_service.webhooks.enqueue(None, [conflict_event()])
    shown = await settled(di, "delivered")
    assert (shown["attempts"], shown["last_status_code"]) == (3, 200)
    assert shown["last_error"].startswith("HTTP 500")  # why it took three
    got = await receiver.wait_for(3)
    assert len(got) == 3
    assert len({r.headers["X-Ironsight-Delivery"] for r in got}) == 1
    assert len({r.body for r in got}) == 1
    assert got[1].at - got[0].at >= 0.05 * 0.9  # the backoff, jitter included


async def test_a_receiver_that_never_answers_2xx_fails_after_max_attempts(
        receiver: Receiver, di_service: DiscoverdService, di: httpx.AsyncClient) -> None:
    receiver.default = 503
    await di_service.webhooks.enqueue(None, [conflict_event()])
    shown = await settled(di, "failed")
    assert (shown["attempts"], shown["last_status_code"]) == (MAX_ATTEMPTS, 503)
    await asyncio.sleep(0.3)
    assert len(receiver.got) == MAX_ATTEMPTS


async def test_an_unreachable_receiver_is_retried_with_the_error_shown(
        receiver_socket: socket.socket, secret_file: Path, di_service: DiscoverdService,
        di: httpx.AsyncClient) -> None:
    # the socket is bound but nothing listens: connections are refused
    await di_service.webhooks.enqueue(None, [conflict_event()])
    shown = await settled(di, "failed")
    assert shown["attempts"] == MAX_ATTEMPTS and shown["last_status_code"] is None
    assert "127.0.0.1" in shown["last_error"]


async def test_retry_through_the_api_makes_a_failed_delivery_due_again(
        receiver: Receiver, di_service: DiscoverdService, di: httpx.AsyncClient) -> None:
    receiver.default = 500
    await di_service.webhooks.enqueue(None, [conflict_event()])
    failed = await settled(di, "failed")
    receiver.default = 200
    resp = await di.post(f"/v1/webhooks/deliveries/{failed['id']}/retry")
    assert resp.status_code == 200, resp.text
    assert (resp.json()["status"], resp.json()["attempts"]) == ("pending", MAX_ATTEMPTS)
    shown = await settled(di, "delivered")
    assert (shown["attempts"], shown["last_status_code"]) == (MAX_ATTEMPTS + 1, 200)
    again = await di.post(f"/v1/webhooks/deliveries/{failed['id']}/retry")
    assert again.status_code == 409, again.text


# --- the API's answers to bad requests ----------------------------------------------------------


async def test_an_unknown_delivery_is_404(di: httpx.AsyncClient) -> None:
    assert (await di.get("/v1/webhooks/deliveries/4242")).status_code == 404
    assert (await di.post("/v1/webhooks/deliveries/4242/retry")).status_code == 404


@pytest.mark.parametrize(("path", "named"), [
    ("/v1/webhooks/deliveries?status=lost", "status"),
    ("/v1/webhooks/deliveries?limit=0", "limit"),
    ("/v1/webhooks/deliveries?marker=abc", "marker"),
    ("/v1/webhooks/deliveries?marker=99999999999", "marker"),
    ("/v1/webhooks/deliveries?payload=maybe", "payload"),
    ("/v1/webhooks/deliveries?colour=red", "colour"),
    ("/v1/webhooks/deliveries/x1", "delivery id"),
])
async def test_bad_input_is_400_naming_the_parameter(di: httpx.AsyncClient, path: str,
                                                     named: str) -> None:
    resp = await di.get(path)
    assert resp.status_code == 400, resp.text
    assert named in resp.text


async def test_a_delivery_is_shown_with_its_payload(
        receiver: Receiver, di_service: DiscoverdService, di: httpx.AsyncClient) -> None:
    await di_service.webhooks.enqueue(None, [Event("discovery.conflict", None, {"x": 1})])
    (listed,) = await deliveries(di)
    assert "payload" not in listed
    (with_payload,) = await deliveries(di, payload="true")
    resp = await di.get(f"/v1/webhooks/deliveries/{listed['id']}")
    assert resp.status_code == 200, resp.text
    assert resp.json()["payload"] == with_payload["payload"]
    assert resp.json()["payload"]["data"] == {"x": 1}


async def test_deliveries_are_counted_in_the_metrics(
        receiver: Receiver, di_service: DiscoverdService, di: httpx.AsyncClient) -> None:
    receiver.script = [500]
    await di_service.webhooks.enqueue(None, [conflict_event()])
    await settled(di, "delivered")
    metrics = (await di.get("/metrics")).text
    assert 'ironsight_webhook_deliveries_total{outcome="delivered"} 1.0' in metrics
    assert 'ironsight_webhook_deliveries_total{outcome="retried"} 1.0' in metrics


# --- replicas and restarts ---------------------------------------------------------------------


async def send_all(*hooks: Webhooks, timeout: float = 20) -> None:
    """Every sender's rounds, at once, until no row is pending."""
    deadline = time.monotonic() + timeout
    while True:
        await asyncio.gather(*(h.send_due() for h in hooks))
        if not await hooks[0].list("pending", limit=1):
            return
        assert time.monotonic() < deadline, "deliveries still pending"
        await asyncio.sleep(0.01)


@BOTH_DBS
async def test_two_senders_never_deliver_one_row_twice(
        receiver: Receiver, senders: Callable[[str], Webhooks]) -> None:
    receiver.delay = 0.01  # the two senders' rounds overlap
    first, second = senders("replica-a:1"), senders("replica-b:2")
    await first.enqueue(None, [conflict_event(n) for n in range(120)])
    await send_all(first, second)
    per_delivery = Counter(r.headers["X-Ironsight-Delivery"] for r in receiver.got)
    assert len(per_delivery) == 120
    assert set(per_delivery.values()) == {1}
    assert first.counts["delivered"] > 0 and second.counts["delivered"] > 0
    assert first.counts["delivered"] + second.counts["delivered"] == 120


@BOTH_DBS
async def test_a_pending_delivery_survives_a_restart(
        receiver: Receiver, senders: Callable[[str], Webhooks]) -> None:
    before = senders("host:100")
    await before.enqueue(None, [conflict_event()])
    await before.db.close()  # the process ends before its sender ran
    after = senders("host:200")
    assert await after.send_due() == 1
    (got,) = receiver.got
    (row,) = await after.list()
    assert (row["status"], row["event_id"]) == ("delivered", got.headers["X-Ironsight-Delivery"])


async def test_a_row_leased_by_a_sender_that_died_is_sent_once_its_lease_expires(
        receiver: Receiver, senders: Callable[[str], Webhooks]) -> None:
    dead, alive = senders("host:100"), senders("host:200")
    await dead.enqueue(None, [conflict_event()])
    assert len(await dead._claim()) == 1  # and then it died, before it sent
    assert await alive.send_due() == 0
    async with alive.db.begin() as conn:
        await conn.execute(update(wd).values(lease_until=utcnow()))
    assert await alive.send_due() == 1
    assert len(receiver.got) == 1


# --- the key -----------------------------------------------------------------------------------


async def test_the_key_never_appears_in_the_delivery_list_or_the_logs(
        receiver: Receiver, di_service: DiscoverdService, di: httpx.AsyncClient,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    receiver.default = 401
    receiver.reply = f"bad signature: expected key {KEY.decode()}"  # a receiver echoing it
    await di_service.webhooks.enqueue(None, [conflict_event()])
    failed = await settled(di, "failed")
    assert "***" in failed["last_error"]
    shown = [(await di.get("/v1/webhooks/deliveries", params={"payload": "true"})).text,
             (await di.get(f"/v1/webhooks/deliveries/{failed['id']}")).text]
    assert not [text for text in shown if KEY.decode() in text]
    assert "Webhook delivery" in caplog.text
    assert KEY.decode() not in caplog.text


@pytest.mark.discoverd_conf(webhooks={"events": "component.removed,component.changed"})
async def test_a_removed_disk_reaches_the_receiver_signed_with_its_event(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, receiver: Receiver) -> None:
    m = await make_node(bm)
    payload = ipa_payload(m, disks_gib=(500, 1000))
    await introspect(di, m, payload)
    del payload["inventory"]["disks"][1]
    await introspect(di, m, payload)
    (got,) = await receiver.wait_for(1, "component.removed")
    assert verify(KEY, got.headers["X-Ironsight-Timestamp"], got.body,
                  got.headers["X-Ironsight-Signature"], time.time())
    body = json.loads(got.body)
    assert (body["node"], body["data"]["component"], body["data"]["severity"]) == (
        m.uuid, "disk", "critical")
