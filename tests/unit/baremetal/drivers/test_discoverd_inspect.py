"""DiscoverdInspect with a mocked discoverd client: every branch the design describes.

The client is a stand-in here (the design asks for unit tests with a mocked client); the real
client and service are exercised in tests/functional/inspection/.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
import types
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.drivers.discoverd_inspect import (
    STEPS_DELAY,
    DiscoverdDisabled,
    DiscoverdInspect,
    load_client,
)
from ironsight.baremetal.service import BaremetalService, upgrade_database
from ironsight.common import config
from ironsight.common.exceptions import DriverLoadError, IronsightError
from ironsight.discoverd import client as real_client

URL = "http://127.0.0.1:5050/v1"


def conf_with(tmp_path: Path | None = None, **discoverd: str) -> config.Config:
    sections: dict[str, dict[str, str]] = {"discoverd": discoverd}
    if tmp_path is not None:
        sections["DEFAULT"] = {"state_dir": str(tmp_path)}
        sections["conductor"] = {"sync_power_state_interval": "0",
                                 "enabled_hardware_types": "fake"}
    return config.load(overrides=sections)


class FakeClient:
    """Records calls; answers from `statuses`; raises `fail_with` when set."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.statuses: dict[str, dict[str, Any]] = {}
        self.fail_with: Exception | None = None
        self.manage_boot: dict[str, bool | None] = {}
        self.abort_reasons: list[str | None] = []
        self.phases: list[tuple[str, str]] = []  # the steps told, apart from `calls`
        self.attempts: dict[str, list[dict[str, Any]]] = {}
        self.known: dict[str, Any] = {}

    async def introspect(self, uuid: str, manage_boot: bool | None = None,
                         known: dict[str, Any] | None = None) -> None:
        self.calls.append(("introspect", uuid))
        self.manage_boot[uuid] = manage_boot
        self.known[uuid] = known
        if self.fail_with:
            raise self.fail_with

    async def get_statuses(self, uuids: list[str]) -> dict[str, Any]:
        self.calls.append(("get_statuses", list(uuids)))
        if self.fail_with:
            raise self.fail_with
        return {u: self.statuses[u] for u in uuids if u in self.statuses}

    async def abort(self, uuid: str, reason: str | None = None) -> None:
        self.calls.append(("abort", uuid))
        self.abort_reasons.append(reason)
        if self.fail_with:
            raise self.fail_with

    async def add_phases(self, steps: dict[str, list[dict[str, Any]]]) -> list[str]:
        self.phases.extend((uuid, step["phase"]) for uuid, found in steps.items()
                           for step in found)
        return list(steps)

    async def get_attempts(self, uuid: str) -> list[dict[str, Any]]:
        if uuid not in self.attempts:
            raise real_client.ClientError(f"Introspection for node {uuid} not found", 404)
        return self.attempts[uuid]

    async def aclose(self) -> None:
        pass


# --- loading (the design's constructor checks) ------------------------------------------------


def test_enabled_without_service_url_refuses_to_load() -> None:
    with pytest.raises(DriverLoadError, match="service_url is not set"):
        DiscoverdInspect(conf_with(enabled="true"))


def test_enabled_with_client_that_cannot_be_imported_refuses_to_load() -> None:
    with pytest.raises(DriverLoadError, match="cannot be imported"):
        load_client(conf_with(enabled="true", service_url=URL), "no_such_discoverd_client")


def test_enabled_with_old_client_refuses_to_load(monkeypatch: pytest.MonkeyPatch) -> None:
    old = types.ModuleType("old_discoverd_client")
    old.__version_info__ = (0, 2, 0)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "old_discoverd_client", old)
    with pytest.raises(DriverLoadError, match=r"version \(0, 2, 0\); 1.0.0 or newer"):
        load_client(conf_with(enabled="true", service_url=URL), "old_discoverd_client")


