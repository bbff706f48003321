"""Hardware changed between two in-band inspections of a real QEMU VM, and discoverd's
component change events saying exactly what changed (`discoverd/components.py`).

One lab of one VM (`ironsight.lab`, its own network namespace): lab-1, pxe_ipmitool, SeaBIOS,
320 MiB, a 4 GiB root disk and two extra 64 MiB disks (virtio-blk, each with its serial,
`qemu.extra_disk_serial`). It is inspected to `manageable`; then, while it is off, its
hardware is changed as a technician would, with `ironsight lab hardware lab-1 --memory-mb
384 --extra-disks-mb 64`: more memory, and the last extra disk pulled out (its slot, vdc, is
empty: no other disk moves to another name). Inspected again, discoverd's
`GET /v1/fleet/events?node=` lists exactly what that change is, seen by the components model:

- `memory` `total` changed (`physical_mb` 320 -> 384): `info` (an increase);
- `dimm` changed (QEMU's one SMBIOS memory device, 320 -> 384 MiB): `info`;
- `disk` `serial:LAB-lab-1-D1` removed: `critical`;
- `pci`: the removed disk's virtio-blk function removed (on a VM each virtio disk is a PCI
  device of its own): `critical`;

and nothing else: no NIC, IP, LLDP, firmware or CPU noise between two boots of the same VM.
The node's history has one "Hardware changed since the last inspection" entry, `ERROR`
(the worst is critical), and the fleet query finds the node by its new memory and no longer
by its old one.

Every wait is bounded; on a failure the VM's serial log, discoverd's dnsmasq lines and the
service's and lab daemon's logs are printed.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from ironsight.cli.lab import lab_group
from ironsight.client.http import ApiClient
from ironsight.lab.lifecycle import running
from ironsight.lab.network import LabNetwork
from ironsight.lab.nodes import provision, wait_states
from ironsight.lab.qemu import VmSpec, extra_disk_serial
from ironsight.lab.state import Lab, LabOptions, LabVm

from .labkit import diagnosed, ramdisk_dir, require_lab

VM = "lab-1"
BEFORE_MB, AFTER_MB = 320, 384
DISKS_MB, AFTER_DISKS_MB = (64, 64), (64,)
INSPECT_TIMEOUT = 180.0  # one VM: ~20-40 s under TCG
VIRTIO_BLK = ("1af4:1001", "1af4:1042")  # transitional, modern


SPEC = VmSpec(name=VM, mac="52:54:00:1a:00:01", tap="tap1", cpus=1, memory_mb=BEFORE_MB,
              disk_gb=4, extra_disks_mb=DISKS_MB)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    require_lab()
    options = LabOptions(
        state_dir=tmp_path_factory.mktemp("hardware-lab"),
        vms=[LabVm(SPEC, "pxe_ipmitool", 6230)],
        network=LabNetwork(namespace=f"ishw-{secrets.token_hex(3)}"),
        ramdisk_dir=ramdisk_dir(), api_port=0, discoverd_port=0, bmc_same_ports=False)
    with running(options, log=print) as the_lab:
        yield the_lab


def _inspect(lab: Lab, client: ApiClient) -> dict[str, Any]:
    """Inspect the VM to `manageable`, powered off, its QEMU gone; the node."""
    before = client.get(f"/v1/nodes/{VM}").get("inspection_finished_at")
    began = time.monotonic()
    provision(client, VM, "inspect")
    done = wait_states(
        client, [VM], {"manageable"}, INSPECT_TIMEOUT, failed={"inspect failed", "enroll"},
        settled=lambda n: n["power_state"] == "power off" and not n.get("target_power_state")
        and n.get("inspection_finished_at") not in (None, before))[VM]
    deadline = time.monotonic() + 15
    while lab.qemu_pid(VM) is not None:
        assert time.monotonic() < deadline, "QEMU still runs 15 s after the power off"
        time.sleep(0.2)
    print(f"{VM} inspected in {time.monotonic() - began:.1f} s")
    return done


def _events(lab: Lab, uuid: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=lab.discoverd_url, timeout=30) as discoverd:
        resp = discoverd.get("/v1/fleet/events", params={"node": uuid})
    assert resp.status_code == 200, resp.text
    return list(resp.json()["events"])


@pytest.fixture(scope="module")
def changed(lab: Lab) -> dict[str, Any]:
    """Inspected, its hardware changed while off, inspected again: the node, and what the
    first inspection left (`first`)."""
    with diagnosed(lab, [VM], pxe_lines=40, daemon_lines=20), lab.client() as client:
        first = _inspect(lab, client)
        assert first["properties"]["memory_mb"] == BEFORE_MB, first["properties"]
        first_events = _events(lab, first["uuid"])
        result = CliRunner().invoke(lab_group, [
            "hardware", VM, "--memory-mb", str(AFTER_MB), "--extra-disks-mb",
            ",".join(map(str, AFTER_DISKS_MB)), "--state-dir", str(lab.state_dir)])
        assert result.exit_code == 0, result.output
        print(result.output.strip())
        second = _inspect(lab, client)
    return {**second, "first": first, "first_events": first_events}


def test_the_first_inspection_has_nothing_to_compare_with(changed: dict[str, Any]) -> None:
    assert changed["first_events"] == []


def test_the_vm_booted_with_its_new_hardware(lab: Lab, changed: dict[str, Any]) -> None:
    """What the agent found (the node's properties keep the first inspection's: discoverd
    fills missing ones only, `[processing] overwrite_existing`)."""
    with diagnosed(lab, [VM], pxe_lines=40, daemon_lines=20), lab.client() as client:
        inventory = client.get(f"/v1/nodes/{VM}/inventory")["inventory"]
    assert inventory["memory"]["physical_mb"] == AFTER_MB, inventory["memory"]
    assert [(d["name"], d["serial"]) for d in inventory["disks"]] == [
        ("/dev/vda", None), ("/dev/vdb", extra_disk_serial(SPEC, 0))], inventory["disks"]
    assert "hardware override: 384 MiB, extra disks [64] MiB" in lab.daemon_log.read_text()


def test_the_events_are_exactly_the_memory_and_the_disk_changed(
        lab: Lab, changed: dict[str, Any]) -> None:
    with diagnosed(lab, [VM], pxe_lines=40, daemon_lines=20):
        events = _events(lab, changed["uuid"])
        shown = [(e["component"], e["key"], e["change"], e["severity"], e["message"])
                 for e in events]
        print("\n".join(f"event: {e}" for e in shown))
        by = {(e["component"], e["change"]): e for e in events}
        assert sorted(by) == [("dimm", "changed"), ("disk", "removed"), ("memory", "changed"),
                              ("pci", "removed")] and len(events) == 4, shown
        assert len({e["run"] for e in events}) == 1, shown

        memory = by["memory", "changed"]
        assert (memory["key"], memory["fields"], memory["severity"]) == (
            "total", ["physical_mb"], "info"), memory
        assert (memory["before"], memory["after"]) == ({"physical_mb": BEFORE_MB},
                                                      {"physical_mb": AFTER_MB}), memory

        dimm = by["dimm", "changed"]
        assert (dimm["fields"], dimm["severity"]) == (["size_mb"], "info"), dimm
        assert (dimm["before"]["size_mb"], dimm["after"]["size_mb"]) == (BEFORE_MB, AFTER_MB)

        disk = by["disk", "removed"]
        assert (disk["key"], disk["severity"]) == (
            f"serial:{extra_disk_serial(SPEC, 1)}", "critical"), disk
        assert disk["before"]["name"] == "/dev/vdc", disk
        assert disk["before"]["size"] == DISKS_MB[1] * 1024 * 1024, disk

        pci = by["pci", "removed"]
        assert pci["severity"] == "critical" and pci["key"].endswith(VIRTIO_BLK), pci
        assert pci["before"]["class"] == "010000", pci  # mass storage (virtio-blk)


def test_the_nodes_history_says_the_hardware_changed(lab: Lab, changed: dict[str, Any]) -> None:
    with diagnosed(lab, [VM], pxe_lines=40, daemon_lines=20), lab.client() as client:
        history = client.get(f"/v1/nodes/{changed['uuid']}/history",
                             {"detail": "true"})["history"]
    entries = [e for e in history
               if e["event"].startswith("Hardware changed since the last inspection: ")]
    assert len(entries) == 1, [e["event"] for e in history]
    assert entries[0]["severity"] == "ERROR", entries[0]
    text = entries[0]["event"]
    print(f"history: {entries[0]['severity']} {text}")
    assert f"memory {BEFORE_MB} → {AFTER_MB} MiB" in text and "3 → 2 disks" in text, text


def test_the_fleet_query_finds_the_node_by_its_new_memory(lab: Lab,
                                                          changed: dict[str, Any]) -> None:
    def matching(where: str) -> list[str]:
        with httpx.Client(base_url=lab.discoverd_url, timeout=30) as discoverd:
            resp = discoverd.get("/v1/fleet/nodes", params={"where": where})
        assert resp.status_code == 200, resp.text
        return [n["uuid"] for n in resp.json()["nodes"]]

    assert matching(f"hardware.memory_mb == {AFTER_MB}") == [changed["uuid"]]
    assert matching(f"hardware.memory_mb == {BEFORE_MB}") == []
    assert matching(f"hardware.memory_mb == {AFTER_MB} && hardware.disk_count == 2") == [
        changed["uuid"]]
