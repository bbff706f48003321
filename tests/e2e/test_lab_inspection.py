"""In-band inspection of real QEMU VMs through the whole path, in the lab (`ironsight.lab`).

One lab for the module, in its own network namespace: `ironsight serve` with
`[discoverd] enabled` and `[pxe] enabled` (discoverd's dnsmasq, its boot files, its PXE filter),
virtual BMCs driving QEMU (TCG), the real discovery ramdisk. Five VMs:

* lab-1..3 (pxe_ipmitool, pxe_ipminative, pxe_ipmitool; 1/2/1 vCPUs, 256/320/288 MiB,
  4/5/6 GiB disks) are inspected at once through the bare-metal API;
* lab-4 is enrolled but never inspected: the PXE filter denies its MAC, so when it is powered
  on by hand through its BMC dnsmasq ignores it;
* lab-6 (pxe_ssh; 2 vCPUs, 320 MiB, 5 GiB disk) is a libvirt domain of the lab's own
  hypervisor (libvirtd and sshd in the lab's namespace, lab/hypervisor.py), powered with the
  real `virsh` over SSH; it is inspected beside lab-1, once more, for their timings. Where
  libvirt cannot run, it is left out and its test says why;
* lab-7..10 boot as today's servers do, on Debian's OVMF with no iPXE ROM on their NICs, so
  the firmware's own network boot runs: lab-7 UEFI PXE, lab-8 UEFI PXE with Secure Boot on
  (shim -> GRUB -> the signed kernel, all over discoverd's TFTP), lab-9 the same on an
  IPv6-only port (DHCPv6, TFTP and the report over IPv6), lab-10 UEFI HTTP boot (iPXE by
  URL). They are inspected at once, and each one's capabilities, console and the files it
  fetched show it took its own path;
* lab-11 and lab-12 (redfish; 1 vCPU, 1 GiB, 4 GiB disk) are libvirt domains of the same
  hypervisor behind the lab's Redfish BMC (sushy-tools' emulator in the namespace, HTTPS with
  the lab's CA): lab-11 is inspected in-band (powered through Redfish, PXE through discoverd),
  lab-12 out of band (`inspect_interface = redfish`: read from the BMC, never powered on).
  Where libvirt or the emulator's venv is missing, they are left out and their tests say why;
* lab-5 has sixteen more small disks, which makes its agent's report larger than this lab's
  `[introspection] max_callback_size` (8 KiB; the other VMs' reports are ~4-5 KiB with their
  PCI devices, DMI and LLDP; each extra disk adds a disk and a PCI device, ~0.5 KiB): discoverd
  answers 413, the agent exits 1, and the ramdisk's /init posts its fallback error report,
  which must end the inspection in `inspect failed` with that error. (The agent itself has
  no per-VM way to fail: its collectors survive any VM hardware, and the kernel command
  line is the same for every node.)

Before the inspection, three inspection rules are created through the bare-metal API with
python-ironicclient's `baremetal inspection rule create`, as an operator would; their conditions
read the VMs' real hardware (CPU architecture, memory from SMBIOS) and the LLDP the lab's switch
sends on each tap (lab/lldp.py, parsed by the lab's `parse-lldp` hook). After it, the nodes, the
introspection data's rule traces and the nodes' history show which matched on which VM: one on
every VM (resource class, trait, capability), one on the VMs with more than 300 MiB only, and a
negative control naming a switch port no VM is on, on none.

Every wait is bounded; on a failure the VMs' serial logs, discoverd's dnsmasq lines and the
service's log are printed.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ironsight.client.http import ApiClient
from ironsight.lab import firmware, hypervisor, redfish_bmc
from ironsight.lab.hypervisor import Hypervisor
from ironsight.lab.lifecycle import running
from ironsight.lab.lldp import CHASSIS_MAC, PORT_NAME, SYSTEM_NAME
from ironsight.lab.network import LabNetwork
from ironsight.lab.nodes import provision, wait_states
from ironsight.lab.qemu import VmSpec
from ironsight.lab.state import (
    REDFISH_DRIVER,
    REDFISH_MIN_MB,
    SSH_DRIVER,
    UEFI_MIN_MB,
    VMEDIA_BOOT,
    Lab,
    LabOptions,
    LabVm,
    default_vms,
)

from .labkit import diagnosed, ramdisk_dir, require_lab

INSPECT_TIMEOUT = 180.0  # per node, all at once; one inspection takes ~20-40 s under TCG
DENY_WINDOW = 25.0  # iPXE sends 4-5 DHCPDISCOVERs in that time
NORMAL = ("lab-1", "lab-2", "lab-3")
DENIED = "lab-4"
FAILING = "lab-5"
UNDER_LIBVIRT = "lab-6"
UEFI, SECURE, IPV6_ONLY, HTTP_BOOT = "lab-7", "lab-8", "lab-9", "lab-10"
REDFISH_PXE, REDFISH_OOB, REDFISH_VMEDIA = "lab-11", "lab-12", "lab-13"
NO_REDFISH = hypervisor.unavailable() or redfish_bmc.unavailable()
FIRMWARE = {UEFI: firmware.UEFI, SECURE: firmware.UEFI_SECUREBOOT,
            IPV6_ONLY: firmware.UEFI_SECUREBOOT, HTTP_BOOT: firmware.UEFI_HTTPBOOT}
MAX_BODY = 8192
FAULT_MIN = 45.0  # the lab's [deadlines] min_seconds
# A fault's verdict comes within twice its step's p95 plus this: the deadline's floor, the
# deadline check's interval (5 s) and the conductor's and discoverd's own latencies
FAULT_MARGIN = FAULT_MIN + 15.0
BAREMETAL = shutil.which("baremetal") or str(Path(sys.executable).parent / "baremetal")
NIC = "eth0"  # the ramdisk's only NIC, as test_ramdisk_boot.py shows (no udev renaming)
LLDP_PORT = f"{{plugin_data[parsed_lldp][{NIC}][switch_port_id]}}"
LLDP_CHASSIS = f"{{plugin_data[parsed_lldp][{NIC}][switch_chassis_id]}}"
LAB_CLASS, LAB_TRAIT, LAB_CAPABILITY = "lab-tcg", "CUSTOM_LAB_SWITCH", "lab_switch_port"
BIG_MB, BIG_TRAIT = 300, "CUSTOM_MEMORY_OVER_300"
WRONG_PORT, WRONG_CLASS, WRONG_TRAIT = "tap99", "lab-wrong-port", "CUSTOM_WRONG_PORT"


def _lab_vms() -> list[LabVm]:
    vms = default_vms(3)
    vms.append(LabVm(VmSpec(name=DENIED, mac="52:54:00:1a:00:04", tap="tap4", cpus=1,
                            memory_mb=256, disk_gb=4), "pxe_ipminative", 6233))
    vms.append(LabVm(VmSpec(name=FAILING, mac="52:54:00:1a:00:05", tap="tap5", cpus=1,
                            memory_mb=256, disk_gb=4, extra_disks_mb=(16,) * 16),
                     "pxe_ipmitool", 6234))
    if hypervisor.unavailable() is None:
        vms.append(LabVm(VmSpec(name=UNDER_LIBVIRT, mac="52:54:00:1a:00:06", tap="tap6",
                                cpus=2, memory_mb=320, disk_gb=5), SSH_DRIVER, 6235))
    for number, name in enumerate(FIRMWARE, start=7):
        vms.append(LabVm(VmSpec(name=name, mac=f"52:54:00:1a:00:{number:02x}", tap=f"tap{number}",
                                cpus=1, memory_mb=UEFI_MIN_MB, disk_gb=4,
                                firmware=FIRMWARE[name],
                                ipv6_only=name == IPV6_ONLY),
                         "pxe_ipmitool", 6229 + number))
    if NO_REDFISH is None:
        for number, name in ((11, REDFISH_PXE), (12, REDFISH_OOB), (13, REDFISH_VMEDIA)):
            vms.append(LabVm(VmSpec(name=name, mac=f"52:54:00:1a:00:{number:02x}",
                                    tap=f"tap{number}", cpus=1, memory_mb=REDFISH_MIN_MB,
                                    disk_gb=4), REDFISH_DRIVER, 6229 + number,
                             boot_interface=VMEDIA_BOOT if name == REDFISH_VMEDIA else None))
    return vms


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    require_lab(firmware.KINDS)
    options = LabOptions(
        state_dir=tmp_path_factory.mktemp("lab"), vms=_lab_vms(),
        network=LabNetwork(namespace=f"islab-{secrets.token_hex(3)}"),
        ramdisk_dir=ramdisk_dir(), api_port=0, discoverd_port=0, bmc_same_ports=False,
        extra_conf={"introspection": {"max_callback_size": str(MAX_BODY),
                                      "max_logs_size": "0"},
                    # deadlines from 3 successful attempts on (the product's default: 5), and
                    # no shorter than 45 s: the UEFI VMs fetch their kernels over TFTP, slower
                    # than the BIOS VMs' HTTP they are first learned from
                    "deadlines": {"min_samples": "3", "min_seconds": str(FAULT_MIN)}})
    with running(options, log=print) as the_lab:
        yield the_lab


def _create_rule(lab: Lab, description: str, priority: int,
                 conditions: list[dict[str, Any]], actions: list[dict[str, Any]]
                 ) -> dict[str, Any]:
    """`baremetal inspection rule create`, unmodified, on the lab's bare-metal API (1.96+)."""
    proc = subprocess.run(
        [BAREMETAL, "--os-endpoint", lab.api_url, "--os-auth-type", "none",
         "inspection", "rule", "create", "--description", description,
         "--priority", str(priority), "--conditions", json.dumps(conditions),
         "--actions", json.dumps(actions), "-f", "json"],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"baremetal inspection rule create: {proc.stderr}"
    return dict(json.loads(proc.stdout))


def _on_lab_switch(port_condition: dict[str, Any], lab: Lab) -> list[dict[str, Any]]:
    """Conditions: real x86_64 hardware with lab-sized memory, behind the lab's switch (its
    chassis is the bridge's MAC) on the port `port_condition` checks."""
    return [
        {"op": "eq", "args": {"values": ["{inventory[cpu][architecture]}", "x86_64"]}},
        {"op": "ge", "args": {"values": ["{inventory[memory][physical_mb]}", 256]}},
        {"op": "eq", "args": {"values": [LLDP_CHASSIS, lab.network.bridge_mac]}},
        port_condition,
    ]


@pytest.fixture(scope="module")
def rules(lab: Lab) -> dict[str, dict[str, Any]]:
    """The rules, created once, before the inspection (the test that inspects requests them):
    `lab` on every VM, `big` on the VMs with more than BIG_MB MiB, `wrong` (the negative
    control: a switch port no VM is on) on none. `wrong` runs last: had it matched, its
    resource class would replace `lab`'s."""
    lab_rule = _create_rule(
        lab, "lab VMs behind the lab switch", 50,
        _on_lab_switch({"op": "matches", "args": {"value": LLDP_PORT, "regex": "tap[0-9]+"}},
                       lab),
        [{"op": "set-attribute", "args": {"path": "/resource_class", "value": LAB_CLASS}},
         {"op": "add-trait", "args": {"name": LAB_TRAIT}},
         {"op": "set-capability", "args": {"name": LAB_CAPABILITY, "value": LLDP_PORT}}])
    big = _create_rule(
        lab, "lab VMs over 300 MiB", 40,
        [{"op": "gt", "args": {"values": ["{inventory[memory][physical_mb]}", BIG_MB]}}],
        [{"op": "add-trait", "args": {"name": BIG_TRAIT}}])
    wrong = _create_rule(
        lab, "another switch port", 30,
        _on_lab_switch({"op": "eq", "args": {"values": [LLDP_PORT, WRONG_PORT]}}, lab),
        [{"op": "set-attribute", "args": {"path": "/resource_class", "value": WRONG_CLASS}},
         {"op": "add-trait", "args": {"name": WRONG_TRAIT}}])
    return {"lab": lab_rule, "big": big, "wrong": wrong}


@pytest.fixture
def client(lab: Lab) -> Iterator[ApiClient]:
    with lab.client() as c:
        yield c


def _get(client: ApiClient, path: str) -> Any:
    return client.get(path)  # an error answer raises ApiError, with its status and message


def _wait_qemu_gone(lab: Lab, name: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while lab.qemu_pid(name) is not None:
        assert time.monotonic() < deadline, f"{name}: QEMU still runs {timeout:.0f} s after " \
                                            "the node was reported powered off"
        time.sleep(0.2)


def _powered_off(doc: dict[str, Any]) -> bool:
    return doc["power_state"] == "power off" and not doc.get("target_power_state")


# The steps of a PXE inspection, in the order the node's timeline must have them (each its
# first occurrence: the ramdisk takes a second lease after its kernel). The power on is
# confirmed while the VM may already be asking for DHCP: only its request counts here.
PXE_STEPS = ("started", "power_on_requested", "dhcp_lease", "loader_fetched", "script_fetched",
             "kernel_fetched", "ramdisk_fetched", "hello", "report_received",
             "processing_done", "finished", "powered_off")
VMEDIA_STEPS = ("started", "media_requested", "media_built", "media_inserted", "power_on_requested",
                "powered_on", "hello", "report_received", "processing_done", "finished",
                "powered_off", "media_ejected")


def _latest_attempt(client: ApiClient, name: str) -> dict[str, Any]:
    """Once the conductor's last steps are in (it sends them a fraction of a second after)."""
    deadline = time.monotonic() + 5
    while True:
        latest = dict(_get(client, f"/v1/nodes/{name}/inspection/attempts")["attempts"][-1])
        if latest["result"] != "success" or time.monotonic() > deadline or any(
                p["phase"] == "powered_off" for p in latest["phases"]):
            return latest
        time.sleep(0.1)


def _assert_steps_in_order(attempt: dict[str, Any], wanted: tuple[str, ...]) -> None:
    phases = [p["phase"] for p in attempt["phases"]]
    firsts = [phases.index(w) if w in phases else -1 for w in wanted]
    assert -1 not in firsts and firsts == sorted(firsts), (wanted, phases)
    assert (attempt["result"], attempt["failure_code"]) == ("success", None), attempt


@pytest.mark.usefixtures("rules")  # created before the inspection, which applies them
def test_three_vms_inspected_at_once(lab: Lab, client: ApiClient) -> None:
    with diagnosed(lab, NORMAL):
        for name in NORMAL:  # so that pxe_enabled=true can only come from the inspection
            port = _get(client, f"/v1/ports?node={name}&detail=true")["ports"][0]
            patched = client.patch(f"/v1/ports/{port['uuid']}", [
                {"op": "replace", "path": "/pxe_enabled", "value": False}])
            assert patched["pxe_enabled"] is False, patched
        began = time.monotonic()
        for name in NORMAL:
            provision(client, name, "inspect")
        done = wait_states(client, NORMAL, {"manageable"}, INSPECT_TIMEOUT,
                           failed={"inspect failed", "enroll"}, settled=_powered_off)
        took = time.monotonic() - began
        print(f"3 VMs inspected at once in {took:.1f} s")

        drivers = set()
        for name in NORMAL:
            spec, node = lab.vm(name).spec, done[name]
            drivers.add(node["driver"])
            props = node["properties"]
            assert props["cpus"] == spec.cpus, (name, props)
            assert props["memory_mb"] == spec.memory_mb, (name, props)  # SMBIOS type 17 = -m
            assert props["local_gb"] == spec.disk_gb - 1, (name, props)
            assert props["cpu_arch"] == "x86_64", (name, props)
            capabilities = props["capabilities"].split(",")
            assert {"boot_mode:bios", "secure_boot:false"} <= set(capabilities), (name, props)
            assert node["last_error"] is None, (name, node["last_error"])
            ports = _get(client, f"/v1/ports?node={name}&detail=true")["ports"]
            assert [(p["address"], p["pxe_enabled"]) for p in ports] == [(spec.mac, True)]
            assert node["power_state"] == "power off"
            _wait_qemu_gone(lab, name)
            history = [e["event"] for e in _get(client, f"/v1/nodes/{name}/history")["history"]]
            assert any("power on" in e for e in history), history
            assert any("power off" in e for e in history), history
        assert drivers == {"pxe_ipmitool", "pxe_ipminative"}
        # each VM went through discoverd's dnsmasq: iPXE's lease, then the ramdisk's
        for name in NORMAL:
            leases = lab.pxe_lines(f"{lab.vm(name).spec.mac} got the address")
            assert len(leases) >= 2, (name, leases)
        # ... and each step of it is on the node's timeline, in order, with its details
        for name in NORMAL:
            attempt = _latest_attempt(client, name)
            _assert_steps_in_order(attempt, PXE_STEPS)
            steps = {p["phase"]: p for p in reversed(attempt["phases"])}
            assert steps["kernel_fetched"]["bytes"] > 1_000_000, steps["kernel_fetched"]
            assert steps["script_fetched"]["token"] is True, steps["script_fetched"]
            assert steps["dhcp_lease"]["mac"] == lab.vm(name).spec.mac
            print(f"{name} timeline: " + ", ".join(
                f"{p['phase']}@{p['at'][11:21]}" for p in attempt["phases"]))


def test_each_vm_stored_its_own_switch_port_from_lldp(lab: Lab, client: ApiClient) -> None:
    """The lab daemon sends on each tap the bridge's MAC as chassis and the tap as port."""
    chassis = [1, f"{CHASSIS_MAC:02x}" + lab.network.bridge_mac.replace(":", "")]
    with diagnosed(lab, NORMAL):
        for name in NORMAL:
            spec = lab.vm(name).spec
            stored = _get(client, f"/v1/nodes/{name}/inventory")
            port = [2, f"{PORT_NAME:02x}" + spec.tap.encode().hex()]
            (nic,) = [n for n in stored["inventory"]["interfaces"]
                      if n["mac_address"] == spec.mac]
            assert chassis in nic["lldp"] and port in nic["lldp"], (name, nic["lldp"])
            assert stored["plugin_data"]["lldp_raw"][nic["name"]] == nic["lldp"], name


def test_each_vm_port_got_its_switch_port_from_lldp(lab: Lab, client: ApiClient) -> None:
    """The lab's chain ends with parse-lldp and local-link-connection (lifecycle.py)."""
    with diagnosed(lab, NORMAL):
        for name in NORMAL:
            spec = lab.vm(name).spec
            (port,) = _get(client, f"/v1/ports?node={name}&detail=true")["ports"]
            assert port["local_link_connection"] == {
                "switch_id": lab.network.bridge_mac, "port_id": spec.tap,
                "switch_info": SYSTEM_NAME}, (name, port)
            stored = _get(client, f"/v1/nodes/{name}/inventory")["plugin_data"]
            nic = next(n for n, i in stored["all_interfaces"].items() if i["mac"] == spec.mac)
            assert stored["parsed_lldp"][nic]["switch_port_id"] == spec.tap, name


def _traces(lab: Lab, node_uuid: str) -> dict[str, dict[str, Any]]:
    """The rule traces in discoverd's introspection data, by rule UUID."""
    with ApiClient(lab.discoverd_url) as discoverd:
        data = discoverd.get(f"/v1/introspection/{node_uuid}/data")
    return {trace["uuid"]: trace for trace in data["rules"]}


def test_rules_set_resource_class_trait_and_capability_from_hardware_and_lldp(
        lab: Lab, client: ApiClient, rules: dict[str, dict[str, Any]]) -> None:
    with diagnosed(lab, NORMAL):
        for name in NORMAL:
            spec = lab.vm(name).spec
            node = _get(client, f"/v1/nodes/{name}")
            assert node["resource_class"] == LAB_CLASS, (name, node["resource_class"])
            traits = set(_get(client, f"/v1/nodes/{name}/traits")["traits"])
            big = spec.memory_mb > BIG_MB
            assert traits == {LAB_TRAIT} | ({BIG_TRAIT} if big else set()), (name, traits)
            capabilities = node["properties"]["capabilities"].split(",")
            assert f"{LAB_CAPABILITY}:{spec.tap}" in capabilities, (name, capabilities)

            trace = _traces(lab, node["uuid"])[rules["lab"]["uuid"]]
            assert trace["matched"] is True and trace["failure"] is None, (name, trace)
            assert [c["args"]["values"] for c in trace["conditions"][:3]] == [
                ["x86_64", "x86_64"], [spec.memory_mb, 256],
                [lab.network.bridge_mac, lab.network.bridge_mac]], (name, trace)
            assert trace["conditions"][3]["args"]["value"] == spec.tap, (name, trace)
            assert [a["op"] for a in trace["actions"] if a["changes"]] == [
                "set-attribute", "add-trait", "set-capability"], (name, trace)
            assert trace["warnings"] == [], (name, trace)
            assert _traces(lab, node["uuid"])[rules["big"]["uuid"]]["matched"] is big, name

            history = [e["event"] for e in _get(client, f"/v1/nodes/{name}/history")["history"]]
            matched = [e for e in history if e.startswith("Inspection rules matched")]
            assert len(matched) == 1 and rules["lab"]["uuid"] in matched[0], (name, history)
            assert LAB_TRAIT in matched[0] and WRONG_TRAIT not in matched[0], (name, matched)


def test_rule_for_another_switch_port_matches_no_vm(
        lab: Lab, client: ApiClient, rules: dict[str, dict[str, Any]]) -> None:
    """The negative control: the same hardware and chassis, a port no VM is on."""
    with diagnosed(lab, NORMAL):
        for name in NORMAL:
            node = _get(client, f"/v1/nodes/{name}")
            traits = _get(client, f"/v1/nodes/{name}/traits")["traits"]
            assert WRONG_TRAIT not in traits and node["resource_class"] != WRONG_CLASS, name
            trace = _traces(lab, node["uuid"])[rules["wrong"]["uuid"]]
            # Stored in short (a rule that did not match): which condition was false.
            assert trace["matched"] is False and trace["false_condition"] == 3, (name, trace)
            # The dry run on the stored data says why, in full: only the port differs.
            with ApiClient(lab.discoverd_url) as discoverd:
                run = discoverd.post("/v1/inspection_rules/dry_run",
                                     {"node": node["uuid"], "rule": rules["wrong"]["uuid"]})
            assert run["matched"] is False, (name, run)
            assert [c["result"] for c in run["conditions"]] == [True, True, True, False], run
            assert run["conditions"][3]["args"]["values"] == [
                lab.vm(name).spec.tap, WRONG_PORT], (name, run)


def test_denied_mac_gets_no_lease(lab: Lab, client: ApiClient) -> None:
    mac = lab.vm(DENIED).spec.mac
    hosts_file = lab.state_dir / "pxe" / "hosts" / mac
    with diagnosed(lab, (DENIED,)):
        node = _get(client, f"/v1/nodes/{DENIED}")
        assert node["provision_state"] == "manageable"  # known, not under introspection
        deadline = time.monotonic() + 30  # the filter's periodic sync saw the new port
        while not (hosts_file.exists() and hosts_file.read_text().strip() == f"{mac},ignore"):
            assert time.monotonic() < deadline, f"the PXE filter does not deny {mac}"
            time.sleep(0.5)
        seen = len(lab.pxe_lines())
        for args in (("chassis", "bootdev", "pxe"), ("power", "on")):
            result = lab.ipmitool(DENIED, *args)
            assert result.returncode == 0, (args, result.stderr)
        try:
            began = time.monotonic()
            while time.monotonic() - began < DENY_WINDOW:
                new = lab.pxe_lines()[seen:]
                assert not [line for line in new if f"{mac} got the address" in line], new
                time.sleep(1)
            power = lab.ipmitool(DENIED, "power", "status").stdout
            assert "is on" in power, f"the denied VM stopped by itself: {power}"
            ignored = [line for line in lab.pxe_lines()[seen:] if f"{mac} ignored" in line]
            print(f"{DENIED}: {len(ignored)} DHCP requests ignored in {DENY_WINDOW:.0f} s")
            assert ignored, f"dnsmasq logged no 'ignored' for {mac}"
        finally:
            lab.ipmitool(DENIED, "power", "off")
        _wait_qemu_gone(lab, DENIED)


def test_ramdisk_error_fails_inspection(lab: Lab, client: ApiClient) -> None:
    with diagnosed(lab, (FAILING,)):
        began = time.monotonic()
        provision(client, FAILING, "inspect")
        node = wait_states(client, [FAILING], {"inspect failed"}, INSPECT_TIMEOUT,
                           failed={"manageable"})[FAILING]
        print(f"{FAILING}: inspect failed after {time.monotonic() - began:.1f} s: "
              f"{node['last_error']}")
        error = node["last_error"] or ""
        assert "ramdisk error: agent exited with code 1" in error, error
        assert "HTTP 413" in error, error
        serial = lab.files(FAILING).serial_log.read_text(errors="replace")
        assert "error report" in serial, serial[-3000:]
        assert "local_gb" not in node["properties"], node["properties"]  # nothing applied
        # its timeline: the agent said hello, then the error report ended it
        attempt = _latest_attempt(client, FAILING)
        assert (attempt["result"], attempt["failure_code"]) == ("failed", "RAMDISK_ERROR")
        phases = [p["phase"] for p in attempt["phases"]]
        assert "hello" in phases and "report_received" not in phases, phases
        assert "HTTP 413" in attempt["diagnosis"]["phrase"], attempt["diagnosis"]


def _domain_hardware(hv: Hypervisor, name: str) -> tuple[int, int, int]:
    """vCPUs, MiB and disk GiB as libvirt defines the domain (not as the lab asked)."""
    root = ET.fromstring(hv.dumpxml(name))
    memory = root.find("memory")
    assert memory is not None and memory.get("unit") == "KiB", hv.dumpxml(name)
    disk = root.find("./devices/disk/source")
    assert disk is not None
    info = subprocess.run(["qemu-img", "info", "--output=json", disk.get("file", "")],
                          capture_output=True, text=True, timeout=30, check=True)
    size = json.loads(info.stdout)["virtual-size"]
    return int(root.findtext("vcpu") or 0), int(memory.text or 0) // 1024, size // 1024**3


def _took(node: dict[str, Any]) -> float:
    started = dt.datetime.fromisoformat(node["inspection_started_at"])
    return (dt.datetime.fromisoformat(node["inspection_finished_at"]) - started).total_seconds()


def test_pxe_ssh_vm_under_libvirt_is_inspected_beside_an_ipmi_one(
        lab: Lab, client: ApiClient) -> None:
    """Power on by `virsh start` over SSH, the boot device in the domain's definition, PXE,
    the ramdisk, its report, power off by `virsh destroy`; lab-1 (IPMI) at the same time."""
    why = hypervisor.unavailable()
    if why is not None:
        pytest.skip(f"libvirt cannot run here: {why}")
    hv = Hypervisor(lab.hypervisor_dir)
    both = (UNDER_LIBVIRT, "lab-1")
    with diagnosed(lab, both):
        assert hv.state(UNDER_LIBVIRT) == "shut off"
        for name in both:
            provision(client, name, "inspect")
        done = wait_states(client, both, {"manageable"}, INSPECT_TIMEOUT,
                           failed={"inspect failed", "enroll"}, settled=_powered_off)
        print(f"inspected at once: {UNDER_LIBVIRT} (pxe_ssh, libvirt) in "
              f"{_took(done[UNDER_LIBVIRT]):.1f} s, lab-1 (pxe_ipmitool) in "
              f"{_took(done['lab-1']):.1f} s")
        node = done[UNDER_LIBVIRT]
        assert node["driver"] == SSH_DRIVER and node["last_error"] is None, node
        cpus, memory_mb, disk_gb = _domain_hardware(hv, UNDER_LIBVIRT)
        props = node["properties"]
        assert (props["cpus"], props["memory_mb"], props["local_gb"]) == (
            cpus, memory_mb, disk_gb - 1), (props, (cpus, memory_mb, disk_gb))
        assert hypervisor.wait_state(hv, UNDER_LIBVIRT, "shut off", 15), hv.state(UNDER_LIBVIRT)
        boot = ET.fromstring(hv.dumpxml(UNDER_LIBVIRT)).find("./os/boot")
        assert boot is not None and boot.get("dev") == "network"  # set by the driver
        qemu_log = (lab.hypervisor_dir / "log" / "qemu" / f"{UNDER_LIBVIRT}.log").read_text()
        assert "reason=destroyed" in qemu_log, qemu_log[-2000:]  # virsh destroy, not a crash
        history = [e["event"] for e in
                   _get(client, f"/v1/nodes/{UNDER_LIBVIRT}/history")["history"]]
        assert any("power on" in e for e in history), history
        assert any("power off" in e for e in history), history
        leases = lab.pxe_lines(f"{lab.vm(UNDER_LIBVIRT).spec.mac} got the address")
        assert len(leases) >= 2, leases  # iPXE's lease, then the ramdisk's


def test_a_redfish_vm_is_powered_through_redfish_and_inspected_over_pxe(
        lab: Lab, client: ApiClient) -> None:
    """Power and boot device through the lab's Redfish BMC (the emulator in front of
    libvirt), the ramdisk over discoverd's PXE side, as for the other types."""
    if NO_REDFISH is not None:
        pytest.skip(f"no Redfish VM here: {NO_REDFISH}")
    hv = Hypervisor(lab.hypervisor_dir)
    with diagnosed(lab, (REDFISH_PXE,)):
        assert hv.state(REDFISH_PXE) == "shut off"
        provision(client, REDFISH_PXE, "inspect")
        done = wait_states(client, [REDFISH_PXE], {"manageable"}, INSPECT_TIMEOUT,
                           failed={"inspect failed", "enroll"}, settled=_powered_off)
        node = done[REDFISH_PXE]
        print(f"{REDFISH_PXE} (redfish, PXE) inspected in {_took(node):.1f} s")
        assert node["driver"] == REDFISH_DRIVER and node["last_error"] is None, node
        cpus, memory_mb, disk_gb = _domain_hardware(hv, REDFISH_PXE)
        props = node["properties"]
        assert (props["cpus"], props["memory_mb"], props["local_gb"]) == (
            cpus, memory_mb, disk_gb - 1), props
        assert hypervisor.wait_state(hv, REDFISH_PXE, "shut off", 15), hv.state(REDFISH_PXE)
        assert node["driver_info"]["redfish_password"] == "******"
        requests = (lab.redfish_dir / "sushy-emulator.log").read_text(errors="replace")
        assert "ComputerSystem.Reset" in requests  # powered through the Redfish BMC


def test_a_virtual_media_vm_is_inspected_with_no_dhcp_or_pxe_of_ours(
        lab: Lab, client: ApiClient) -> None:
    """The combined mode on a node enrolled without a port: out of band first (its port
    from the BMC), then in-band with boot_interface = redfish-virtual-media: the inspection
    ISO inserted through the Redfish BMC, one boot from CD, the static address of the node's
    network_data; the VM never speaks to discoverd's dnsmasq, and the CD is ejected at the
    end."""
    if NO_REDFISH is not None:
        pytest.skip(f"no Redfish VM here: {NO_REDFISH}")
    hv = Hypervisor(lab.hypervisor_dir)
    mac = lab.vm(REDFISH_VMEDIA).spec.mac
    with diagnosed(lab, (REDFISH_VMEDIA,)):
        for port in _get(client, f"/v1/nodes/{REDFISH_VMEDIA}/ports")["ports"]:
            client.delete(f"/v1/ports/{port['uuid']}")
        client.patch(f"/v1/nodes/{REDFISH_VMEDIA}",
                     [{"op": "replace", "path": "/inspect_interface", "value": "redfish"}])
        provision(client, REDFISH_VMEDIA, "inspect")
        wait_states(client, [REDFISH_VMEDIA], {"manageable"}, 60,
                    failed={"inspect failed", "enroll"})
        ports = _get(client, f"/v1/nodes/{REDFISH_VMEDIA}/ports")["ports"]
        assert [p["address"] for p in ports] == [mac]  # from the BMC
        client.patch(f"/v1/nodes/{REDFISH_VMEDIA}",
                     [{"op": "replace", "path": "/inspect_interface", "value": "discoverd"}])
        assert hv.state(REDFISH_VMEDIA) == "shut off"
        provision(client, REDFISH_VMEDIA, "inspect")
        done = wait_states(client, [REDFISH_VMEDIA], {"manageable"}, INSPECT_TIMEOUT,
                           failed={"inspect failed", "enroll"}, settled=_powered_off)
        node = done[REDFISH_VMEDIA]
        print(f"{REDFISH_VMEDIA} (redfish, virtual media) inspected in {_took(node):.1f} s")
        assert node["boot_interface"] == VMEDIA_BOOT and node["last_error"] is None, node
        cpus, memory_mb, disk_gb = _domain_hardware(hv, REDFISH_VMEDIA)
        props = node["properties"]
        assert (props["cpus"], props["memory_mb"], props["local_gb"]) == (
            cpus, memory_mb, disk_gb - 1), props
        assert hypervisor.wait_state(hv, REDFISH_VMEDIA, "shut off", 15)
        # no DHCP, no boot file of discoverd's: not a line of its dnsmasq names the MAC
        assert lab.pxe_lines(mac) == [], lab.pxe_lines(mac)
        serial = lab.files(REDFISH_VMEDIA).serial_log.read_text(errors="replace")
        address = node["network_data"]["networks"][0]["ip_address"]
        assert "booting the discovery ramdisk from virtual media" in serial
        assert f"network up: {address}" in serial and "(static)" in serial
        history = [e["event"] for e in
                   _get(client, f"/v1/nodes/{REDFISH_VMEDIA}/history")["history"]]
        assert any("inserted as a virtual CD" in e for e in history), history
        # ejected: the domain has no CD left, and the BMC shows no medium
        assert "cdrom" not in hv.dumpxml(REDFISH_VMEDIA)
        media = _get(client, f"/v1/nodes/{REDFISH_VMEDIA}/vmedia")["vmedia"]
        assert media and not any(m["inserted"] for m in media), media
        # the token the image carried is in no log of the service
        assert "callback_token=" not in lab.serve_log.read_text(errors="replace")
        _assert_steps_in_order(_latest_attempt(client, REDFISH_VMEDIA), VMEDIA_STEPS)


def test_out_of_band_inspection_reads_a_redfish_vm_without_booting_it(
        lab: Lab, client: ApiClient) -> None:
    if NO_REDFISH is not None:
        pytest.skip(f"no Redfish VM here: {NO_REDFISH}")
    hv = Hypervisor(lab.hypervisor_dir)
    with diagnosed(lab, (REDFISH_OOB,)):
        client.patch(f"/v1/nodes/{REDFISH_OOB}",
                     [{"op": "replace", "path": "/inspect_interface", "value": "redfish"}])
        began = time.monotonic()
        provision(client, REDFISH_OOB, "inspect")
        done = wait_states(client, [REDFISH_OOB], {"manageable"}, 60,
                           failed={"inspect failed", "enroll"})
        took = time.monotonic() - began
        print(f"{REDFISH_OOB} inspected out of band in {took:.1f} s")
        node = done[REDFISH_OOB]
        cpus, memory_mb, _ = _domain_hardware(hv, REDFISH_OOB)
        props = node["properties"]
        assert (props["cpus"], props["memory_mb"], props["cpu_arch"]) == (
            cpus, memory_mb, "x86_64"), props
        ports = _get(client, f"/v1/nodes/{REDFISH_OOB}/ports")["ports"]
        assert [p["address"] for p in ports] == [lab.vm(REDFISH_OOB).spec.mac]
        assert hv.state(REDFISH_OOB) == "shut off"  # never booted
        assert lab.qemu_pid(REDFISH_OOB) is None
        assert took < 30, took


def test_the_hypervisors_key_is_never_shown(lab: Lab, client: ApiClient) -> None:
    if hypervisor.unavailable() is not None:
        pytest.skip("libvirt cannot run here")
    key = (lab.hypervisor_dir / "ssh" / "id_ed25519").read_text()
    body = key.splitlines()[1]  # a line of the key's base64
    node = _get(client, f"/v1/nodes/{UNDER_LIBVIRT}")
    assert node["driver_info"]["ssh_key_contents"] == "******", node["driver_info"]
    assert body not in json.dumps(node)
    assert body not in lab.serve_log.read_text(errors="replace")


def _tftp_files_of(lab: Lab, address_prefix: str) -> list[tuple[str, str]]:
    """(client address, file) of every TFTP transfer from addresses starting so."""
    found = []
    for line in lab.pxe_lines(" over TFTP ("):
        client, _, rest = line.split("PXE: ", 1)[1].partition(" fetched ")
        if client.startswith(address_prefix):
            found.append((client, rest.split(" over TFTP")[0]))
    return found


def test_uefi_machines_are_inspected_through_their_firmwares_own_network_boot(
        lab: Lab, client: ApiClient) -> None:
    """UEFI PXE, UEFI PXE with Secure Boot (on IPv4 and on an IPv6-only port), UEFI HTTP
    boot: at once, each over its own path, with the capabilities of its firmware."""
    names = tuple(FIRMWARE)
    with diagnosed(lab, names):
        for name in names:
            provision(client, name, "inspect")
        done = wait_states(client, names, {"manageable"}, INSPECT_TIMEOUT,
                           failed={"inspect failed", "enroll"}, settled=_powered_off)
        for name in names:
            print(f"{name} ({FIRMWARE[name]}{', IPv6-only' if name == IPV6_ONLY else ''}) "
                  f"inspected in {_took(done[name]):.1f} s")
        for name in names:
            node, spec = done[name], lab.vm(name).spec
            assert node["last_error"] is None, (name, node["last_error"])
            props = node["properties"]
            assert (props["cpus"], props["memory_mb"], props["local_gb"]) == (
                spec.cpus, spec.memory_mb, spec.disk_gb - 1), (name, props)
            secure = "true" if FIRMWARE[name] == firmware.UEFI_SECUREBOOT else "false"
            assert {"boot_mode:uefi", f"secure_boot:{secure}"} <= set(
                props["capabilities"].split(",")), (name, props)
            serial = lab.files(name).serial_log.read_text(errors="replace")
            # the ramdisk's own view, and the kernel's under Secure Boot
            on = "on" if secure == "true" else "off"
            assert f"boot: uefi, secure boot {on}" in serial, (name, serial[-3000:])
            assert ("secureboot: Secure boot enabled" in serial) == (secure == "true"), name
            if secure == "true":
                assert "Kernel is locked down from EFI Secure Boot" in serial, name

        # the firmware's own PXE, not iPXE, then shim -> GRUB -> kernel over TFTP
        for name, banner in ((UEFI, ">>Start PXE over IPv4"), (SECURE, ">>Start PXE over IPv4"),
                             (IPV6_ONLY, ">>Start PXE over IPv6")):
            serial = lab.files(name).serial_log.read_text(errors="replace")
            assert banner in serial and "iPXE" not in serial, (name, serial[-3000:])
            mac = lab.vm(name).spec.mac
            config = f"grub/{mac}.cfg"
            files = [f for _, f in _tftp_files_of(lab, "")]
            for wanted in ("bootx64.efi", "grubx64.efi", config):
                assert wanted in files, (name, wanted, files)
            client_address = [c for c, f in _tftp_files_of(lab, "") if f == config][-1]
            fetched = [f for c, f in _tftp_files_of(lab, client_address)]
            assert fetched[-3:] == [config, "pxe/vmlinuz", "pxe/initramfs"], (name, fetched)
            assert (":" in client_address) == (name == IPV6_ONLY), (name, client_address)

        # each firmware's path is on its timeline: over TFTP (IPv6 too) or HTTP boot
        for name in names:
            attempt = _latest_attempt(client, name)
            _assert_steps_in_order(attempt, PXE_STEPS[3:] if name == IPV6_ONLY else PXE_STEPS)
            loaders = [p.get("file") for p in attempt["phases"] if p["phase"] == "loader_fetched"]
            assert ("snponly.efi" if name == HTTP_BOOT else "bootx64.efi") in loaders, (
                name, loaders)

        # the IPv6-only VM: no IPv4 lease ever, and its ramdisk reported over IPv6
        assert not lab.pxe_lines(f"{lab.vm(IPV6_ONLY).spec.mac} got the address"), \
            lab.pxe_lines(lab.vm(IPV6_ONLY).spec.mac)
        inventory = _get(client, f"/v1/nodes/{IPV6_ONLY}/inventory")["inventory"]
        (nic,) = [n for n in inventory["interfaces"]
                  if n["mac_address"] == lab.vm(IPV6_ONLY).spec.mac]
        assert nic["ipv4_address"] is None, nic
        assert (nic["ipv6_address"] or "").startswith("fd20:20::"), nic
        assert inventory["boot"] == {"current_boot_mode": "uefi", "secure_boot": True,
                                     "pxe_interface": lab.vm(IPV6_ONLY).spec.mac}, inventory

        # HTTP boot: the firmware fetched iPXE by URL, which booted the ramdisk over HTTP
        serial = lab.files(HTTP_BOOT).serial_log.read_text(errors="replace")
        assert ">>Start HTTP Boot over IPv4" in serial, serial[-3000:]
        assert "/boot/efi/snponly.efi" in serial and "iPXE" in serial, serial[-3000:]


# --- faults: each ends its attempt at the stalled step's deadline, with its code -------------

# (VM, fault, the attempt's code, the step it never reached), in two rounds on the BIOS VMs
# (their boot files go over HTTP, where the boot-file faults apply)
FAULT_ROUNDS = (
    (("lab-1", "no-dhcp", "BOOT_NO_DHCP", "dhcp_request"),
     ("lab-2", "no-kernel", "BOOT_NO_KERNEL", "kernel_fetched"),
     ("lab-3", "no-ramdisk", "BOOT_NO_RAMDISK", "ramdisk_fetched")),
    (("lab-1", "no-agent", "RAMDISK_NO_HELLO", "hello"),
     ("lab-2", "wrong-callback", "RAMDISK_NO_HELLO", "hello")),
)


def _deadlines(lab: Lab) -> dict[str, dict[str, Any]]:
    """The fleet's learned deadlines, by step."""
    with ApiClient(lab.discoverd_url) as discoverd:
        found = discoverd.get("/v1/deadlines")["deadlines"]
    return {d["step"]: d for d in found if d["model"] == "*"}


def _waited_since(attempt: dict[str, Any]) -> dt.datetime:
    """When the stalled step began: the latest step before the end (the power on's
    confirmation aside, as the deadlines measure it)."""
    first: dict[str, dt.datetime] = {}
    for p in attempt["phases"]:  # each step's first occurrence, as the deadlines take them
        first.setdefault(p["phase"], dt.datetime.fromisoformat(p["at"]))
    return max(at for phase, at in first.items()
               if phase not in ("powered_on", "finished", "powered_off"))


def test_each_fault_ends_its_attempt_with_its_code_at_the_steps_deadline(
        lab: Lab, client: ApiClient) -> None:
    from ironsight.lab import faults

    names = NORMAL
    with diagnosed(lab, names):
        learned = _deadlines(lab)
        if not {"dhcp_request", "kernel_fetched", "ramdisk_fetched", "hello"} <= set(learned):
            for name in names:  # run alone: the history the deadlines are learned from
                provision(client, name, "inspect")
            wait_states(client, names, {"manageable"}, INSPECT_TIMEOUT,
                        failed={"inspect failed", "enroll"}, settled=_powered_off)
            learned = _deadlines(lab)
        try:
            for round_ in FAULT_ROUNDS:
                for name, kind, _, _ in round_:
                    faults.inject(lab, name, kind)
                began = time.monotonic()
                for name, *_ in round_:
                    provision(client, name, "inspect")
                failed = wait_states(client, [r[0] for r in round_], {"inspect failed"},
                                     INSPECT_TIMEOUT, failed={"manageable"},
                                     settled=_powered_off)
                print(f"round {', '.join(r[1] for r in round_)}: failed in "
                      f"{time.monotonic() - began:.1f} s")
                for name, kind, code, step in round_:
                    attempt = _latest_attempt(client, name)
                    assert (attempt["result"], attempt["failure_code"]) == ("failed", code), (
                        name, kind, attempt)
                    end = next(p for p in attempt["phases"] if p["phase"] == "finished")
                    took = (dt.datetime.fromisoformat(end["at"])
                            - _waited_since(attempt)).total_seconds()
                    p95 = learned[step]["p95"]
                    print(f"{name} {kind}: {code} {took:.1f} s after the step before "
                          f"{step} (p95 {p95:.1f} s, deadline {learned[step]['seconds']:.0f}"
                          f" s)")
                    assert took <= 2 * p95 + FAULT_MARGIN, (name, kind, took, p95)
                    error = failed[name]["last_error"] or ""
                    assert f"{code}: " in error and "deadline" in error, (name, error)
                for name, *_ in round_:
                    faults.inject(lab, name, faults.CLEAR)
        finally:
            for name in names:
                faults.inject(lab, name, faults.CLEAR)
        assert not Lab(lab.state_dir).state.get("faults")

        # cleared: the same nodes inspect fine, every step in order
        for name in names:
            provision(client, name, "inspect")
        wait_states(client, names, {"manageable"}, INSPECT_TIMEOUT,
                    failed={"inspect failed", "enroll"}, settled=_powered_off)
        for name in names:
            _assert_steps_in_order(_latest_attempt(client, name), PXE_STEPS)
