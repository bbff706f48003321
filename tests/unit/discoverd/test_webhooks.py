"""Webhooks (discoverd/webhooks.py): what a delivery's signature covers and how a receiver
checks it, the retry schedule, which events are queued, and the client and CLI of the
deliveries. Sending to a real receiver is tests/functional/discoverd/test_webhooks.py."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select, update

from ironsight.cli import webhooks as webhooks_cli
from ironsight.cli.options import Runtime
from ironsight.common import config
from ironsight.common.clock import utcnow
from ironsight.common.config import WebhooksSection
from ironsight.common.db import Database
from ironsight.common.exceptions import ConfigError, Conflict, NotFound
from ironsight.discoverd import client
from ironsight.discoverd.db.models import webhook_deliveries as wd
from ironsight.discoverd.webhooks import (
    EVENT_TYPES,
    Event,
    Webhooks,
    backoff_delay,
    encode,
    sign,
    verify,
)

KEY = b"s3cret-key-for-tests"
NOW = 1_800_000_000.0
BODY = encode({"id": "e1", "type": "discovery.conflict", "data": {"b": 1, "a": [1, 2]}})
URLS = ["http://127.0.0.1:9/a", "https://cmdb.example/hook"]


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "webhook.key"
    path.write_bytes(KEY + b"\n")
    return path


def section(secret_file: Path | None, **options: Any) -> WebhooksSection:
    options.setdefault("urls", list(URLS))
    return WebhooksSection(secret_file=str(secret_file or ""), **options)


async def rows(db: Database) -> list[dict[str, Any]]:
    async with db.read() as conn:
        return [dict(r) for r in (await conn.execute(select(wd).order_by(wd.c.id))
                                  ).mappings().all()]


# --- the signature ---------------------------------------------------------------------------


def test_a_signature_is_hmac_sha256_of_the_timestamp_a_dot_and_the_body() -> None:
    expected = hmac.new(KEY, b"1800000000." + BODY, hashlib.sha256).hexdigest()
    assert sign(KEY, "1800000000", BODY) == f"sha256={expected}"


def test_a_signed_delivery_is_verified() -> None:
    assert verify(KEY, "1800000000", BODY, sign(KEY, "1800000000", BODY), now=NOW + 10)


def test_a_tampered_body_is_rejected() -> None:
    signature = sign(KEY, "1800000000", BODY)
    assert not verify(KEY, "1800000000", BODY.replace(b'"b":1', b'"b":2'), signature, now=NOW)


def test_another_key_is_rejected() -> None:
    assert not verify(b"other", "1800000000", BODY, sign(KEY, "1800000000", BODY), now=NOW)


def test_a_timestamp_older_than_five_minutes_is_rejected_even_when_signed() -> None:
    signature = sign(KEY, "1800000000", BODY)
    assert verify(KEY, "1800000000", BODY, signature, now=NOW + 300)
    assert not verify(KEY, "1800000000", BODY, signature, now=NOW + 301)


def test_a_timestamp_changed_to_look_fresh_breaks_the_signature() -> None:
    replayed = sign(KEY, "1800000000", BODY)
    assert not verify(KEY, "1800000600", BODY, replayed, now=NOW + 600)


def test_a_timestamp_that_is_no_number_is_rejected() -> None:
    assert not verify(KEY, "1.8e9", BODY, sign(KEY, "1.8e9", BODY), now=NOW)


def test_the_body_is_compact_json_with_sorted_keys() -> None:
    assert encode({"b": 1, "a": {"d": "é", "c": None}}) == '{"a":{"c":null,"d":"é"},"b":1}'.encode()


# --- the retry schedule ----------------------------------------------------------------------


def test_the_first_retry_waits_backoff_then_the_wait_doubles() -> None:
    middle = [backoff_delay(n, 2.0, 3600.0, rand=lambda: 0.5) for n in (1, 2, 3, 4)]
    assert middle == pytest.approx([2.0, 4.0, 8.0, 16.0])


def test_the_wait_is_capped_at_max_backoff() -> None:
    assert backoff_delay(30, 2.0, 3600.0, rand=lambda: 0.5) == pytest.approx(3600.0)
    assert backoff_delay(10_000, 2.0, 3600.0, rand=lambda: 0.5) == pytest.approx(3600.0)


@pytest.mark.parametrize("attempts", [1, 5, 40])
def test_the_jitter_stays_within_ten_percent(attempts: int) -> None:
    base = min(2.0 * 2 ** (attempts - 1), 3600.0)
    assert backoff_delay(attempts, 2.0, 3600.0, rand=lambda: 0.0) == pytest.approx(base * 0.9)
    assert backoff_delay(attempts, 2.0, 3600.0, rand=lambda: 0.999999) == pytest.approx(
        base * 1.1, rel=1e-5)
    for _ in range(200):
        assert base * 0.9 <= backoff_delay(attempts, 2.0, 3600.0) <= base * 1.1


# --- configuration ---------------------------------------------------------------------------


def test_urls_without_a_secret_file_are_refused_by_the_configuration() -> None:
    with pytest.raises(ConfigError, match=r"\[webhooks\] secret_file is required"):
        config.load(overrides={"webhooks": {"urls": "http://cmdb.example/hook"}})


@pytest.mark.parametrize("url", ["ftp://cmdb.example/x", "cmdb.example/hook", "http://",
                                 "http://cmdb.example:99999/"])
def test_a_url_that_is_not_http_is_refused_by_the_configuration(url: str) -> None:
    with pytest.raises(ConfigError, match=r"\[webhooks\] urls"):
        config.load(overrides={"webhooks": {"urls": url, "secret_file": "/k"}})


def test_an_unknown_event_type_is_refused_by_the_configuration() -> None:
    with pytest.raises(ConfigError, match=r"\[webhooks\] events"):
        config.load(overrides={"webhooks": {"events": "node.exploded"}})


def test_a_missing_secret_file_stops_the_start_naming_the_file(db: Database,
                                                               tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read .*missing\.key"):
        Webhooks(db, section(tmp_path / "missing.key"), "me:1")


def test_an_empty_secret_file_stops_the_start(db: Database, tmp_path: Path) -> None:
    (tmp_path / "empty.key").write_text("\n")
    with pytest.raises(ConfigError, match="empty"):
        Webhooks(db, section(tmp_path / "empty.key"), "me:1")


def test_no_secret_file_is_needed_without_urls(db: Database) -> None:
    assert not Webhooks(db, section(None, urls=[]), "me:1").enabled


# --- queueing --------------------------------------------------------------------------------


async def test_nothing_is_enqueued_without_urls(db: Database) -> None:
    hooks = Webhooks(db, section(None, urls=[]), "me:1")
    assert await hooks.enqueue(None, [Event("discovery.node_created", "n1", {})]) == 0
    assert await rows(db) == []


async def test_each_event_is_one_pending_row_per_url(db: Database, secret_file: Path) -> None:
    hooks = Webhooks(db, section(secret_file), "me:1")
    await hooks.enqueue(None, [Event("discovery.node_created", "n1", {"serial": "S1"}),
                               Event("discovery.conflict", None, {"conflict_id": 3})])
    found = await rows(db)
    assert [(r["event_type"], r["url"], r["status"], r["attempts"]) for r in found] == [
        ("discovery.node_created", URLS[0], "pending", 0),
        ("discovery.node_created", URLS[1], "pending", 0),
        ("discovery.conflict", URLS[0], "pending", 0),
        ("discovery.conflict", URLS[1], "pending", 0)]
    assert found[0]["event_id"] == found[1]["event_id"] != found[2]["event_id"]
    payload = found[0]["payload"]
    assert set(payload) == {"id", "type", "at", "node", "data"}
    assert (payload["id"], payload["type"], payload["node"], payload["data"]) == (
        found[0]["event_id"], "discovery.node_created", "n1", {"serial": "S1"})
    assert dt.datetime.fromisoformat(payload["at"]).tzinfo is not None


async def test_events_of_types_not_configured_are_not_enqueued(db: Database,
                                                               secret_file: Path) -> None:
    hooks = Webhooks(db, section(secret_file, urls=URLS[:1],
                                 events=["discovery.node_created"]), "me:1")
    await hooks.enqueue(None, [Event(t, "n1", {}) for t in EVENT_TYPES])
    assert [r["event_type"] for r in await rows(db)] == ["discovery.node_created"]


async def test_an_unknown_event_type_is_a_bug_of_the_caller(db: Database,
                                                            secret_file: Path) -> None:
    with pytest.raises(ValueError, match="unknown webhook event type"):
        await Webhooks(db, section(secret_file), "me:1").enqueue(None, [Event("x.y", None)])


async def test_deliveries_enqueued_in_a_transaction_roll_back_with_it(
        db: Database, secret_file: Path) -> None:
    hooks = Webhooks(db, section(secret_file), "me:1")
    with pytest.raises(RuntimeError):
        async with db.begin() as conn:
            await hooks.enqueue(conn, [Event("component.added", "n1", {"key": "disk0"})])
            raise RuntimeError("the event's own write failed")
    assert await rows(db) == []
    async with db.begin() as conn:
        await hooks.enqueue(conn, [Event("component.added", "n1", {"key": "disk0"})])
    assert len(await rows(db)) == 2


# --- claims, retries, pruning (no receiver: nothing is sent) ---------------------------------


async def test_two_claims_at_once_never_lease_the_same_row(db_each: Database,
                                                           secret_file: Path) -> None:
    first = Webhooks(db_each, section(secret_file, urls=URLS[:1]), "one:1")
    second = Webhooks(db_each, section(secret_file, urls=URLS[:1]), "two:2")
    await first.enqueue(None, [Event("component.changed", f"n{i}", {}) for i in range(70)])
    a, b = await asyncio.gather(first._claim(), second._claim())
    ids_a, ids_b = {r["id"] for r in a}, {r["id"] for r in b}
    assert not ids_a & ids_b
    assert len(ids_a) <= 50 and len(ids_b) <= 50
    assert len(ids_a | ids_b) == 70
    assert await first._claim() == []  # all leased, none expired


async def test_a_delivered_row_is_not_retried(db: Database, secret_file: Path) -> None:
    hooks = Webhooks(db, section(secret_file, urls=URLS[:1]), "me:1")
    await hooks.enqueue(None, [Event("discovery.conflict", None, {})])
    async with db.begin() as conn:
        await conn.execute(update(wd).values(status="delivered", attempts=1))
    (row,) = await rows(db)
    with pytest.raises(Conflict, match="delivered already"):
        await hooks.retry(row["id"])


async def test_a_failed_row_retried_is_due_now_with_its_attempts_kept(
        db: Database, secret_file: Path) -> None:
    hooks = Webhooks(db, section(secret_file, urls=URLS[:1]), "me:1")
    await hooks.enqueue(None, [Event("discovery.conflict", None, {})])
    async with db.begin() as conn:
        await conn.execute(update(wd).values(status="failed", attempts=10,
                                             next_attempt_at=utcnow() + dt.timedelta(hours=1)))
    (row,) = await rows(db)
    shown = await hooks.retry(row["id"])
    assert (shown["status"], shown["attempts"]) == ("pending", 10)
    assert "payload" not in shown
    assert [r["id"] for r in await hooks._claim()] == [row["id"]]


async def test_retrying_an_unknown_delivery_is_not_found(db: Database,
                                                         secret_file: Path) -> None:
    with pytest.raises(NotFound):
        await Webhooks(db, section(secret_file), "me:1").retry(12345)


async def test_pruning_drops_old_ended_rows_and_keeps_pending_ones(
        db: Database, secret_file: Path) -> None:
    hooks = Webhooks(db, section(secret_file, urls=URLS[:1], keep_days=14), "me:1")
    await hooks.enqueue(None, [Event("discovery.conflict", None, {"n": i}) for i in range(4)])
    old = utcnow() - dt.timedelta(days=15)
    async with db.begin() as conn:
        for row_id, status, created in ((1, "delivered", old), (2, "failed", old),
                                        (3, "pending", old), (4, "delivered", utcnow())):
            await conn.execute(update(wd).where(wd.c.id == row_id).values(
                status=status, created_at=created))
    assert await hooks.prune() == 2
    assert [r["id"] for r in await rows(db)] == [3, 4]


async def test_the_list_is_newest_first_and_pages_by_marker(db: Database,
                                                            secret_file: Path) -> None:
    hooks = Webhooks(db, section(secret_file, urls=URLS[:1]), "me:1")
    await hooks.enqueue(None, [Event("discovery.conflict", None, {"n": i}) for i in range(5)])
    first = await hooks.list(limit=2)
    assert [r["id"] for r in first] == [5, 4]
    assert "payload" not in first[0]
    assert [r["id"] for r in await hooks.list(limit=2, marker=4)] == [3, 2]
    assert (await hooks.list(limit=1, payload=True))[0]["payload"]["data"] == {"n": 4}
    async with db.read() as conn:
        assert (await conn.execute(select(func.count()).select_from(wd))).scalar() == 5


async def test_a_password_in_a_url_is_masked_in_the_list(db: Database,
                                                         secret_file: Path) -> None:
    hooks = Webhooks(db, section(secret_file, urls=["https://cmdb:hunter2@cmdb.example/h"]),
                     "me:1")
    await hooks.enqueue(None, [Event("discovery.conflict", None, {})])
    (shown,) = await hooks.list()
    assert shown["url"] == "https://cmdb:***@cmdb.example/h"


# --- client and CLI --------------------------------------------------------------------------


class Recorder:
    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json=self.answer)


DELIVERY = {"id": 7, "event_type": "discovery.conflict", "event_id": "e-7",
            "url": "http://cmdb/h", "status": "failed", "attempts": 10,
            "last_status_code": 500, "last_error": "HTTP 500", "next_attempt_at": None,
            "created_at": "2026-01-01T00:00:00"}


def test_the_client_lists_deliveries_with_its_filters() -> None:
    recorder = Recorder({"deliveries": [DELIVERY], "next_marker": None})
    with client.Client("http://127.0.0.1:5050", transport=httpx.MockTransport(recorder)) as api:
        assert api.list_webhook_deliveries(status="failed", limit=5) == [DELIVERY]
    (request,) = recorder.requests
    assert (request.method, request.url.path) == ("GET", "/v1/webhooks/deliveries")
    assert dict(request.url.params) == {"status": "failed", "limit": "5"}


def test_the_client_retries_a_delivery() -> None:
    recorder = Recorder({**DELIVERY, "status": "pending"})
    with client.Client("http://127.0.0.1:5050", transport=httpx.MockTransport(recorder)) as api:
        assert api.retry_webhook_delivery(7)["status"] == "pending"
    (request,) = recorder.requests
    assert (request.method, request.url.path) == ("POST", "/v1/webhooks/deliveries/7/retry")


def test_the_cli_lists_deliveries_as_json() -> None:
    recorder = Recorder({"deliveries": [DELIVERY]})
    result = CliRunner().invoke(webhooks_cli.webhook,
                                ["deliveries", "--status", "failed", "-f", "json"],
                                obj=Runtime(transport=httpx.MockTransport(recorder)))
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [DELIVERY]
    assert dict(recorder.requests[0].url.params) == {"status": "failed"}


def test_the_cli_retries_a_delivery_by_id() -> None:
    recorder = Recorder({**DELIVERY, "status": "pending"})
    result = CliRunner().invoke(webhooks_cli.webhook, ["retry", "7"],
                                obj=Runtime(transport=httpx.MockTransport(recorder)))
    assert result.exit_code == 0, result.output
    assert recorder.requests[0].url.path == "/v1/webhooks/deliveries/7/retry"
    assert "pending" in result.output
