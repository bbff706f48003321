"""The redfish driver against a real Redfish service: sushy-tools' emulator with its libvirt
driver in front of a real libvirtd (the pxe_ssh tests' hypervisor, conftest.py), over TLS
with a test CA and HTTP basic credentials. What the driver did is read back from libvirtd
through its socket, not through the driver."""

from __future__ import annotations

import asyncio
import functools
import http.server
import logging
import threading
import uuid as uuidlib
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import InspectOutcome, NodeContext
from ironsight.baremetal.drivers.redfish import RedfishManagement, RedfishPower
from ironsight.baremetal.drivers.redfish_inspect import RedfishInspect
from ironsight.baremetal.drivers.redfish_vmedia import RedfishVirtualMediaBoot
from ironsight.baremetal.service import BaremetalService, upgrade_database
from ironsight.common import config
from ironsight.common.exceptions import DriverError, PowerStateFailure
from ironsight.lab import hypervisor, redfish_bmc
from ironsight.lab.qemu import VmFiles, VmSpec
from ironsight.lab.redfish_bmc import VMEDIA_POOL, RedfishEmulator

from ..security import Pki, make_pki

if TYPE_CHECKING:
    from .conftest import Libvirt

UNAVAILABLE = hypervisor.unavailable() or redfish_bmc.unavailable()

pytestmark = [pytest.mark.functional,
              pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")]

PASSWORD = "rf-pw-3c81d0"
CONF = config.load(overrides={"redfish": {"connect_timeout": "5", "read_timeout": "30"}})


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("redfish-pki"))


@pytest.fixture(scope="module")
def emulator(libvirt: Libvirt, pki: Pki,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedfishEmulator]:
    libvirt.hypervisor.ensure_pool(VMEDIA_POOL)
    bmc = RedfishEmulator(tmp_path_factory.mktemp("redfish"), libvirt.hypervisor.dirs.uri,
                          users={"admin": PASSWORD}, cert=pki.cert_file, key=pki.key_file,
                          storage_pool=VMEDIA_POOL)
    bmc.start()
    try:
        yield bmc
    finally:
        bmc.stop()


def node(emulator: RedfishEmulator, pki: Pki, libvirt: Libvirt, domain: str,
         **info: Any) -> NodeContext:
    uuid = libvirt.hypervisor.virsh("domuuid", domain).strip()
    driver_info = {"redfish_address": emulator.url, "redfish_username": "admin",
                   "redfish_password": PASSWORD, "redfish_verify_ca": str(pki.ca_file),
                   "redfish_system_id": emulator.system_id(uuid), **info}
    return NodeContext(uuid="node-rf", driver="redfish", driver_info=driver_info)


@pytest.fixture
def domain_with_disk(libvirt: Libvirt) -> Iterator[str]:
    """A shut-off domain with a (never created) 1 GiB disk, to boot from, and 2 GiB of memory
    (the emulator reports whole GiB); never started."""
    name = f"isv-{uuidlib.uuid4().hex[:8]}"
    spec = VmSpec(name=name, mac="52:54:00:9a:00:01", tap=next(libvirt.taps), memory_mb=2048,
                  cpus=2, disk_gb=1)
    libvirt.hypervisor.define(spec, VmFiles(libvirt.run_dir, name))
    try:
        yield name
    finally:
        libvirt.hypervisor.virsh("undefine", name)


def first_boot(domain_xml: str) -> str | None:
    """The kind of device (interface, disk...) libvirt boots first."""
    for device in ET.fromstring(domain_xml).find("devices") or ():
        boot = device.find("boot")
        if boot is not None and boot.get("order") == "1":
            return device.tag
    return None


def resets(node: NodeContext) -> int:
    """How many ComputerSystem.Reset requests the emulator has answered so far."""
    return str(node.driver_info["_log"].read_text()).count("ComputerSystem.Reset")


@pytest.fixture
def rf_node(emulator: RedfishEmulator, pki: Pki, libvirt: Libvirt,
            libvirt_domain: str) -> NodeContext:
    found = node(emulator, pki, libvirt, libvirt_domain)
    return NodeContext(uuid=found.uuid, driver=found.driver,
                       driver_info={**found.driver_info, "_log": emulator.log})


