"""Phase deadlines with the real services: learned from the fleet's successful attempts,
an attempt stalled past a step's deadline ends then with the step's code (and its node is
powered off), the deadlines are listed (`GET /v1/deadlines`) and exported on /metrics."""

from __future__ import annotations

import asyncio
import datetime as dt
import re

import httpx
import pytest
from sqlalchemy import select, update

from ironsight.common.clock import utcnow
from ironsight.discoverd.db.models import phases
from ironsight.discoverd.service import DiscoverdService

from .conftest import BOTH_DBS
from .helpers import Machine, ipa_payload, make_node, settled_power, start, status, wait_finished

# Short bounds so that the learned deadlines are the steps' own: every step of the seeded
# attempts takes 1 s, so each deadline is 2 s.
# (the periodic check is left to its own test: the others call it)
SETTINGS = {"factor": "2", "min_seconds": "0.1", "min_samples": "3", "check_interval": "3600",
            "learn_interval": "3600"}
FAST = pytest.mark.discoverd_conf(deadlines=SETTINGS)
BOOT = ("dhcp_request", "dhcp_lease", "loader_fetched", "script_fetched", "kernel_fetched",
        "ramdisk_fetched", "hello")


async def steps(svc: DiscoverdService, m: Machine, phases: tuple[str, ...],
                start_at: dt.datetime, source: str = "dnsmasq") -> None:
    """The boot steps as the PXE side and the ramdisk would record them, 1 s apart."""
    for n, phase in enumerate(phases):
        assert await svc.cache.timeline.record(m.uuid, phase, source,
                                               at=start_at + dt.timedelta(seconds=n))


async def backdate(svc: DiscoverdService, m: Machine, seconds: float) -> None:
    """Move the steps of the node's attempt so far into the past (instead of sleeping)."""
    async with svc.db.begin() as conn:
        for ident, at in (await conn.execute(select(phases.c.id, phases.c.at).where(
                phases.c.uuid == m.uuid))).all():
            await conn.execute(update(phases).where(phases.c.id == ident).values(
                at=at - dt.timedelta(seconds=seconds)))


async def fleet(bm: httpx.AsyncClient, di: httpx.AsyncClient, svc: DiscoverdService,
                count: int = 3) -> None:
    """`count` successful attempts whose every boot step took 1 s."""
    for _ in range(count):
        m = await make_node(bm)
        await start(di, m.uuid)
        await backdate(svc, m, len(BOOT) + 1)
        await steps(svc, m, BOOT, utcnow() - dt.timedelta(seconds=len(BOOT)))
        resp = await di.post("/v1/continue", json=ipa_payload(m))
        assert resp.status_code == 200, resp.text
        assert (await wait_finished(di, m.uuid))["error"] is None
    await svc.recovery.deadlines.learn(utcnow())  # at once, not at the next learn_interval


async def stalled(bm: httpx.AsyncClient, di: httpx.AsyncClient, svc: DiscoverdService,
                  reached: tuple[str, ...], ago: float) -> Machine:
    """A node whose boot reached the `reached` steps (1 s apart), the last `ago` s ago."""
    m = await make_node(bm)
    await start(di, m.uuid)
    await backdate(svc, m, len(reached))
    await steps(svc, m, reached, utcnow() - dt.timedelta(seconds=len(reached) - 1))
    await backdate(svc, m, ago)
    return m


