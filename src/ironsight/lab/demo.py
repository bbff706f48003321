"""`make demo`: an in-band inspection, driven as an operator would.

Where it can (root, QEMU, network namespaces), it is the real thing: it builds the discovery
ramdisk, brings up a lab of three QEMU VMs behind virtual BMCs in an isolated network
namespace (SeaBIOS, UEFI and UEFI with Secure Boot, the UEFI ones through their firmware's
own PXE; and, where libvirt can run, a fourth as a domain of the lab's own libvirtd,
enrolled as pxe_ssh; where it cannot, the demo says why and goes on without it), with
`ironsight serve` running discoverd's dnsmasq and PXE filter, inspects the
VMs through the bare-metal API (`ironsight node inspect --wait`), prints what was found and
takes the lab down. Elsewhere it says why and runs the simulated inspection:

It starts `ironsight serve` (bare-metal service + discoverd) in a fresh state directory with
two settings on top of the embedded defaults — `[discoverd] enabled`, and `[introspection]
allow_tokenless_reports` (the simulated ramdisks have no callback token) — plus one virtual BMC
over real IPMI/UDP. It enrolls two `fake` nodes and one `pxe_ipmitool` node (each with its
PXE port), manages them, and runs `ironsight node inspect ... --wait`. Each node's discovery
ramdisk is simulated by the real agent (`ironsight agent --root TREE --callback-url ...`)
reading a tree that describes the machine, started once the node has been powered on for
inspection. Everything it started is stopped at the end.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from ironsight.client.history import with_steps
from ironsight.client.http import ApiClient, ClientError, api_answers, baremetal_client, node_path
from ironsight.client.wait import Poller, read_nodes, until
from ironsight.lab.bmc import BmcServer
from ironsight.lab.machines import MachineSpec, build_tree

BM_URL = "http://127.0.0.1:6385"
DI_URL = "http://127.0.0.1:5050"
# `make demo KEEP=1`: the lab (or the services) stay up after the demo, to look at them in
# the web console, until Enter or Ctrl-C; then everything is cleaned up as without it
KEEP = "IRONSIGHT_DEMO_KEEP"


def _keep_running(console_url: str) -> None:
    if not os.environ.get(KEEP) or os.environ[KEEP] == "0":
        console.print(f"(to look around in the web console at {console_url} after the demo, "
                      "run `make demo KEEP=1`)")
        return
    console.print(f"[bold]kept running[/bold]: the web console is at {console_url} ; press "
                  "Enter (or Ctrl-C) to stop and clean up")
    with contextlib.suppress(EOFError, KeyboardInterrupt):
        input()
console = Console(width=None if sys.stdout.isatty() else 140)

MACHINES = (
    MachineSpec("fake-0", cpus=4, memory_mb=8192, disks_gb=(40,),
                macs=("52:54:00:10:00:01", "52:54:00:10:00:02"), ipv4=("10.0.0.11",)),
    MachineSpec("fake-1", cpus=16, memory_mb=65536, disks_gb=(480, 1800), uefi=True,
                macs=("52:54:00:10:01:01",), ipv4=("10.0.0.12",),
                cpu_flags="fpu vmx aes pdpe1gb sse4_2 lm"),
    MachineSpec("ipmi-0", cpus=2, memory_mb=2048, disks_gb=(20,),
                macs=("52:54:00:10:02:01", "52:54:00:10:02:02"), ipv4=("10.0.0.13",)),
)


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _start_service(state_dir: Path) -> subprocess.Popen[bytes]:
    conf = state_dir / "demo.conf"
    # The simulated ramdisks boot through no PXE side, so they have no callback token: this
    # simulation (on loopback) accepts tokenless reports. The real lab (QEMU VMs booted by
    # discoverd's PXE side) keeps the default and its agents send their tokens.
    conf.write_text("[discoverd]\nenabled = true\nservice_url = http://127.0.0.1:5050/v1\n"
                    "[introspection]\nallow_tokenless_reports = true\n"
                    "[processing]\nadd_ports = all\n")
    env = {**os.environ, "IRONSIGHT_STATE_DIR": str(state_dir)}
    log = open(state_dir / "service.log", "wb")  # noqa: SIM115 - lives as long as the process
    proc = subprocess.Popen([sys.executable, "-m", "ironsight.cli", "serve", "--config-file",
                             str(conf)], env=env, stdout=log, stderr=subprocess.STDOUT)

    def answering() -> bool:
        if proc.poll() is not None:
            raise SystemExit("ironsight serve exited early:\n"
                             + (state_dir / "service.log").read_text()[-2000:])
        return all(api_answers(url, timeout=1) for url in (BM_URL, DI_URL))

    if until(answering, 30, Poller(interval=0.2)):
        return proc
    proc.terminate()
    raise SystemExit("ironsight serve did not answer within 30 s")


def _print_history(api: ApiClient, node: str) -> None:
    """A node's history (GET /v1/nodes/NODE/history) with its inspection's steps (its
    timeline: `ironsight node history`): time and event, one line each."""
    history = api.get(node_path(node, "history"))["history"]
    attempts = api.get(node_path(node, "inspection", "attempts"))["attempts"]
    console.print(f"[bold]history of {node}[/bold]")
    for event in with_steps(history, attempts):
        step = event.get("event_type") == "inspection_step"
        text = event["event"].split(": ", 1)[-1] if step else event["event"]
        console.print(f"  {str(event['created_at'])[11:23]}  " + (
            f"  [dim]{escape(text)}[/dim]" if step else escape(text)))


def _cli(*args: str) -> int:
    return subprocess.call([sys.executable, "-m", "ironsight.cli", *args])


class Ramdisks(threading.Thread):
    """Plays each node's discovery ramdisk: once discoverd has powered a node on for
    inspection (`inspect wait`, power on), run the real agent against its machine tree."""

    def __init__(self, trees: dict[str, Path]) -> None:
        super().__init__(daemon=True)
        self.trees = trees
        self.stop = threading.Event()

    def run(self) -> None:
        pending = dict(self.trees)

        def all_booted() -> bool:
            if self.stop.is_set():
                return True
            for name, doc in read_nodes(api, list(pending)).items():
                if doc["provision_state"] == "inspect wait" and doc["power_state"] == "power on":
                    subprocess.run([sys.executable, "-m", "ironsight.agent", "--root",
                                    str(pending.pop(name)), "--callback-url",
                                    f"{DI_URL}/v1/continue"],
                                   check=False, stdout=subprocess.DEVNULL)
            return not pending

        with baremetal_client(BM_URL, timeout=10) as api:
            until(all_booted, 0, Poller(interval=0.2, sleep=self.stop.wait))


def real_lab_unavailable() -> str | None:
    """Why the QEMU lab cannot run here, or None when it can."""
    if os.geteuid() != 0:
        return "the lab needs root (network namespaces, taps, dnsmasq)"
    for tool in ("qemu-system-x86_64", "qemu-img", "ip", "dnsmasq", "ipmitool"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (make deps installs it)"
    if not Path("/dev/net/tun").exists():
        return "/dev/net/tun is missing (no tap devices)"
    return None


def run_lab() -> None:
    """The real demo: VMs PXE-boot the discovery ramdisk and are inspected, three powered
    over IPMI and, where libvirt can run, one more as a libvirt domain powered over SSH
    (pxe_ssh)."""
    from ironsight.lab import firmware, hypervisor, redfish_bmc
    from ironsight.lab.lifecycle import running
    from ironsight.lab.state import LabOptions, default_vms

    state_dir = Path(tempfile.mkdtemp(prefix="ironsight-demo-lab-"))
    no_libvirt = hypervisor.unavailable()
    no_redfish = no_libvirt or redfish_bmc.unavailable()
    # the IPMI VMs boot as servers do: SeaBIOS, UEFI and UEFI with Secure Boot, the UEFI ones
    # through their firmware's own PXE; the pxe_ssh domain (the 4th) SeaBIOS again
    kinds = [firmware.BIOS, firmware.UEFI, firmware.UEFI_SECUREBOOT]
    no_uefi = firmware.unavailable(firmware.UEFI_SECUREBOOT) or firmware.unavailable(
        firmware.UEFI)
    if no_uefi:
        kinds = [firmware.BIOS]
    # the 5th, where the Redfish emulator can run: a libvirt domain behind the lab's Redfish
    # BMC, booted from the inspection ISO as a virtual CD (no DHCP or PXE of ours)
    vms = (default_vms(3, firmware=kinds) if no_libvirt
           else default_vms(4, ssh=1, firmware=kinds) if no_redfish
           else default_vms(5, ssh=1, redfish=1, firmware=[*kinds, firmware.BIOS, firmware.BIOS]))
    console.print(f"[bold]ironsight demo[/bold]: a lab of {len(vms)} QEMU VMs (TCG), inspected "
                  "through the full PXE path: 3 behind virtual BMCs (IPMI)"
                  + ("" if no_libvirt else ", 1 a libvirt domain powered over SSH (pxe_ssh)")
                  + ("" if no_redfish else ", 1 behind a Redfish BMC booted from virtual "
                     "media"))
    if no_uefi:
        console.print(f"[yellow]no UEFI VM: {no_uefi}; going on with SeaBIOS ones[/yellow]")
    if no_libvirt:
        console.print(f"[yellow]no pxe_ssh VM: libvirt cannot run here ({no_libvirt}); "
                      "going on with the IPMI ones[/yellow]")
    elif no_redfish:
        console.print(f"[yellow]no Redfish VM: {no_redfish}[/yellow]")
    try:
        with running(LabOptions(state_dir=state_dir, vms=vms),
                     log=lambda line: console.print(f"  lab: {line}")) as lab:
            os.environ["IRONSIGHT_URL"] = lab.api_url
            names = [vm.spec.name for vm in vms]
            for vm in vms:
                console.print(f"  {vm.spec.name}: {vm.driver}"
                              f"{', ' + vm.boot_interface if vm.boot_interface else ''}, "
                              f"{vm.spec.firmware}, "
                              f"{vm.spec.cpus} vCPU, {vm.spec.memory_mb} MiB, "
                              f"{vm.spec.disk_gb} GiB disk, MAC {vm.spec.mac}")
            console.print("[bold]inspecting[/bold] (each VM powers on over IPMI, `virsh` "
                          "over SSH or Redfish, PXE-boots the ramdisk from discoverd: iPXE, or "
                          "on UEFI shim -> GRUB -> the signed kernel over TFTP; the Redfish one "
                          "boots the inspection ISO its BMC inserted, with a static address; "
                          "reports, powers off)")
            status = _cli("node", "inspect", *names, "--wait", "600")
            with lab.client() as api:
                for name in dict.fromkeys([names[0], names[2], names[-1]]):
                    _print_history(api, name)
            secure = [vm.spec.name for vm in vms
                      if vm.spec.firmware == firmware.UEFI_SECUREBOOT]
            for name in secure:  # what its ramdisk's kernel said of Secure Boot
                serial = lab.files(name).serial_log.read_text(errors="replace")
                lines = [line.strip() for line in serial.splitlines()
                         if "secureboot:" in line or "boot: uefi" in line]
                console.print(f"[bold]{name}'s console[/bold]: " + " | ".join(lines[-2:]))
            if status != 0:
                raise SystemExit(f"inspection failed; see above (service log: "
                                 f"{lab.serve_log})")
            _keep_running(f"{lab.api_url}/ui/")
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
    console.print("demo finished; the lab is down (VMs, BMCs, hypervisor, dnsmasq, namespace "
                  "removed).")


def main() -> None:
    for port in (6385, 5050):
        if not _port_free(port):
            raise SystemExit(f"port {port} is in use: stop the service running there (the "
                             "demo starts its own)")
    why = os.environ.get("IRONSIGHT_DEMO_SIMULATED") and "IRONSIGHT_DEMO_SIMULATED is set"
    why = why or real_lab_unavailable()
    try:
        if why is None:
            run_lab()
            return
        console.print(f"[yellow]The QEMU lab cannot run here ({why}); running the simulated "
                      "inspection instead (the real agent reads machine descriptions)."
                      "[/yellow]")
        run()
    except ClientError as exc:  # the demo's own calls (the CLI's report their errors)
        raise SystemExit(f"the bare-metal API failed: {exc}") from None


def run() -> None:
    """The simulated inspection (`main` has checked that the ports are free)."""
    state_dir = Path(tempfile.mkdtemp(prefix="ironsight-demo-"))
    password = secrets.token_urlsafe(12)
    console.print(f"[bold]ironsight demo[/bold]: state in {state_dir}")
    bmc_server = BmcServer.in_memory(1, "admin", password).start()
    bmc = bmc_server.bmcs[0]
    proc = _start_service(state_dir)
    os.environ["IRONSIGHT_URL"] = BM_URL
    try:
        with baremetal_client(BM_URL) as api:
            console.print(f"bare-metal API {BM_URL}, discoverd {DI_URL}, virtual BMC on "
                          f"udp/127.0.0.1:{bmc.port}, web console {BM_URL}/ui/")
            trees = {}
            for spec in MACHINES:
                body: dict[str, Any] = {"driver": "fake", "name": spec.name}
                if spec.name.startswith("ipmi"):
                    body = {"driver": "pxe_ipmitool", "name": spec.name, "driver_info": {
                        "ipmi_address": "127.0.0.1", "ipmi_port": bmc.port,
                        "ipmi_username": "admin", "ipmi_password": password}}
                node = api.post("/v1/nodes", body)
                api.post("/v1/ports", {"address": spec.pxe_mac, "node_uuid": node["uuid"]})
                trees[spec.name] = build_tree(state_dir / "machines" / spec.name, spec)
            console.print("enrolled 2 fake nodes and 1 pxe_ipmitool node, each with its PXE "
                          "port; managing them")
            names = [spec.name for spec in MACHINES]
            if _cli("node", "manage", *names, "--wait", "60") != 0:
                raise SystemExit("manage failed")
            console.print("[bold]inspecting[/bold]: discoverd boots each node into its "
                          "(simulated) discovery ramdisk; the real agent reports back")
            ramdisks = Ramdisks(trees)
            ramdisks.start()
            status = _cli("node", "inspect", *names, "--wait", "120")
            ramdisks.stop.set()
            machine = bmc.machine
            console.print(f"the IPMI node's machine, as its virtual BMC sees it: power "
                          f"{machine.power_state}, next boot "  # type: ignore[attr-defined]
                          f"{machine.get_boot_device().device}")
            _print_history(api, "ipmi-0")
            if status != 0:
                raise SystemExit("inspection failed; see above")
            _keep_running(f"{BM_URL}/ui/")
    finally:
        proc.terminate()
        proc.wait(10)
        bmc_server.stop()
        shutil.rmtree(state_dir, ignore_errors=True)
    console.print("demo finished; the services and the virtual BMC are stopped.")


if __name__ == "__main__":
    main()