def test_enabled_with_client_without_version_refuses_to_load(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bare_client", types.ModuleType("bare_client"))
    with pytest.raises(DriverLoadError, match="version unknown"):
        load_client(conf_with(enabled="true", service_url=URL), "bare_client")


def test_enabled_with_good_client_loads() -> None:
    inspect = DiscoverdInspect(conf_with(enabled="true", service_url=URL))
    assert inspect.client_lib is real_client
    assert real_client.__version_info__ >= (1, 0, 0)


def test_disabled_skips_the_checks() -> None:
    inspect = DiscoverdInspect(conf_with(enabled="false"))  # no service_url: not checked
    assert inspect.client_lib is None
    assert inspect.poll_period == 0  # no status poll


def test_the_busy_poll_period_is_never_longer_than_the_period() -> None:
    inspect = DiscoverdInspect(conf_with(enabled="true", service_url=URL,
                                         status_check_period="0.2",
                                         busy_status_check_period="1"))
    assert (inspect.poll_period, inspect.busy_poll_period) == (0.2, 0.2)


def test_disabled_validate_explains_how_to_enable() -> None:
    with pytest.raises(DiscoverdDisabled, match=r"\[discoverd\] enabled = true") as raised:
        DiscoverdInspect(conf_with(enabled="false")).validate(None)  # type: ignore[arg-type]
    assert raised.value.code == 400


def test_refusal_is_reported_by_the_loader(tmp_path: Path) -> None:
    from ironsight.baremetal.drivers.loader import load_drivers

    conf = config.load(overrides={"discoverd": {"enabled": "true"},
                                  "conductor": {"enabled_hardware_types": "fake,pxe_ipmitool"}})
    drivers = load_drivers(conf)
    assert "service_url is not set" in drivers.refused["pxe_ipmitool"]
    assert "service_url is not set" in drivers.refused["fake-hardware"]
    assert dict(drivers) == {}


# --- inspect, poll, abort against a real conductor and database, mocked client ----------------


async def service_with(tmp_path: Path, **discoverd: str) -> BaremetalService:
    """A discoverd that cannot be reached is not tried again (unless a test says so)."""
    discoverd = {"start_unreachable_timeout": "0", **discoverd}
    conf = conf_with(tmp_path, enabled="true", service_url=URL, **discoverd)
    upgrade_database(conf)
    return BaremetalService(conf)


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[BaremetalService]:
    """The default: the conductor boots the node and powers it off ([discoverd] conductor_boots)."""
    service = await service_with(tmp_path)
    yield service
    await service.stop()


@pytest.fixture
async def kilo_svc(tmp_path: Path) -> AsyncIterator[BaremetalService]:
    """`[discoverd] conductor_boots = false`: discoverd boots the node through the API."""
    service = await service_with(tmp_path, conductor_boots="false")
    yield service
    await service.stop()


@pytest.fixture
def client(svc: BaremetalService) -> FakeClient:
    return fake_client(svc)


async def managed_node(svc: BaremetalService, **values: Any) -> str:
    async with svc.db.begin() as conn:
        row = await dbapi.create_node(conn, {
            "driver": "fake", "provision_state": states.MANAGEABLE,
            "power_state": states.POWER_OFF, "provision_updated_at": dbapi.utcnow(), **values})
    return str(row["uuid"])


async def node(svc: BaremetalService, uuid: str) -> dict[str, Any]:
    async with svc.db.read() as conn:
        return await dbapi.get_node(conn, uuid)


async def history(svc: BaremetalService, uuid: str) -> list[dict[str, Any]]:
    async with svc.db.read() as conn:
        return await dbapi.list_history(conn, (await dbapi.get_node(conn, uuid))["id"])


async def inspect(svc: BaremetalService, uuid: str) -> None:
    await svc.conductor.do_provision_action(uuid, "inspect")
    await svc.conductor.workers.drain(timeout=5)


def fake_client(svc: BaremetalService) -> FakeClient:
    """The service's DiscoverdInspect talks to a FakeClient from now on."""
    fake = FakeClient()
    inspect_iface = svc.conductor.drivers["fake"].inspect
    assert isinstance(inspect_iface, DiscoverdInspect)
    inspect_iface._client = fake
    return fake


async def test_without_managed_boot_the_lock_is_released_before_introspect(
        kilo_svc: BaremetalService) -> None:
    client = fake_client(kilo_svc)
    uuid = await managed_node(kilo_svc)
    seen: dict[str, Any] = {}

    async def introspect(u: str, manage_boot: bool | None = None,
                         known: dict[str, Any] | None = None) -> None:
        seen.update(await node(kilo_svc, u))  # what discoverd sees when it acts on the node
        seen["manage_boot"] = manage_boot

    client.introspect = introspect  # type: ignore[method-assign]
    await inspect(kilo_svc, uuid)
    assert (seen["reservation"], seen["provision_state"], seen["manage_boot"]) == (
        None, states.INSPECTWAIT, None)


async def test_without_managed_boot_the_conductor_leaves_power_to_discoverd(
        kilo_svc: BaremetalService) -> None:
    client = fake_client(kilo_svc)
    uuid = await managed_node(kilo_svc)
    await inspect(kilo_svc, uuid)
    client.statuses[uuid] = {"uuid": uuid, "finished": True, "state": "finished", "error": None}
    assert await check(kilo_svc) == 1
    assert uuid not in boot_devices(kilo_svc)
    row = await node(kilo_svc, uuid)
    assert (row["provision_state"], row["power_state"]) == (states.MANAGEABLE, states.POWER_OFF)
    assert "rebooted into the inspection ramdisk" not in " ".join(
        e["event"] for e in await history(kilo_svc, uuid))


def boot_devices(svc: BaremetalService) -> dict[str, Any]:
    return svc.conductor.drivers["fake"].management.boot_devices  # type: ignore[no-any-return,attr-defined]


def fake_power(svc: BaremetalService) -> Any:
    return svc.conductor.drivers["fake"].power


async def test_with_managed_boot_discoverd_is_told_not_to_manage_boot(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    assert client.manage_boot == {uuid: False}


async def test_the_start_carries_the_nodes_state_bmc_address_and_macs_but_no_secret(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc, driver_info={
        "ipmi_address": "10.1.2.3", "ipmi_password": "s3cret", "ipmi_username": "admin"})
    for mac in ("52:54:00:00:00:02", "52:54:00:00:00:01"):
        await svc.conductor.records.create_port({"address": mac}, uuid)
    await inspect(svc, uuid)
    assert client.known[uuid] == {
        "node": {"provision_state": states.INSPECTING, "maintenance": False,
                 "driver_info": {"ipmi_address": "10.1.2.3"}},
        "ports": [{"address": "52:54:00:00:00:02"}, {"address": "52:54:00:00:00:01"}]}


async def test_with_managed_boot_the_node_stays_locked_until_it_is_booted(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    seen: dict[str, Any] = {}

    async def introspect(u: str, manage_boot: bool | None = None,
                         known: dict[str, Any] | None = None) -> None:
        seen.update(await node(svc, u))
        seen["booted"] = u in boot_devices(svc)

    client.introspect = introspect  # type: ignore[method-assign]
    await inspect(svc, uuid)
    assert seen["reservation"] is not None
    assert (seen["provision_state"], seen["booted"]) == (states.INSPECTING, False)
    row = await node(svc, uuid)
    assert (row["provision_state"], row["reservation"]) == (states.INSPECTWAIT, None)


async def test_with_managed_boot_the_node_is_set_to_pxe_and_rebooted_after_the_start(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    assert boot_devices(svc)[uuid] == {"boot_device": "pxe", "persistent": False}
    assert fake_power(svc).power_states[uuid] == states.POWER_ON
    row = await node(svc, uuid)
    assert (row["provision_state"], row["power_state"]) == (states.INSPECTWAIT, states.POWER_ON)
    assert ("Provision state changed from inspecting to inspect wait (wait): boot device set "
            "to pxe and rebooted into the inspection ramdisk: power on") in [
        e["event"] for e in await history(svc, uuid)]


async def test_with_managed_boot_the_reboot_is_told_to_discoverds_timeline(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    assert client.phases == []  # gathered, then sent with the other nodes' at once
    await asyncio.sleep(STEPS_DELAY * 2)
    assert client.phases == [(uuid, "power_on_requested"), (uuid, "powered_on")]


async def test_a_step_that_cannot_be_told_does_not_fail_the_inspection(
        svc: BaremetalService, client: FakeClient) -> None:
    async def broken(steps: Any) -> None:
        raise RuntimeError("discoverd answered nonsense")

    client.add_phases = broken  # type: ignore[method-assign]
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    await asyncio.sleep(STEPS_DELAY * 2)
    assert (await node(svc, uuid))["provision_state"] == states.INSPECTWAIT


async def test_with_managed_boot_a_failed_start_does_not_boot_the_node(
        svc: BaremetalService, client: FakeClient) -> None:
    client.fail_with = real_client.ClientError("node is locked", 409)
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    assert uuid not in boot_devices(svc)
    assert (await node(svc, uuid))["provision_state"] == states.INSPECTFAIL


async def test_with_managed_boot_a_reboot_failure_fails_and_aborts_in_discoverd(
        svc: BaremetalService, client: FakeClient, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(node: Any, target: str, timeout: float) -> None:
        raise IronsightError("BMC did not answer")

    monkeypatch.setattr(fake_power(svc), "set_power_state", broken)
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    row = await node(svc, uuid)
    assert (row["provision_state"], row["reservation"]) == (states.INSPECTFAIL, None)
    assert row["last_error"] == ("Failed to boot the node into the inspection ramdisk: "
                                 "BMC did not answer")
    assert client.calls == [("introspect", uuid), ("abort", uuid)]


async def test_with_managed_boot_a_finished_node_is_powered_off(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.statuses[uuid] = {"uuid": uuid, "finished": True, "state": "finished", "error": None}
    assert await check(svc) == 1
    row = await node(svc, uuid)
    assert (row["provision_state"], row["power_state"], row["reservation"]) == (
        states.MANAGEABLE, states.POWER_OFF, None)
    assert fake_power(svc).power_states[uuid] == states.POWER_OFF


async def test_with_managed_boot_a_failed_inspection_is_powered_off_too(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.statuses[uuid] = {"uuid": uuid, "finished": True, "state": "error", "error": "boom"}
    await check(svc)
    row = await node(svc, uuid)
    assert (row["provision_state"], row["power_state"]) == (states.INSPECTFAIL,
                                                            states.POWER_OFF)


async def test_with_managed_boot_a_node_that_will_not_power_off_fails_saying_why(
        svc: BaremetalService, client: FakeClient, monkeypatch: pytest.MonkeyPatch) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)

    async def broken(node: Any, target: str, timeout: float) -> None:
        raise IronsightError("BMC did not answer")

    monkeypatch.setattr(fake_power(svc), "set_power_state", broken)
    client.statuses[uuid] = {"uuid": uuid, "finished": True, "state": "finished", "error": None}
    await check(svc)
    row = await node(svc, uuid)
    assert (row["provision_state"], row["reservation"]) == (states.INSPECTFAIL, None)
    assert row["last_error"] == ("Failed to power off the node after its inspection: "
                                 "BMC did not answer")


async def test_with_managed_boot_and_no_power_off_a_finished_node_stays_on(
        tmp_path: Path) -> None:
    svc = await service_with(tmp_path, power_off="false")
    try:
        client = fake_client(svc)
        uuid = await managed_node(svc)
        await inspect(svc, uuid)
        client.statuses[uuid] = {"uuid": uuid, "finished": True, "state": "finished",
                                 "error": None}
        assert await check(svc) == 1
        row = await node(svc, uuid)
        assert (row["provision_state"], row["power_state"]) == (states.MANAGEABLE,
                                                                states.POWER_ON)
    finally:
        await svc.stop()


async def test_with_managed_boot_an_abort_powers_the_node_off(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    await svc.conductor.do_provision_action(uuid, "abort")
    await svc.conductor.workers.drain(timeout=5)
    row = await node(svc, uuid)
    assert (row["provision_state"], row["power_state"], row["reservation"]) == (
        states.INSPECTFAIL, states.POWER_OFF, None)
    assert row["last_error"] == "Inspection was aborted by request."


async def test_inspect_moves_node_to_inspect_wait(svc: BaremetalService,
                                                  client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    assert client.calls == [("introspect", uuid)]
    row = await node(svc, uuid)
    assert (row["provision_state"], row["target_provision_state"]) == (
        states.INSPECTWAIT, states.MANAGEABLE)
    assert row["inspection_started_at"] is not None


async def test_failure_to_start_fails_inspection(svc: BaremetalService,
                                                 client: FakeClient) -> None:
    client.fail_with = real_client.ClientError("node is locked", 409)
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    row = await node(svc, uuid)
    assert row["provision_state"] == states.INSPECTFAIL
    assert row["last_error"].startswith("Failed to start inspection: node is locked")
    assert row["reservation"] is None


async def past_grace(svc: BaremetalService, uuid: str) -> None:
    """As if the node had waited longer than [discoverd] start_grace_period."""
    async with svc.db.begin() as conn:
        await dbapi.update_node(conn, (await node(svc, uuid))["id"], {
            "provision_updated_at": dbapi.utcnow() - dt.timedelta(minutes=5)})


async def test_discoverd_down_at_start_leaves_the_node_waiting_unlocked(
        svc: BaremetalService, client: FakeClient) -> None:
    client.fail_with = real_client.ServiceUnavailable("cannot reach discoverd")
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    row = await node(svc, uuid)
    assert (row["provision_state"], row["reservation"], row["last_error"]) == (
        states.INSPECTWAIT, None, None)
    assert "cannot reach discoverd" in row["driver_internal_info"]["inspection_start"]["lost"]
    assert await check(svc) == 0  # within the grace period: not yet started again


async def test_a_lost_start_is_made_again_once_discoverd_is_back(
        svc: BaremetalService, client: FakeClient) -> None:
    client.fail_with = real_client.ServiceUnavailable("cannot reach discoverd")
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.fail_with = None
    await past_grace(svc, uuid)
    assert await check(svc) == 1
    row = await node(svc, uuid)
    assert client.calls.count(("introspect", uuid)) == 2
    assert row["provision_state"] == states.INSPECTWAIT
    assert row["driver_internal_info"]["inspection_start"]["starts"] == 2
    assert row["driver_internal_info"]["inspection_start"]["lost"] is None


async def test_discoverd_down_at_every_start_fails_inspection_naming_it(
        svc: BaremetalService, client: FakeClient) -> None:
    client.fail_with = real_client.ServiceUnavailable("cannot reach discoverd")
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    for _ in range(3):  # [discoverd] start_attempts = 3: two more starts, then the failure
        await past_grace(svc, uuid)
        await check(svc)
    row = await node(svc, uuid)
    assert row["provision_state"] == states.INSPECTFAIL
    assert row["last_error"] == ("Failed to start inspection: cannot reach discoverd "
                                 "(after 3 attempts)")
    assert client.calls.count(("introspect", uuid)) == 3


async def check(svc: BaremetalService) -> int:
    """One pass of the conductor's discoverd status poll, and the work it spawned."""
    (name, _period, poll), = svc.conductor.inspection.poll_tasks()
    assert name == "discoverd-status"
    done = await poll()
    await svc.conductor.workers.drain(timeout=5)
    return done.moved


async def test_poll_moves_finished_node_to_manageable(svc: BaremetalService,
                                                      client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.statuses[uuid] = {"uuid": uuid, "finished": True, "state": "finished", "error": None}
    assert await check(svc) == 1
    row = await node(svc, uuid)
    assert row["provision_state"] == states.MANAGEABLE
    assert row["inspection_finished_at"] is not None


async def test_poll_fails_node_when_discoverd_reports_error(svc: BaremetalService,
                                                           client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.statuses[uuid] = {"uuid": uuid, "finished": True, "state": "error",
                             "error": "Ramdisk reported error: disk on fire"}
    await check(svc)
    row = await node(svc, uuid)
    assert row["provision_state"] == states.INSPECTFAIL
    assert row["last_error"] == ("discoverd inspection failed: Ramdisk reported error: "
                                 "disk on fire")


async def test_poll_leaves_unfinished_node_waiting(svc: BaremetalService,
                                                  client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.statuses[uuid] = {"uuid": uuid, "finished": False, "state": "waiting", "error": None}
    assert await check(svc) == 0
    assert (await node(svc, uuid))["provision_state"] == states.INSPECTWAIT


async def test_poll_with_discoverd_down_fails_no_node(svc: BaremetalService,
                                                      client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.fail_with = real_client.ServiceUnavailable("cannot reach discoverd")
    assert await check(svc) == 0
    row = await node(svc, uuid)
    assert (row["provision_state"], row["last_error"]) == (states.INSPECTWAIT, None)


async def test_poll_asks_once_for_many_nodes(svc: BaremetalService, client: FakeClient) -> None:
    uuids = [await managed_node(svc) for _ in range(5)]
    for uuid in uuids:
        await inspect(svc, uuid)
    client.calls.clear()
    await check(svc)
    assert [c[0] for c in client.calls] == ["get_statuses"]
    assert sorted(client.calls[0][1]) == sorted(uuids)


async def test_poll_makes_no_request_when_no_node_waits(svc: BaremetalService,
                                                        client: FakeClient) -> None:
    await managed_node(svc)
    await check(svc)
    assert client.calls == []


async def test_poll_skips_locked_node_until_next_period(svc: BaremetalService,
                                                        client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.statuses[uuid] = {"uuid": uuid, "finished": True, "state": "finished", "error": None}
    task = await svc.conductor.tasks.acquire(uuid)
    try:
        assert await check(svc) == 0  # locked nodes are not even asked about
    finally:
        await task.release()
    assert await check(svc) == 1


async def test_node_unknown_to_discoverd_is_started_again_after_grace(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    assert await check(svc) == 0  # just started: discoverd may not have recorded it yet
    await past_grace(svc, uuid)
    assert await check(svc) == 1
    row = await node(svc, uuid)
    assert row["provision_state"] == states.INSPECTWAIT
    assert client.calls.count(("introspect", uuid)) == 2
    events = [e["event"] for e in await history(svc, uuid)]
    assert ("Inspection started again (attempt 2 of 3): discoverd has no record of an "
            "introspection of this node") in events


async def test_node_unknown_to_discoverd_fails_once_its_starts_are_used(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    for _ in range(3):
        await past_grace(svc, uuid)
        await check(svc)
    row = await node(svc, uuid)
    assert row["provision_state"] == states.INSPECTFAIL
    assert "no record" in row["last_error"]


def previous_introspection(uuid: str, started: dt.datetime) -> dict[str, Any]:
    """What discoverd reports while it has not recorded a re-inspection's start yet."""
    return {"uuid": uuid, "finished": True, "state": "error", "error": "Canceled by operator",
            "started_at": started.isoformat(), "finished_at": started.isoformat()}


async def test_reinspection_is_not_ended_by_the_previous_introspection(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    earlier = dbapi.utcnow() - dt.timedelta(hours=1)
    client.statuses[uuid] = previous_introspection(uuid, earlier)
    assert await check(svc) == 0
    assert (await node(svc, uuid))["provision_state"] == states.INSPECTWAIT


async def test_previous_introspection_counts_once_the_grace_period_is_over(
        svc: BaremetalService, client: FakeClient) -> None:
    """discoverd's clock may be behind ours: a status that only looks older is not ignored
    for ever."""
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.statuses[uuid] = previous_introspection(uuid, dbapi.utcnow() - dt.timedelta(hours=1))
    async with svc.db.begin() as conn:
        await dbapi.update_node(conn, (await node(svc, uuid))["id"], {
            "provision_updated_at": dbapi.utcnow() - dt.timedelta(minutes=5)})
    assert await check(svc) == 1
    assert (await node(svc, uuid))["provision_state"] == states.INSPECTFAIL


async def test_status_of_this_introspection_ends_it_at_once(svc: BaremetalService,
                                                           client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    started = dbapi.utcnow().replace(tzinfo=dt.UTC)
    client.statuses[uuid] = {"uuid": uuid, "finished": True, "state": "finished",
                             "error": None, "started_at": started.isoformat()}
    assert await check(svc) == 1
    assert (await node(svc, uuid))["provision_state"] == states.MANAGEABLE


async def test_operator_abort_aborts_in_discoverd(svc: BaremetalService,
                                                  client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    await svc.conductor.do_provision_action(uuid, "abort")
    assert ("abort", uuid) in client.calls
    assert (await node(svc, uuid))["provision_state"] == states.INSPECTFAIL


async def test_abort_of_finished_introspection_is_not_an_error(svc: BaremetalService,
                                                               client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.fail_with = real_client.ClientError("Can not abort introspection", 400)
    await svc.conductor.do_provision_action(uuid, "abort")
    assert (await node(svc, uuid))["provision_state"] == states.INSPECTFAIL


async def test_conductor_timeout_aborts_in_discoverd(svc: BaremetalService,
                                                     client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    async with svc.db.begin() as conn:
        await dbapi.update_node(conn, (await node(svc, uuid))["id"], {
            "provision_updated_at": dbapi.utcnow() - dt.timedelta(days=1)})
    assert await svc.periodic.check_timeouts() == 1
    await svc.conductor.workers.drain(timeout=5)
    assert ("abort", uuid) in client.calls
    row = await node(svc, uuid)
    assert (row["provision_state"], row["power_state"], row["reservation"]) == (
        states.INSPECTFAIL, states.POWER_OFF, None)
    assert "Timeout reached while inspecting" in row["last_error"]
    assert client.abort_reasons == ["timeout"]


async def test_a_boot_that_failed_aborts_naming_the_failed_step(
        svc: BaremetalService, client: FakeClient, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(node: Any, target: str, timeout: float) -> None:
        raise IronsightError("BMC did not answer")

    monkeypatch.setattr(fake_power(svc), "set_power_state", broken)
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    assert client.abort_reasons == ["boot_failed"]
    assert client.phases == [(uuid, "power_on_requested")]


async def test_a_timeouts_last_error_names_the_step_discoverd_saw_it_stall_at(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.attempts[uuid] = [{"attempt": 1, "result": "running", "failure_code": None,
                              "diagnosis": {"code": "BOOT_NO_LOADER", "phrase": (
                                  "a DHCP lease was given at 10:02:13 but the boot loader "
                                  "was never fetched")}, "phases": []}]
    async with svc.db.begin() as conn:
        await dbapi.update_node(conn, (await node(svc, uuid))["id"], {
            "provision_updated_at": dbapi.utcnow() - dt.timedelta(days=1)})
    assert await svc.periodic.check_timeouts() == 1
    await svc.conductor.workers.drain(timeout=5)
    assert (await node(svc, uuid))["last_error"] == (
        "Timeout reached while inspecting the node. Please check the node's history and "
        "logs. BOOT_NO_LOADER: a DHCP lease was given at 10:02:13 but the boot loader was "
        "never fetched.")


async def test_the_nodes_inspection_attempts_are_read_from_discoverd(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await managed_node(svc)
    client.attempts[uuid] = [{"attempt": 1, "result": "success", "phases": []}]
    assert await svc.conductor.inspection_attempts(uuid) == client.attempts[uuid]


async def test_a_node_discoverd_never_introspected_has_no_attempts(
        svc: BaremetalService, client: FakeClient) -> None:
    assert await svc.conductor.inspection_attempts(await managed_node(svc)) == []


async def test_periodic_task_is_registered_once_for_all_hardware_types(
        svc: BaremetalService) -> None:
    svc.periodic.start()
    try:
        names = [t.get_name() for t in svc.periodic._tasks]
        assert names.count("discoverd-status") == 1
    finally:
        await svc.periodic.stop()


async def test_a_start_cut_short_by_a_dead_conductor_is_made_again(
        svc: BaremetalService, client: FakeClient) -> None:
    """The conductor died holding the node in `inspecting` (before it handed it over):
    the node is not failed but handed over again, and started once the grace has passed."""
    uuid = await managed_node(svc)
    async with svc.db.begin() as conn:
        await dbapi.register_conductor(conn, "gone:1", "elsewhere", 1, ["fake"])
        await dbapi.update_node(conn, (await node(svc, uuid))["id"], {
            "provision_state": states.INSPECTING, "target_provision_state": states.MANAGEABLE,
            "reservation": "gone:1"})
        from ironsight.baremetal.db.models import conductors
        await conn.execute(conductors.update().values(
            heartbeat_at=dbapi.utcnow() - dt.timedelta(hours=1)))
    assert await svc.periodic.recover_dead_conductors() == 1
    row = await node(svc, uuid)
    assert (row["provision_state"], row["reservation"], row["last_error"]) == (
        states.INSPECTWAIT, None, None)
    await past_grace(svc, uuid)
    assert await check(svc) == 1
    assert client.calls.count(("introspect", uuid)) == 1
    row = await node(svc, uuid)
    assert row["provision_state"] == states.INSPECTWAIT
    assert row["driver_internal_info"]["inspection_start"]["starts"] == 1  # not counted against it


async def test_a_start_made_again_whose_conductor_died_before_the_boot_is_made_again(
        svc: BaremetalService, client: FakeClient) -> None:
    """A start made again (from `inspect wait`) is marked until the node is booted: the
    conductor dying in between leaves the node to be started once more, not waiting for a
    ramdisk that never boots."""
    client.fail_with = real_client.ServiceUnavailable("cannot reach discoverd")
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.fail_with = None
    started = []

    async def dies(u: str, manage_boot: bool | None = None, known: Any = None) -> None:
        started.append(u)
        async with svc.db.begin() as conn:  # the conductor is declared dead meanwhile
            await dbapi.update_node(conn, (await node(svc, u))["id"],
                                    {"reservation": "gone:1"})
        raise asyncio.CancelledError  # and never gets further

    client.introspect = dies  # type: ignore[method-assign]
    await past_grace(svc, uuid)
    await check(svc)
    row = await node(svc, uuid)
    assert started == [uuid]
    assert row["driver_internal_info"]["inspection_start"]["lost"].startswith(
        "the conductor stopped before the node was booted")


async def lost_start(svc: BaremetalService, client: FakeClient) -> str:
    """A node whose start discoverd did not answer: `inspect wait`, its start lost, past
    the grace."""
    client.fail_with = real_client.ServiceUnavailable("cannot reach discoverd")
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    client.fail_with = None
    await past_grace(svc, uuid)
    return uuid


async def test_a_lost_start_whose_report_discoverd_has_is_not_made_again(
        svc: BaremetalService, client: FakeClient) -> None:
    """The start got through after all (its answer was lost, or the conductor died after
    the reboot) and the ramdisk reported: starting again would only be refused."""
    uuid = await lost_start(svc, client)
    client.statuses[uuid] = {"uuid": uuid, "finished": False, "state": "processing",
                             "error": None, "started_at": dbapi.utcnow().isoformat()}
    assert await check(svc) == 1
    row = await node(svc, uuid)
    assert client.calls.count(("introspect", uuid)) == 1
    assert (row["provision_state"], row["reservation"]) == (states.INSPECTWAIT, None)
    assert row["driver_internal_info"]["inspection_start"]["lost"] is None
    client.statuses[uuid] = {**client.statuses[uuid], "finished": True, "state": "finished"}
    assert await check(svc) == 1
    assert (await node(svc, uuid))["provision_state"] == states.MANAGEABLE


async def test_a_lost_start_is_not_ended_by_the_previous_introspection(
        svc: BaremetalService, client: FakeClient) -> None:
    uuid = await lost_start(svc, client)
    client.statuses[uuid] = previous_introspection(uuid, dbapi.utcnow() - dt.timedelta(hours=1))
    await check(svc)
    row = await node(svc, uuid)
    assert client.calls.count(("introspect", uuid)) == 2  # made again, not taken as done
    assert row["provision_state"] == states.INSPECTWAIT


async def test_a_start_rides_out_a_discoverd_restart(tmp_path: Path) -> None:
    svc = await service_with(tmp_path, start_unreachable_timeout="5")
    try:
        client = fake_client(svc)
        answers: list[Exception | None] = [
            real_client.ServiceUnavailable("cannot reach discoverd"), None]
        original = client.introspect

        async def restarting(u: str, manage_boot: bool | None = None,
                             known: Any = None) -> None:
            client.fail_with = answers.pop(0)
            await original(u, manage_boot)

        client.introspect = restarting  # type: ignore[method-assign]
        uuid = await managed_node(svc)
        await inspect(svc, uuid)
        row = await node(svc, uuid)
        assert client.calls.count(("introspect", uuid)) == 2
        assert (row["provision_state"], row["power_state"]) == (states.INSPECTWAIT,
                                                                states.POWER_ON)
        assert row["driver_internal_info"]["inspection_start"]["lost"] is None
    finally:
        await svc.stop()


async def test_a_start_made_again_that_finds_the_report_in_leaves_the_node_waiting(
        svc: BaremetalService, client: FakeClient) -> None:
    """Between the poll's status read and the start made again, the ramdisk reported:
    discoverd refuses the start (409), and the inspection goes on, neither failed nor
    rebooted."""
    uuid = await lost_start(svc, client)
    boot_devices(svc).pop(uuid, None)
    client.fail_with = real_client.ClientError(
        f"Introspection of node {uuid} is already processing; wait for it or abort it "
        "first", 409)
    await check(svc)
    row = await node(svc, uuid)
    assert (row["provision_state"], row["reservation"], row["last_error"]) == (
        states.INSPECTWAIT, None, None)
    assert row["driver_internal_info"]["inspection_start"]["lost"] is None
    assert uuid not in boot_devices(svc)


async def test_a_first_start_refused_as_under_way_fails(
        svc: BaremetalService, client: FakeClient) -> None:
    client.fail_with = real_client.ClientError("Introspection is already processing", 409)
    uuid = await managed_node(svc)
    await inspect(svc, uuid)
    row = await node(svc, uuid)
    assert row["provision_state"] == states.INSPECTFAIL
    assert row["last_error"] == ("Failed to start inspection: Introspection is already "
                                 "processing")