async def test_a_shut_off_domain_reads_power_off(rf_node: NodeContext) -> None:
    assert await RedfishPower(CONF).get_power_state(rf_node) == states.POWER_OFF


async def test_power_on_starts_the_domain(rf_node: NodeContext, libvirt: Libvirt,
                                          libvirt_domain: str) -> None:
    await RedfishPower(CONF).set_power_state(rf_node, states.POWER_ON, timeout=60)
    assert libvirt.hypervisor.state(libvirt_domain) == "running"
    assert await RedfishPower(CONF).get_power_state(rf_node) == states.POWER_ON


async def test_power_off_stops_the_domain(rf_node: NodeContext, libvirt: Libvirt,
                                          libvirt_domain: str) -> None:
    libvirt.hypervisor.virsh("start", libvirt_domain)
    await RedfishPower(CONF).set_power_state(rf_node, states.POWER_OFF, timeout=60)
    assert libvirt.hypervisor.state(libvirt_domain) == "shut off"


async def test_reboot_of_a_running_domain_restarts_it(rf_node: NodeContext, libvirt: Libvirt,
                                                      libvirt_domain: str) -> None:
    libvirt.hypervisor.virsh("start", libvirt_domain)
    before = resets(rf_node)
    await RedfishPower(CONF).set_power_state(rf_node, states.REBOOT, timeout=60)
    assert libvirt.hypervisor.state(libvirt_domain) == "running"
    assert resets(rf_node) == before + 1  # one ForceRestart, not an off and an on


async def test_reboot_of_a_shut_off_domain_powers_it_on(rf_node: NodeContext,
                                                        libvirt: Libvirt,
                                                        libvirt_domain: str) -> None:
    await RedfishPower(CONF).set_power_state(rf_node, states.REBOOT, timeout=60)
    assert libvirt.hypervisor.state(libvirt_domain) == "running"


async def test_a_persistent_boot_device_is_written_to_the_domain(
        rf_node: NodeContext, libvirt: Libvirt, libvirt_domain: str) -> None:
    management = RedfishManagement(CONF)
    await management.set_boot_device(rf_node, "pxe", persistent=True)
    assert first_boot(libvirt.hypervisor.dumpxml(libvirt_domain)) == "interface"
    assert await management.get_boot_device(rf_node) == {"boot_device": "pxe",
                                                         "persistent": True}


async def test_the_boot_device_goes_back_to_disk(emulator: RedfishEmulator, pki: Pki,
                                                 libvirt: Libvirt,
                                                 domain_with_disk: str) -> None:
    with_disk = node(emulator, pki, libvirt, domain_with_disk)
    management = RedfishManagement(CONF)
    await management.set_boot_device(with_disk, "pxe", persistent=True)
    await management.set_boot_device(with_disk, "disk", persistent=True)
    assert first_boot(libvirt.hypervisor.dumpxml(domain_with_disk)) == "disk"
    assert (await management.get_boot_device(with_disk))["boot_device"] == "disk"


async def test_a_boot_device_the_machine_lacks_is_refused_in_the_bmcs_words(
        rf_node: NodeContext) -> None:
    with pytest.raises(DriverError) as raised:  # the domain has no disk
        await RedfishManagement(CONF).set_boot_device(rf_node, "disk")
    assert "setting boot device disk failed" in str(raised.value)
    assert "Target libvirt device Hdd does not exist" in str(raised.value)


async def test_the_boot_mode_is_read_and_set(rf_node: NodeContext, libvirt: Libvirt,
                                             libvirt_domain: str) -> None:
    management = RedfishManagement(CONF)
    # a domain naming no firmware: the BMC cannot tell (SeaBIOS, QEMU's default)
    assert await management.get_boot_mode(rf_node) is None
    await management.set_boot_mode(rf_node, "uefi")
    assert await management.get_boot_mode(rf_node) == "uefi"
    loader = ET.fromstring(libvirt.hypervisor.dumpxml(libvirt_domain)).find("os/loader")
    assert loader is not None and loader.get("type") == "pflash"
    await RedfishPower(CONF).set_power_state(rf_node, states.POWER_ON, timeout=60)  # OVMF runs
    await RedfishPower(CONF).set_power_state(rf_node, states.POWER_OFF, timeout=60)
    await management.set_boot_mode(rf_node, "bios")
    assert await management.get_boot_mode(rf_node) == "bios"