@BOTH_DBS
@FAST
async def test_a_boot_stalled_past_a_steps_deadline_ends_with_its_code(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    await fleet(bm, di, di_service)
    late = await stalled(bm, di, di_service, ("dhcp_request", "dhcp_lease"), ago=30)
    fresh = await stalled(bm, di, di_service, ("dhcp_request", "dhcp_lease"), ago=0.5)
    assert await di_service.recovery.end_overdue() == [late.uuid]
    doc = await status(di, late.uuid)
    assert doc["state"] == "error"
    assert doc["error"].startswith("BOOT_NO_LOADER: a DHCP lease was given at ")
    assert re.search(r"but the boot loader was never fetched \(waited 3\d s for loader_fetched; "
                     r"its deadline is 2 s: 2 x the p95 1\.0 s of 3 of this fleet's "
                     r"successful attempts, within 0\.1-1800 s\)$", doc["error"]), doc["error"]
    resp = await di.get(f"/v1/introspection/{late.uuid}/attempts")
    (attempt,) = resp.json()["attempts"]
    assert (attempt["result"], attempt["failure_code"]) == ("failed", "BOOT_NO_LOADER")
    await settled_power(bm, late.uuid, "power off")
    assert (await status(di, fresh.uuid))["state"] == "waiting"  # within its deadline


@FAST
@pytest.mark.parametrize(("reached", "code"), [
    (("dhcp_request",), "BOOT_NO_DHCP"),
    (("dhcp_request", "dhcp_lease", "loader_fetched", "script_fetched"), "BOOT_NO_KERNEL"),
    (BOOT[:-1], "RAMDISK_NO_HELLO"),
    (BOOT, "RAMDISK_NO_REPORT"),
])
async def test_each_stalled_step_gets_its_own_code(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService,
        reached: tuple[str, ...], code: str) -> None:
    await fleet(bm, di, di_service)
    m = await stalled(bm, di, di_service, reached, ago=30)
    assert await di_service.recovery.end_overdue() == [m.uuid]
    assert (await status(di, m.uuid))["error"].startswith(f"{code}: ")


@pytest.mark.discoverd_conf(deadlines={"min_samples": "5", "min_seconds": "0.1"})
async def test_without_enough_successful_attempts_nothing_is_ended(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    await fleet(bm, di, di_service, count=3)
    m = await stalled(bm, di, di_service, ("dhcp_request", "dhcp_lease"), ago=3600)
    assert await di_service.recovery.end_overdue() == []
    assert (await status(di, m.uuid))["state"] == "waiting"


@pytest.mark.discoverd_conf(deadlines={**SETTINGS, "check_interval": "0.1"})
async def test_the_periodic_check_ends_a_stalled_attempt_by_itself(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    await fleet(bm, di, di_service)
    m = await stalled(bm, di, di_service, BOOT[:4], ago=0)
    doc = await wait_finished(di, m.uuid, timeout=10)  # 4 s after its script at most
    assert doc["error"].startswith("BOOT_NO_KERNEL: ")


@pytest.mark.discoverd_conf(deadlines={**SETTINGS, "enabled": "false", "check_interval": "0.1"})
async def test_disabled_deadlines_end_nothing_but_are_still_learned(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    await fleet(bm, di, di_service)
    m = await stalled(bm, di, di_service, ("dhcp_request", "dhcp_lease"), ago=30)
    await asyncio.sleep(0.5)  # the periodic check would have run (it does not)
    assert (await status(di, m.uuid))["state"] == "waiting"
    body = (await di.get("/v1/deadlines")).json()
    assert body["enabled"] is False and body["deadlines"]


@FAST
async def test_the_deadlines_are_listed_with_their_settings(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    await fleet(bm, di, di_service)
    resp = await di.get("/v1/deadlines")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert (body["factor"], body["min_samples"], body["enabled"]) == (2.0, 3, True)
    found = {(d["step"], d["model"]): d for d in body["deadlines"]}
    assert found["loader_fetched", "*"] == {"step": "loader_fetched", "model": "*",
                                            "seconds": 2.0, "p95": 1.0, "samples": 3}
    assert ("loader_fetched", "ACME Test") in found  # the reports' model (ipa_payload)
    assert {step for step, _ in found} == {*BOOT[1:], "dhcp_request", "report_received"}


async def test_no_deadline_is_listed_before_any_attempt(di: httpx.AsyncClient) -> None:
    body = (await di.get("/v1/deadlines")).json()
    assert body["deadlines"] == [] and body["learned_at"] is not None


async def test_a_query_parameter_on_the_deadlines_is_400(di: httpx.AsyncClient) -> None:
    assert (await di.get("/v1/deadlines", params={"model": "x"})).status_code == 400


@FAST
async def test_the_deadlines_are_on_metrics(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    await fleet(bm, di, di_service)
    text = (await di.get("/metrics")).text
    assert 'ironsight_inspection_step_deadline_seconds{model="*",step="loader_fetched"} 2.0' \
        in text


