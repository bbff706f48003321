"""Auto-discovery of real QEMU VMs nobody enrolled, in a lab of their own (`ironsight.lab`,
`lab up --unknown-nodes 2`): `ironsight serve` with `[auto_discovery] enabled`, the real
discovery ramdisk, virtual IPMI BMCs that answer with their VM's system UUID and serial.

Both VMs carry a second NIC with the same MAC (an isolated one: a BMC's or USB NIC's shared
MAC). The lab's manifest is imported with unknown-1's row only. Then, as a person would, both
are powered on through their BMCs:
- unknown-1 (on the manifest) becomes a node named after its row, with the row's IPMI
  credentials, approved, its BMC checked (IPMI, its serial matching); booted again it creates
  no node and adds an inventory version; it is then managed (through its BMC) and inspected
  to `manageable`;
- unknown-2 (not on it) becomes a pending node with an empty driver_info (a QEMU VM reports no
  BMC): its processing ends with no power action tried (`power_off_skipped`, with the reason),
  and it is quarantined, no power action accepted;
- the shared MAC identifies neither (both were enrolled) and is recorded as non-unique.
Every wait is bounded; on a failure the VMs' serial logs and the service's log are printed.
"""

from __future__ import annotations

import csv
import io
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from ironsight.lab.lifecycle import power_on, running
from ironsight.lab.network import LabNetwork
from ironsight.lab.nodes import wait_states
from ironsight.lab.processes import log_tail
from ironsight.lab.state import SHARED_EXTRA_MAC, Lab, LabOptions, default_vms

from .labkit import ramdisk_dir, require_lab

ON_MANIFEST, UNLISTED = "unknown-1", "unknown-2"
DISCOVER_TIMEOUT = 240.0  # both VMs boot at once under TCG: ~20-60 s each
INSPECT_TIMEOUT = 240.0


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    require_lab()
    options = LabOptions(
        state_dir=tmp_path_factory.mktemp("discovery-lab"), vms=default_vms(0, unknown=2),
        network=LabNetwork(namespace=f"isdisc-{secrets.token_hex(3)}"),
        ramdisk_dir=ramdisk_dir(), api_port=0, discoverd_port=0, bmc_same_ports=False)
    with running(options, log=print) as the_lab:
        yield the_lab


def _explain(lab: Lab) -> str:
    parts = [f"--- service log\n{log_tail(lab.serve_log, 80)}"]
    for vm in lab.unknown_vms:
        serial = log_tail(lab.files(vm.spec.name).serial_log, 30)
        parts.append(f"--- {vm.spec.name} serial\n{serial}")
    return "\n".join(parts)


def _until(what: str, check: Callable[[], Any], timeout: float, lab: Lab) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not within {timeout:.0f} s\n{_explain(lab)}")
        time.sleep(1)


def _discoverd(lab: Lab) -> httpx.Client:
    return httpx.Client(base_url=lab.discoverd_url, timeout=30)


def _discovered(lab: Lab) -> dict[str, dict[str, Any]]:
    """Discovered nodes by serial (from the node's discovery record), processing finished."""
    with lab.client() as api:
        nodes = api.get("/v1/discovery/nodes")["nodes"]
        found = {}
        for n in nodes:
            doc = api.get(f"/v1/nodes/{n['uuid']}")
            found[doc["extra"]["discovery"]["serial"]] = {**doc, "discovery": n["discovery"]}
    with _discoverd(lab) as di:
        for doc in found.values():
            status = di.get(f"/v1/introspection/{doc['uuid']}").json()
            if not status.get("finished"):
                return {}
    return found


@pytest.fixture(scope="module")
def discovered(lab: Lab) -> dict[str, dict[str, Any]]:
    """Import unknown-1's manifest row, power both VMs on through their BMCs, wait for both
    nodes; the nodes by VM name."""
    rows = list(csv.DictReader(io.StringIO(lab.manifest_file.read_text())))
    listed = [r for r in rows if r["name"] == ON_MANIFEST]
    assert len(listed) == 1 and len(rows) == 2
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(listed)
    with _discoverd(lab) as di:
        resp = di.post("/v1/discovery/manifest", json={"csv": text.getvalue()})
        assert resp.status_code == 200, resp.text
    for vm in (ON_MANIFEST, UNLISTED):
        print(power_on(lab.state_dir, vm))
    found = _until("both VMs discovered", lambda: len(_discovered(lab)) == 2
                   and _discovered(lab), DISCOVER_TIMEOUT, lab)
    return {name: found[lab.vm(name).spec.system_serial] for name in (ON_MANIFEST, UNLISTED)}


