"""Conductor behaviour: node locks, dead conductors, deadlines, worker pool, failures."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from ironsight.baremetal import states
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db.models import nodes
from ironsight.baremetal.drivers.base import InspectOutcome
from ironsight.baremetal.service import BaremetalService

from .helpers import create_node, fault, manage, wait_for


async def set_row(service: BaremetalService, uuid: str, **values: Any) -> None:
    async with service.db.begin() as conn:
        await conn.execute(update(nodes).where(nodes.c.uuid == uuid).values(**values))


async def test_locked_node_answers_409_naming_the_holder(
        api: httpx.AsyncClient, service: BaremetalService) -> None:
    node = await create_node(api)
    await set_row(service, node["uuid"], reservation="other-host:1")
    resp = await api.patch(f"/v1/nodes/{node['uuid']}",
                           json=[{"op": "add", "path": "/extra/a", "value": 1}])
    assert resp.status_code == 409
    assert "is locked by host other-host:1" in fault(resp)


async def test_lock_is_exclusive_between_two_acquirers(service: BaremetalService,
                                                       api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    task = await service.conductor.tasks.acquire(node["uuid"])
    try:
        from ironsight.baremetal.conductor.task import TaskManager
        from ironsight.common.exceptions import NodeLocked

        other = TaskManager(service.db, "someone-else:2", service.conductor.workers)
        with pytest.raises(NodeLocked):
            await other.acquire(node["uuid"], attempts=1)
    finally:
        await task.release()
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["reservation"] is None


async def test_lock_of_a_dead_conductor_is_recovered(api: httpx.AsyncClient,
                                                     service: BaremetalService) -> None:
    node = await create_node(api)
    async with service.db.begin() as conn:
        await dbapi.register_conductor(conn, "gone:1", "elsewhere", 1, ["fake"])
        from ironsight.baremetal.db.models import conductors
        await conn.execute(update(conductors).where(conductors.c.name == "gone:1").values(
            heartbeat_at=dbapi.utcnow() - dt.timedelta(hours=1)))
    await set_row(service, node["uuid"], reservation="gone:1", provision_state=states.VERIFYING)
    assert await service.periodic.recover_dead_conductors() == 1
    doc = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert doc["reservation"] is None
    assert doc["provision_state"] == "enroll"
    assert "died" in doc["last_error"]


async def test_lock_of_a_live_conductor_is_kept(api: httpx.AsyncClient,
                                                service: BaremetalService) -> None:
    node = await create_node(api)
    async with service.db.begin() as conn:
        await dbapi.register_conductor(conn, "alive:1", "elsewhere", 1, ["fake"])
    await set_row(service, node["uuid"], reservation="alive:1")
    assert await service.periodic.recover_dead_conductors() == 0
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["reservation"] == "alive:1"


async def test_inspect_wait_past_deadline_fails(api: httpx.AsyncClient,
                                                service: BaremetalService) -> None:
    node = await create_node(api)
    await set_row(service, node["uuid"], provision_state=states.INSPECTWAIT,
                  provision_updated_at=dbapi.utcnow() - dt.timedelta(hours=2))
    assert await service.periodic.check_timeouts() == 1
    doc = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert doc["provision_state"] == "inspect failed"
    assert "Timeout reached while inspecting" in doc["last_error"]


async def test_fresh_inspect_wait_is_left_alone(api: httpx.AsyncClient,
                                                service: BaremetalService) -> None:
    node = await create_node(api)
    await set_row(service, node["uuid"], provision_state=states.INSPECTWAIT,
                  provision_updated_at=dbapi.utcnow())
    assert await service.periodic.check_timeouts() == 0


async def test_abort_from_inspect_wait_fails_inspection(api: httpx.AsyncClient,
                                                        service: BaremetalService) -> None:
    node = await create_node(api)
    await manage(api, node["uuid"])

    async def wait_outside(_node: Any, **_: Any) -> InspectOutcome:
        return InspectOutcome.waiting()

    service.conductor.drivers["fake"].inspect.start = wait_outside  # type: ignore
    url = f"/v1/nodes/{node['uuid']}/states/provision"
    await api.put(url, json={"target": "inspect"})
    doc = await wait_for(api, node["uuid"], provision="inspect wait")
    assert doc["reservation"] is None  # the lock is released while waiting
    assert (await api.put(url, json={"target": "abort"})).status_code == 202
    doc = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert doc["provision_state"] == "inspect failed"
    assert doc["last_error"] == "Inspection was aborted by request."
    # inspect failed -> inspect again is allowed
    service.conductor.drivers["fake"].inspect.start = (  # type: ignore
        lambda _n, **_: asyncio.sleep(0, InspectOutcome.done()))
    await api.put(url, json={"target": "inspect"})
    await wait_for(api, node["uuid"], provision="manageable")


async def test_crashing_action_releases_lock_and_records_error(
        api: httpx.AsyncClient, service: BaremetalService) -> None:
    node = await create_node(api)
    await manage(api, node["uuid"])

    async def crash(_node: Any, **_: Any) -> InspectOutcome:
        raise RuntimeError("boom")

    service.conductor.drivers["fake"].inspect.start = crash  # type: ignore
    await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "inspect"})
    doc = await wait_for(api, node["uuid"], provision="inspect failed")
    assert doc["reservation"] is None
    assert "boom" in doc["last_error"]


@pytest.fixture
def conf_overrides() -> dict[str, dict[str, str]]:
    return {"conductor": {"workers_pool_size": "1"}}


async def test_full_worker_pool_answers_503_and_changes_nothing(
        api: httpx.AsyncClient, service: BaremetalService) -> None:
    a, b = await create_node(api), await create_node(api)
    gate = asyncio.Event()

    async def slow(_node: Any, _target: str, _timeout: float) -> None:
        await gate.wait()

    service.conductor.drivers["fake"].power.set_power_state = slow  # type: ignore
    assert (await api.put(f"/v1/nodes/{a['uuid']}/states/power",
                          json={"target": "power on"})).status_code == 202
    resp = await api.put(f"/v1/nodes/{b['uuid']}/states/power", json={"target": "power on"})
    assert resp.status_code == 503
    doc = (await api.get(f"/v1/nodes/{b['uuid']}")).json()
    assert (doc["target_power_state"], doc["reservation"]) == (None, None)
    gate.set()
    await wait_for(api, a["uuid"], power="power on")