async def test_the_virtual_media_devices_are_listed(rf_node: NodeContext) -> None:
    media = await RedfishManagement(CONF).get_virtual_media(rf_node)
    assert {m["device_type"] for m in media} >= {"cdrom"}
    assert not any(m["inserted"] for m in media)


async def test_a_wrong_password_is_refused_naming_the_bmc_and_user(
        emulator: RedfishEmulator, pki: Pki, libvirt: Libvirt, libvirt_domain: str) -> None:
    wrong = node(emulator, pki, libvirt, libvirt_domain, redfish_password="not-it-9d2e")
    with pytest.raises(DriverError) as raised:
        await RedfishPower(CONF).get_power_state(wrong)
    message = str(raised.value)
    assert f"Redfish BMC {emulator.url}" in message and "'admin'" in message
    assert "not-it-9d2e" not in message


async def test_an_unknown_system_is_named(emulator: RedfishEmulator, pki: Pki,
                                          libvirt: Libvirt, libvirt_domain: str) -> None:
    missing = node(emulator, pki, libvirt, libvirt_domain,
                   redfish_system_id="/redfish/v1/Systems/no-such-system")
    with pytest.raises(DriverError, match="system /redfish/v1/Systems/no-such-system not found"):
        await RedfishPower(CONF).get_power_state(missing)


async def test_an_unreachable_bmc_is_a_clear_error(emulator: RedfishEmulator, pki: Pki,
                                                   libvirt: Libvirt,
                                                   libvirt_domain: str) -> None:
    gone = node(emulator, pki, libvirt, libvirt_domain,
                redfish_address=f"https://127.0.0.1:{redfish_bmc._free_port('127.0.0.1')}")
    with pytest.raises(DriverError, match="cannot reach the BMC"):
        await RedfishPower(CONF).get_power_state(gone)


async def test_a_certificate_not_signed_by_the_given_ca_is_refused(
        emulator: RedfishEmulator, libvirt: Libvirt, libvirt_domain: str,
        tmp_path: Path) -> None:
    other = make_pki(tmp_path)
    untrusted = node(emulator, other, libvirt, libvirt_domain)
    with pytest.raises(DriverError, match="TLS certificate is not trusted"):
        await RedfishPower(CONF).get_power_state(untrusted)


async def test_a_power_change_the_bmc_never_reports_fails_within_the_timeout(
        rf_node: NodeContext, libvirt: Libvirt, libvirt_domain: str) -> None:
    libvirt.hypervisor.virsh("start", libvirt_domain)
    power = RedfishPower(CONF)
    original = power.get_power_state

    async def stuck(node: NodeContext) -> str:
        await original(node)
        return states.POWER_ON  # a BMC that keeps saying "on"

    power.get_power_state = stuck  # type: ignore[method-assign]
    with pytest.raises(PowerStateFailure, match="did not report 'power off' within 2 s"):
        await power.set_power_state(rf_node, states.POWER_OFF, timeout=2)


async def test_no_password_reaches_a_log(rf_node: NodeContext, libvirt_domain: str,
                                         caplog: pytest.LogCaptureFixture,
                                         emulator: RedfishEmulator) -> None:
    caplog.set_level(logging.DEBUG)
    power = RedfishPower(CONF)
    await power.set_power_state(rf_node, states.POWER_ON, timeout=60)
    await RedfishManagement(CONF).set_boot_device(rf_node, "pxe")
    assert PASSWORD not in caplog.text
    assert PASSWORD not in emulator.log.read_text()
    assert PASSWORD not in (emulator.root / "emulator.conf").read_text()


# --- out-of-band inspection -----------------------------------------------------------------