def test_the_vm_on_the_manifest_is_named_credentialed_and_approved(
        lab: Lab, discovered: dict[str, dict[str, Any]]) -> None:
    node = discovered[ON_MANIFEST]
    vm = lab.vm(ON_MANIFEST)
    assert (node["name"], node["discovery"], node["provision_state"]) == (
        ON_MANIFEST, "approved", "enroll")
    assert node["driver"] == vm.driver
    assert node["driver_info"]["ipmi_port"] == vm.bmc_port
    assert node["driver_info"]["ipmi_password"] == "******"
    probe = node["extra"]["discovery"]["bmc_probe"]
    assert (probe["reachable"], probe["protocol"], probe["serial_match"]) == (True, "ipmi", True)


def test_the_vm_not_on_the_manifest_stays_quarantined(
        lab: Lab, discovered: dict[str, dict[str, Any]]) -> None:
    node = discovered[UNLISTED]
    assert (node["name"], node["discovery"]) == (None, "pending")
    with lab.client() as api:
        try:
            api.put(f"/v1/nodes/{node['uuid']}/states/power", {"target": "power off"})
        except Exception as exc:  # ApiError 409
            assert "quarantined" in str(exc)
        else:
            raise AssertionError("a quarantined node accepted a power action")


def test_the_node_without_bmc_data_got_no_power_action_and_says_why(
        lab: Lab, discovered: dict[str, dict[str, Any]]) -> None:
    """Ironic's code suggests it would try a power-off here (next-areas.md §1.1.9)."""
    node = discovered[UNLISTED]
    assert node["driver_info"] == {} and node["power_state"] is None
    with lab.client() as api:
        events = api.get(f"/v1/nodes/{node['uuid']}/history", {"detail": "true"})["history"]
    assert not [e for e in events if e["event_type"] == "power"], events
    with _discoverd(lab) as di:
        attempt = di.get(f"/v1/introspection/{node['uuid']}/attempts").json()["attempts"][-1]
    phases = {p["phase"]: p for p in attempt["phases"]}
    assert attempt["result"] == "success" and "powered_off" not in phases
    assert "auto-discovered" in phases["power_off_skipped"]["reason"]
    assert lab.qemu_pid(UNLISTED) is not None  # still running the ramdisk: nobody powered it off


def test_both_vms_have_their_own_node_and_the_shared_mac_identifies_neither(
        lab: Lab, discovered: dict[str, dict[str, Any]]) -> None:
    with lab.client() as api:
        for name, node in discovered.items():
            ports = {p["address"] for p in api.get(f"/v1/nodes/{node['uuid']}/ports")["ports"]}
            assert ports == {lab.vm(name).spec.mac}, name
    with _discoverd(lab) as di:
        macs = di.get("/v1/discovery/non_unique_macs").json()["macs"]
    assert any(m["mac"] == SHARED_EXTRA_MAC and m["source"] == "recorded" for m in macs)


def test_booting_the_known_vm_again_creates_nothing_and_adds_an_inventory_version(
        lab: Lab, discovered: dict[str, dict[str, Any]]) -> None:
    uuid = discovered[ON_MANIFEST]["uuid"]
    proc = lab.ipmitool(ON_MANIFEST, "chassis", "power", "reset")
    assert proc.returncode == 0, proc.stderr

    def seen() -> bool:
        with lab.client() as api:
            events = [e["event"] for e in api.get(f"/v1/nodes/{uuid}/history")["history"]]
        return any(e.startswith("Seen again") for e in events)

    _until("the seen-again event", seen, DISCOVER_TIMEOUT, lab)
    with _discoverd(lab) as di:
        history = di.get(f"/v1/introspection/{uuid}/data/history").json()["history"]
    assert len(history) == 2
    with lab.client() as api:
        assert len(api.get("/v1/discovery/nodes")["nodes"]) == 2


def test_the_approved_vm_is_managed_and_inspected_to_manageable(
        lab: Lab, discovered: dict[str, dict[str, Any]]) -> None:
    uuid = discovered[ON_MANIFEST]["uuid"]
    with lab.client() as api:
        api.put(f"/v1/nodes/{uuid}/states/provision", {"target": "manage"})
        wait_states(api, [uuid], {"manageable"}, 60, failed={"enroll"})
        api.put(f"/v1/nodes/{uuid}/states/provision", {"target": "inspect"})
        try:
            done = wait_states(api, [uuid], {"manageable"}, INSPECT_TIMEOUT,
                               failed={"inspect failed"},
                               settled=lambda n: n.get("inspection_finished_at") is not None)
        except Exception as exc:
            raise AssertionError(f"{exc}\n{_explain(lab)}") from None
    props = done[uuid]["properties"]
    assert props["memory_mb"] >= 256 and props["cpu_arch"] == "x86_64"
