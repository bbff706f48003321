"""The conductor boots a node from virtual media (a boot interface with a medium): the
node's image published with its parameters, inserted, the one-time boot from CD, and the
image withdrawn and the CD ejected at the end of the attempt, whatever the outcome.

The inspect, boot and management interfaces are scripted stand-ins; the ISO is a small file
of the test's own (the real one has its own tests in tests/*/ramdisk/)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.conductor.inspection import Inspection
from ironsight.baremetal.conductor.task import TaskManager
from ironsight.baremetal.conductor.vmedia import VirtualMedia
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.drivers.base import (
    BootInterface,
    Driver,
    InspectOutcome,
    NodeContext,
)
from ironsight.baremetal.drivers.fake import FakeManagement, FakePower
from ironsight.baremetal.drivers.loader import DriverSet
from ironsight.common import config
from ironsight.common.db import Database
from ironsight.common.exceptions import DriverError, InvalidParameterValue
from ironsight.common.ring import Share
from ironsight.ramdisk.iso import PARAMS_SIZE, BootIso

from .helpers import history, make_node, node
from .test_inspection import HW, ScriptedInspect, inspect

MAC = "52:54:00:aa:00:01"
TOKEN_PARAMS = ("ironsight.callback_url=http://10.0.0.1:5051/v1/continue "
                "ironsight.callback_token=T0K")
CONF = replace(config.load(), redfish=replace(config.load().redfish,
                                              vmedia_url="http://10.0.0.2:6385"))


class MediaBoot(BootInterface):
    name = "scripted-media"
    boot_device = "cdrom"

    def __init__(self, conf: config.Config) -> None:
        super().__init__(conf)
        self.inserted: list[str] = []
        self.ejected: list[str] = []
        self.insert_error: Exception | None = None
        self.eject_error: Exception | None = None

    def validate(self, node: NodeContext) -> None:
        pass

    async def insert(self, node: NodeContext, url: str) -> None:
        if self.insert_error is not None:
            raise self.insert_error
        self.inserted.append(url)

    async def eject(self, node: NodeContext) -> None:
        self.ejected.append(node.uuid)
        if self.eject_error is not None:
            raise self.eject_error


class CdManagement(FakeManagement):
    async def set_boot_device(self, node: NodeContext, device: str,
                              persistent: bool = False) -> None:
        self.boot_devices[node.uuid] = {"boot_device": device, "persistent": persistent}


class BootingInspect(ScriptedInspect):
    """Hands-off, the conductor boots the node, discoverd gives ramdisk parameters."""

    conductor_boots = True
    power_off = True

    def __init__(self, conf: config.Config) -> None:
        super().__init__(conf, hands_off=True)
        self.outcome = InspectOutcome.waiting()
        self.steps: list[dict[str, Any]] = []  # told for the attempt's timeline

    async def ramdisk_params(self, node: NodeContext) -> str:
        return TOKEN_PARAMS

    async def add_phases(self, node: NodeContext, steps: Sequence[dict[str, Any]]) -> None:
        self.steps.extend(steps)


@pytest.fixture
def iso(tmp_path: Path) -> BootIso:
    path = tmp_path / "inspection.iso"
    path.write_bytes(b"\0" * (PARAMS_SIZE * 4))
    return BootIso(path=path, params_offset=PARAMS_SIZE, params_size=PARAMS_SIZE,
                   ramdisk_hash="test")


@pytest.fixture
def boot() -> MediaBoot:
    return MediaBoot(CONF)


@pytest.fixture
def booting() -> BootingInspect:
    return BootingInspect(CONF)


@pytest.fixture
def management() -> CdManagement:
    return CdManagement(CONF)


@pytest.fixture
def ins(tasks: TaskManager, db: Database, iso: BootIso, boot: MediaBoot,
        booting: BootingInspect, management: CdManagement) -> Inspection:
    driver = Driver(HW, FakePower(CONF), management, booting, boots={boot.name: boot})
    media = VirtualMedia(CONF, build=lambda *a, **k: iso)
    return Inspection(CONF, db, tasks, DriverSet({"fake": driver}, {}), Share(tasks.owner),
                      media)


async def media_node(db: Database, **values: Any) -> str:
    uuid = await make_node(db, boot_interface="scripted-media", **values)
    async with db.begin() as conn:
        await dbapi.create_port(conn, uuid, {"address": MAC},
                                dbapi.history_row(None, "port", event_type="port"))
    return uuid


async def test_the_node_is_booted_from_its_published_image(
        ins: Inspection, db: Database, boot: MediaBoot, management: CdManagement) -> None:
    uuid = await media_node(db)
    await inspect(ins, uuid)
    assert (await node(db, uuid))["provision_state"] == states.INSPECTWAIT
    [url] = boot.inserted
    assert url.startswith(f"http://10.0.0.2:6385/vmedia/{uuid}/") and url.endswith(".iso")
    assert management.boot_devices[uuid] == {"boot_device": "cdrom", "persistent": False}
    events = [h["event"] for h in await history(db, uuid)]
    assert any("inserted as a virtual CD" in e for e in events)


async def test_the_timeline_is_told_the_image_was_ready_then_inserted_then_the_power_on(
        ins: Inspection, db: Database, booting: BootingInspect) -> None:
    await inspect(ins, await media_node(db))
    assert [step["phase"] for step in booting.steps] == [
        "media_built", "media_inserted", "power_on_requested", "powered_on"]
    assert booting.steps[0]["details"]["seconds"] >= 0


async def test_the_image_carries_the_services_parameters_and_the_boot_nic(
        ins: Inspection, db: Database, boot: MediaBoot) -> None:
    uuid = await media_node(db)
    await inspect(ins, uuid)
    name = boot.inserted[0].rsplit("/", 1)[1].removesuffix(".iso")
    found = ins.media.lookup(uuid, name)
    assert found is not None
    text = found[1].decode()
    assert TOKEN_PARAMS in text and "BOOTIF=01-52-54-00-aa-00-01" in text


async def test_the_image_carries_the_static_network_of_network_data(
        ins: Inspection, db: Database, boot: MediaBoot) -> None:
    uuid = await media_node(db, network_data={
        "links": [{"id": "l0", "ethernet_mac_address": MAC}],
        "networks": [{"id": "n0", "link": "l0", "type": "ipv4", "ip_address": "10.0.0.50",
                      "netmask": "255.255.255.0",
                      "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0",
                                  "gateway": "10.0.0.1"}]}]})
    await inspect(ins, uuid)
    name = boot.inserted[0].rsplit("/", 1)[1].removesuffix(".iso")
    text = ins.media.lookup(uuid, name)[1].decode()  # type: ignore[index]
    assert "ironsight.ip=10.0.0.50/24 ironsight.gateway=10.0.0.1" in text


async def test_another_name_gets_nothing(ins: Inspection, db: Database) -> None:
    uuid = await media_node(db)
    await inspect(ins, uuid)
    assert ins.media.lookup(uuid, "A" * 43) is None


async def test_the_end_of_the_inspection_ejects_and_withdraws(
        ins: Inspection, db: Database, boot: MediaBoot, booting: BootingInspect) -> None:
    uuid = await media_node(db)
    await inspect(ins, uuid)
    booting.outcomes = {uuid: InspectOutcome.done()}
    await ins.poll(booting, ["fake"])
    await ins.tasks.workers.drain(timeout=5)
    assert (await node(db, uuid))["provision_state"] == states.MANAGEABLE
    assert boot.ejected == [uuid]
    assert ins.media.published() == 0


async def test_a_failed_inspection_ejects_too(
        ins: Inspection, db: Database, boot: MediaBoot, booting: BootingInspect) -> None:
    uuid = await media_node(db)
    await inspect(ins, uuid)
    booting.outcomes = {uuid: InspectOutcome.failed("ramdisk error")}
    await ins.poll(booting, ["fake"])
    await ins.tasks.workers.drain(timeout=5)
    assert (await node(db, uuid))["provision_state"] == states.INSPECTFAIL
    assert boot.ejected == [uuid] and ins.media.published() == 0


async def test_an_abort_ejects(ins: Inspection, db: Database, boot: MediaBoot) -> None:
    uuid = await media_node(db)
    await inspect(ins, uuid)
    async with ins.tasks.locked(uuid) as task:
        await ins.end_early(task, "abort", "Inspection was aborted by request.")
    await ins.tasks.workers.drain(timeout=5)
    row = await node(db, uuid)
    assert row["provision_state"] == states.INSPECTFAIL and row["reservation"] is None
    assert boot.ejected == [uuid] and ins.media.published() == 0


async def test_a_bmc_that_refuses_the_medium_fails_the_node_and_withdraws_it(
        ins: Inspection, db: Database, boot: MediaBoot, booting: BootingInspect) -> None:
    boot.insert_error = DriverError("BMC: InsertMedia failed: no such drive")
    uuid = await media_node(db)
    await inspect(ins, uuid)
    row = await node(db, uuid)
    assert row["provision_state"] == states.INSPECTFAIL
    assert "no such drive" in row["last_error"]
    assert ins.media.published() == 0 and booting.aborted == [uuid]


async def test_an_eject_the_bmc_refuses_is_recorded_not_fatal(
        ins: Inspection, db: Database, boot: MediaBoot, booting: BootingInspect) -> None:
    boot.eject_error = DriverError("BMC: EjectMedia failed")
    uuid = await media_node(db)
    await inspect(ins, uuid)
    booting.outcomes = {uuid: InspectOutcome.done()}
    await ins.poll(booting, ["fake"])
    await ins.tasks.workers.drain(timeout=5)
    assert (await node(db, uuid))["provision_state"] == states.MANAGEABLE
    warnings = [h for h in await history(db, uuid) if h["severity"] == "WARNING"]
    assert any("could not be ejected" in h["event"] for h in warnings)


async def test_begin_refuses_a_medium_boot_the_conductor_does_not_make(
        ins: Inspection, db: Database, booting: BootingInspect) -> None:
    booting.conductor_boots = False
    uuid = await media_node(db)
    with pytest.raises(InvalidParameterValue, match="conductor_boots"):
        async with ins.tasks.locked(uuid) as task:
            await ins.begin(task)
    assert (await node(db, uuid))["provision_state"] == states.MANAGEABLE


async def test_begin_refuses_network_data_the_ramdisk_cannot_use(
        ins: Inspection, db: Database) -> None:
    uuid = await media_node(db, network_data={"networks": [
        {"id": "n0", "link": "l0", "type": "ipv4", "ip_address": "not-an-address"}]})
    with pytest.raises(InvalidParameterValue, match="network_data"):
        async with ins.tasks.locked(uuid) as task:
            await ins.begin(task)
    assert (await node(db, uuid))["provision_state"] == states.MANAGEABLE


async def test_a_node_booting_over_the_network_gets_no_image(
        ins: Inspection, db: Database, boot: MediaBoot, management: CdManagement) -> None:
    uuid = await make_node(db, boot_interface="pxe")
    await inspect(ins, uuid)
    assert boot.inserted == [] and ins.media.published() == 0
    assert management.boot_devices[uuid]["boot_device"] == "pxe"


async def test_an_inspection_that_boots_nothing_ignores_the_medium(
        ins: Inspection, db: Database, boot: MediaBoot, booting: BootingInspect) -> None:
    """Out of band (an interface that is not hands-off), the conductor boots nothing."""
    booting.hands_off = False
    booting.conductor_boots = False
    booting.outcome = InspectOutcome.done()
    uuid = await media_node(db)
    await inspect(ins, uuid)
    assert (await node(db, uuid))["provision_state"] == states.MANAGEABLE
    assert boot.inserted == [] and boot.ejected == []
