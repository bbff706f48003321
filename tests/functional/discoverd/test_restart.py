"""A restart in the middle: a new process takes over what a dead one of this host left in an
active state (starting, processing, aborting, reapplying), and waiting introspections simply
survive.

After a restart, `di` (bound to the first service's app) still reads the same database, so it
shows what the new service does."""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, insert, select, update

from ironsight.discoverd.db.models import data, introspections
from ironsight.discoverd.members import Members
from ironsight.discoverd.service import DiscoverdService

from .conftest import BOTH_DBS, Discoverds
from .helpers import (
    ipa_payload,
    make_node,
    node,
    settled_power,
    start,
    status,
    wait_finished,
    wait_state,
)


@pytest.fixture
def dead_owner() -> str:
    """`host:pid` of a process of this host that has exited."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return f"{socket.gethostname()}:{proc.pid}"


async def _set_row(svc: DiscoverdService, uuid: str, **values: Any) -> None:
    async with svc.db.begin() as conn:
        await conn.execute(update(introspections).where(introspections.c.uuid == uuid)
                           .values(**values))


async def _store_raw(svc: DiscoverdService, uuid: str, payload: dict[str, Any]) -> None:
    async with svc.db.begin() as conn:
        await conn.execute(delete(data).where(data.c.uuid == uuid))
        started = (await conn.execute(select(introspections.c.started_at)
                                      .where(introspections.c.uuid == uuid))).scalar_one()
        await conn.execute(insert(data).values(
            uuid=uuid, processed=False, data=payload, started_at=started,
            stored_at=dt.datetime.now(dt.UTC).replace(tzinfo=None)))


@BOTH_DBS
async def test_restart_resumes_processing(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                          di_service: DiscoverdService,
                                          discoverds: Discoverds,
                                          dead_owner: str) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    # the dead process had claimed the callback and stored the raw data, then died
    await _set_row(di_service, m.uuid, state="processing", owner=dead_owner)
    await _store_raw(di_service, m.uuid, ipa_payload(m, cpus=24))
    new = await discoverds.restart(di_service)
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "finished", doc
    assert (await node(bm, m.uuid))["properties"]["cpus"] == 24
    await settled_power(bm, m.uuid, "power off")
    assert await new.recovery.resume() == 0  # nothing left to take over


async def test_restart_resumes_starting(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                        di_service: DiscoverdService,
                                        discoverds: Discoverds,
                                        dead_owner: str) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    # as if the process had died before booting the node
    resp = await bm.put(f"/v1/nodes/{m.uuid}/states/power", json={"target": "power off"})
    assert resp.status_code == 202
    await settled_power(bm, m.uuid, "power off")
    resp = await bm.put(f"/v1/nodes/{m.uuid}/management/boot_device",
                        json={"boot_device": "disk"})
    assert resp.status_code == 204
    await _set_row(di_service, m.uuid, state="starting", owner=dead_owner)
    await discoverds.restart(di_service)
    await wait_state(di, m.uuid, "waiting")
    await settled_power(bm, m.uuid, "power on")
    assert (await bm.get(f"/v1/nodes/{m.uuid}/management/boot_device")).json()[
        "boot_device"] == "pxe"
    resp = await di.post("/v1/continue", json=ipa_payload(m))
    assert resp.status_code == 200, resp.text
    assert (await wait_finished(di, m.uuid))["state"] == "finished"
    assert (await node(bm, m.uuid))["properties"]["cpus"] == 8


async def test_restart_finishes_an_abort(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                         di_service: DiscoverdService,
                                         discoverds: Discoverds,
                                         dead_owner: str) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    await _set_row(di_service, m.uuid, state="aborting", owner=dead_owner)
    await discoverds.restart(di_service)
    doc = await wait_finished(di, m.uuid)
    assert doc["error"] == "Canceled by operator"
    await settled_power(bm, m.uuid, "power off")


@pytest.mark.discoverd_conf(processing={"overwrite_existing": "true"})
async def test_restart_resumes_reapplying(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                          di_service: DiscoverdService,
                                          discoverds: Discoverds,
                                          dead_owner: str) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    assert (await di.post("/v1/continue", json=ipa_payload(m))).status_code == 200
    await wait_finished(di, m.uuid)
    await _set_row(di_service, m.uuid, state="reapplying", owner=dead_owner, finished_at=None)
    await _store_raw(di_service, m.uuid, ipa_payload(m, cpus=48))
    await discoverds.restart(di_service)
    assert (await wait_finished(di, m.uuid))["state"] == "finished"
    assert (await node(bm, m.uuid))["properties"]["cpus"] == 48


async def test_restart_processing_without_raw_data_is_an_error(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService,
        discoverds: Discoverds, dead_owner: str) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await _set_row(di_service, m.uuid, state="processing", owner=dead_owner)
    await discoverds.restart(di_service)
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "error"
    assert "no raw data" in doc["error"]


async def test_introspection_of_a_live_replica_on_another_host_is_not_taken_over(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService,
        discoverds: Discoverds) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await Members(di_service.db, "some-other-host:1", 60).register()  # heartbeating elsewhere
    await _set_row(di_service, m.uuid, state="processing", owner="some-other-host:1")
    await _store_raw(di_service, m.uuid, ipa_payload(m))
    new = await discoverds.restart(di_service)
    assert await new.recovery.resume() == 0
    await new.workers.drain(timeout=5)
    assert (await status(di, m.uuid))["state"] == "processing"


@BOTH_DBS
async def test_waiting_introspection_survives_a_restart(bm: httpx.AsyncClient,
                                                        di_service: DiscoverdService,
                                                        discoverds: Discoverds) -> None:
    m = await make_node(bm)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=di_service.app),
                                 base_url="http://di.test") as old:
        before = await start(old, m.uuid)
    new = await discoverds.restart(di_service)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=new.app),
                                 base_url="http://di.test") as di:
        assert await status(di, m.uuid) == before
        resp = await di.post("/v1/continue", json=ipa_payload(m))
        assert resp.status_code == 200, resp.text
        assert (await wait_finished(di, m.uuid))["state"] == "finished"
    assert (await node(bm, m.uuid))["properties"]["cpus"] == 8
    await settled_power(bm, m.uuid, "power off")
