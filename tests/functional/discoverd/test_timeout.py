"""Introspections that never hear from their ramdisk end with "Introspection timeout"."""

from __future__ import annotations

import asyncio
import datetime as dt

import httpx
import pytest
from sqlalchemy import update

from ironsight.discoverd.db.models import introspections
from ironsight.discoverd.service import DiscoverdService

from .conftest import BOTH_DBS
from .helpers import ipa_payload, make_node, settled_power, start, status, wait_finished


async def _backdate(svc: DiscoverdService, uuid: str, seconds: float) -> None:
    """Move the start of an introspection into the past (instead of sleeping)."""
    async with svc.db.begin() as conn:
        row = (await conn.execute(introspections.select().where(
            introspections.c.uuid == uuid))).mappings().one()
        await conn.execute(update(introspections).where(introspections.c.uuid == uuid)
                           .values(started_at=row["started_at"]
                                   - dt.timedelta(seconds=seconds)))


@BOTH_DBS
@pytest.mark.discoverd_conf(introspection={"timeout": "1"})
async def test_timeout_ends_introspection_and_powers_off(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    other = await make_node(bm)
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    assert await di_service.recovery.clean_up() == []  # not yet
    assert (await status(di, m.uuid))["state"] == "waiting"
    await asyncio.sleep(1.1)
    await start(di, other.uuid)  # started within the timeout: left alone
    assert await di_service.recovery.clean_up() == [m.uuid]
    doc = await status(di, m.uuid)
    assert doc["state"] == "error" and doc["finished"] is True
    assert doc["error"] == "Introspection timeout"
    assert doc["finished_at"] is not None
    await settled_power(bm, m.uuid, "power off")
    resp = await di.post("/v1/continue", json=ipa_payload(m))
    assert resp.status_code == 404  # no longer found
    assert (await status(di, m.uuid))["error"] == "Introspection timeout"
    assert (await status(di, other.uuid))["state"] == "waiting"
    assert await di_service.recovery.clean_up() == []  # ended once


@pytest.mark.discoverd_conf(introspection={"timeout": "1"})
async def test_timeout_with_manage_boot_false_leaves_power_alone(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    resp = await di.post(f"/v1/introspection/{m.uuid}", params={"manage_boot": "false"})
    assert resp.status_code == 202
    resp = await bm.put(f"/v1/nodes/{m.uuid}/states/power", json={"target": "power on"})
    assert resp.status_code == 202
    await settled_power(bm, m.uuid, "power on")
    await _backdate(di_service, m.uuid, 5)
    assert await di_service.recovery.clean_up() == [m.uuid]
    await di_service.workers.drain(timeout=5)
    await settled_power(bm, m.uuid, "power on")
    assert (await status(di, m.uuid))["error"] == "Introspection timeout"


@pytest.mark.discoverd_conf(introspection={"timeout": "0"})
async def test_timeout_zero_never_ends_introspections(bm: httpx.AsyncClient,
                                                      di: httpx.AsyncClient,
                                                      di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    assert await di_service.recovery.clean_up() == []
    assert (await status(di, m.uuid))["state"] == "waiting"


@pytest.mark.discoverd_conf(introspection={"timeout": "1", "clean_up_period": "0.1"})
async def test_periodic_clean_up_runs_by_itself(bm: httpx.AsyncClient,
                                                di: httpx.AsyncClient,
                                                di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await _backdate(di_service, m.uuid, 5)
    doc = await wait_finished(di, m.uuid, timeout=5)
    assert doc["error"] == "Introspection timeout"
    await settled_power(bm, m.uuid, "power off")