async def test_out_of_band_inspection_reads_the_domains_hardware(
        emulator: RedfishEmulator, pki: Pki, libvirt: Libvirt, domain_with_disk: str) -> None:
    outcome = await RedfishInspect(CONF).start(node(emulator, pki, libvirt, domain_with_disk))
    assert outcome.state == InspectOutcome.DONE, outcome.error
    assert outcome.findings is not None
    props = outcome.findings.properties
    assert (props["cpus"], props["memory_mb"], props["cpu_arch"]) == (2, 2048, "x86_64")
    assert outcome.findings.macs == ["52:54:00:9a:00:01"]
    assert outcome.findings.boot_mode is None  # no firmware named: the BMC cannot tell


async def test_out_of_band_inspection_names_what_the_bmc_does_not_report(
        rf_node: NodeContext) -> None:
    outcome = await RedfishInspect(CONF).start(rf_node)  # 128 MiB: the emulator says none
    assert outcome.state == InspectOutcome.FAILED
    assert outcome.error is not None and "does not report the system's memory" in outcome.error


async def test_an_out_of_band_inspection_through_the_api_fills_the_node(
        emulator: RedfishEmulator, pki: Pki, libvirt: Libvirt, domain_with_disk: str,
        tmp_path: Path) -> None:
    """The conductor applies what the BMC said: properties, a port per MAC, manageable."""
    conf = config.load(overrides={
        "DEFAULT": {"state_dir": str(tmp_path), "host": "rf-conductor"},
        "database": {"connection": f"sqlite:///{tmp_path / 'bm.sqlite'}"},
        "conductor": {"sync_power_state_interval": "0"}})
    upgrade_database(conf)
    service = BaremetalService(conf)
    await service.start()
    try:
        transport = httpx.ASGITransport(app=service.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bm.test",
                                     headers={"X-OpenStack-Ironic-API-Version": "1.115"}) as api:
            info = node(emulator, pki, libvirt, domain_with_disk).driver_info
            resp = await api.post("/v1/nodes", json={
                "driver": "redfish", "name": "rf-oob", "inspect_interface": "redfish",
                "driver_info": info})
            assert resp.status_code == 201, resp.text
            for target, wanted in (("manage", "manageable"), ("inspect", "manageable")):
                resp = await api.put("/v1/nodes/rf-oob/states/provision",
                                     json={"target": target})
                assert resp.status_code == 202, resp.text
                doc = await _settled(api, "rf-oob")
                assert doc["provision_state"] == wanted, doc["last_error"]
            assert {k: doc["properties"][k] for k in ("cpus", "memory_mb", "cpu_arch")} == \
                {"cpus": 2, "memory_mb": 2048, "cpu_arch": "x86_64"}
            ports = (await api.get("/v1/nodes/rf-oob/ports")).json()["ports"]
            assert [p["address"] for p in ports] == ["52:54:00:9a:00:01"]
            # a second inspection finds the port there and makes no other
            await api.put("/v1/nodes/rf-oob/states/provision", json={"target": "inspect"})
            assert (await _settled(api, "rf-oob"))["provision_state"] == "manageable"
            assert len((await api.get("/v1/nodes/rf-oob/ports")).json()["ports"]) == 1
            await api.delete("/v1/nodes/rf-oob")
    finally:
        await service.stop()


async def _settled(api: httpx.AsyncClient, name: str, timeout: float = 60) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = dict((await api.get(f"/v1/nodes/{name}")).json())
        if doc["target_provision_state"] is None and doc["reservation"] is None:
            return doc
        assert asyncio.get_running_loop().time() < deadline, doc
        await asyncio.sleep(0.2)


async def test_an_nmi_reaches_the_running_domain(rf_node: NodeContext, libvirt: Libvirt,
                                                 libvirt_domain: str) -> None:
    libvirt.hypervisor.virsh("start", libvirt_domain)
    before = resets(rf_node)
    await RedfishManagement(CONF).inject_nmi(rf_node)
    assert resets(rf_node) == before + 1
    assert libvirt.hypervisor.state(libvirt_domain) == "running"  # an NMI, not a reset


async def test_secure_boot_without_uefi_is_refused_in_the_bmcs_words(
        rf_node: NodeContext) -> None:
    with pytest.raises(DriverError) as raised:  # a BIOS domain has no Secure Boot
        await RedfishManagement(CONF).set_secure_boot_state(rf_node, True)
    assert "enabling Secure Boot" in str(raised.value)


# --- virtual media ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def media_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A plain HTTP server of an image (as the bare-metal API serves a node's); its URL."""
    root = tmp_path_factory.mktemp("media")
    (root / "node.iso").write_bytes(b"CD001" * 4096)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/node.iso"
    finally:
        server.shutdown()


def cdrom_sources(domain_xml: str) -> list[str | None]:
    """The file of each CD drive of the domain (None: empty)."""
    found = []
    for disk in ET.fromstring(domain_xml).iter("disk"):
        if disk.get("device") == "cdrom":
            source = disk.find("source")
            found.append(source.get("file") if source is not None else None)
    return found


async def test_inserted_media_is_the_domains_cd_and_the_bmc_shows_it(
        rf_node: NodeContext, libvirt: Libvirt, libvirt_domain: str, media_server: str) -> None:
    await RedfishVirtualMediaBoot(CONF).insert(rf_node, media_server)
    [source] = cdrom_sources(libvirt.hypervisor.dumpxml(libvirt_domain))
    assert source is not None and source.startswith(str(libvirt.hypervisor.dirs.root))
    assert Path(source).read_bytes() == b"CD001" * 4096
    media = await RedfishManagement(CONF).get_virtual_media(rf_node)
    cd = next(m for m in media if m["device_type"] == "cdrom")
    assert cd["inserted"] and cd["image_url"] == media_server


async def test_the_boot_device_cdrom_boots_the_inserted_media_first(
        rf_node: NodeContext, libvirt: Libvirt, libvirt_domain: str, media_server: str) -> None:
    await RedfishVirtualMediaBoot(CONF).insert(rf_node, media_server)
    await RedfishManagement(CONF).set_boot_device(rf_node, "cdrom")
    xml = ET.fromstring(libvirt.hypervisor.dumpxml(libvirt_domain))
    os_boot = [b.get("dev") for b in xml.iter("boot") if b.get("dev")]
    orders = {d.get("device"): d.find("boot").get("order")  # type: ignore[union-attr]
              for d in xml.iter("disk") if d.find("boot") is not None}
    assert os_boot[:1] == ["cdrom"] or orders.get("cdrom") == "1"


async def test_eject_empties_the_drive(rf_node: NodeContext, libvirt: Libvirt,
                                       libvirt_domain: str, media_server: str) -> None:
    boot = RedfishVirtualMediaBoot(CONF)
    await boot.insert(rf_node, media_server)
    await boot.eject(rf_node)
    assert not any(cdrom_sources(libvirt.hypervisor.dumpxml(libvirt_domain)))
    media = await RedfishManagement(CONF).get_virtual_media(rf_node)
    assert not any(m["inserted"] for m in media)


async def test_eject_of_an_empty_drive_is_not_an_error(rf_node: NodeContext) -> None:
    await RedfishVirtualMediaBoot(CONF).eject(rf_node)


async def test_a_second_insert_replaces_the_first(rf_node: NodeContext, libvirt: Libvirt,
                                                  libvirt_domain: str, media_server: str) -> None:
    boot = RedfishVirtualMediaBoot(CONF)
    await boot.insert(rf_node, media_server)
    await boot.insert(rf_node, media_server + "?again")
    assert len([s for s in cdrom_sources(libvirt.hypervisor.dumpxml(libvirt_domain)) if s]) == 1


async def test_media_the_bmc_cannot_fetch_is_refused_in_the_bmcs_words(
        rf_node: NodeContext, media_server: str) -> None:
    with pytest.raises(DriverError, match=r"inserting the inspection ISO.*error 404"):
        await RedfishVirtualMediaBoot(CONF).insert(rf_node, media_server + ".missing")
