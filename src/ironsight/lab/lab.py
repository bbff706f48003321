"""The QEMU lab: real VMs that PXE-boot the discovery ramdisk, behind virtual BMCs.

Where things run (the design choice): everything the VMs talk to lives in the lab's network
namespace, the root namespace only gets published ports.

* Inside the namespace: the bridge and taps, the QEMU processes (started through
  `ip netns exec`, next to their taps), and `ironsight serve` (also `ip netns exec`) with
  discoverd's API on the bridge address (the VMs' callback and boot files) and the
  bare-metal API on the namespace's loopback, and discoverd's dnsmasq bound to the bridge.
  The virtual BMCs listen on the namespace's 127.0.0.1, which is the `ipmi_address` the
  nodes are enrolled with: the service's ipmitool and pyghmi run inside with it.
* In the root namespace: one lab daemon (`python -m ironsight.lab.lab daemon DIR`) that
  runs the BMCs (their sockets created inside the namespace) and the QEMU machines they
  drive, publishes the bare-metal and discoverd APIs on 127.0.0.1 through sockets it
  connects from inside the namespace, and also answers IPMI on root 127.0.0.1 ports, so
  `ironsight node ...`, `ipmitool -H 127.0.0.1` and the tests need no `ip netns exec`.

No interface joins the namespaces and nothing is routed: a VM can reach only what listens
on the bridge address. `down` ends the daemon and the service (the service ends dnsmasq),
then every process still in the namespace, then deletes it.

The state directory holds `lab.json` (the VMs, ports, pids; no secret), the BMC password
in a 0600 file (read by the daemon and ipmitool `-f`; never on a command line),
`ironsight.conf`, the service's database and logs, and `vms/` (disks, serial logs).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ironsight.common import logs
from ironsight.common.config import default_ramdisk_dir, default_state_dir
from ironsight.common.process import runs_with
from ironsight.lab import network
from ironsight.lab.bmc import BmcServer, VirtualBmc
from ironsight.lab.network import LabNetwork, PortForward
from ironsight.lab.qemu import QemuMachine, VmFiles, VmSpec

LOG = logging.getLogger(__name__)

STATE_FILE = "lab.json"
DAEMON_FILE = "daemon.json"
PASSWORD_FILE = "bmc-password"
CONF_FILE = "ironsight.conf"
SERVE_LOG = "serve.log"
DAEMON_LOG = "lab-daemon.log"
VMS_DIR = "vms"
FORMAT = 1

API_VERSION = {"X-OpenStack-Ironic-API-Version": "latest"}
NS_API_PORT = 6385  # inside the namespace, on its loopback
NS_DISCOVERD_PORT = 5050  # inside the namespace, on the bridge address
DRIVERS = ("pxe_ipmitool", "pxe_ipminative")
# (vCPUs, MiB, disk GiB) of VM 1, 2, 3, then again. Disks of 4 GiB at least: smaller ones
# are no root disk (IPA's rule, which the agent follows) and local_gb would be 0. Memory is
# small: TCG is CPU-bound and 256 MiB is plenty for the ramdisk.
SIZES = ((1, 256, 4), (2, 320, 5), (1, 288, 6))
START_TIMEOUT = 60.0
MANAGE_TIMEOUT = 90.0


class LabError(Exception):
    """The lab cannot be brought up (or down); the message says what to do."""


# --- what a lab is ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LabVm:
    spec: VmSpec
    driver: str
    bmc_port: int  # inside the namespace (the node's ipmi_port)
    enroll: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {"spec": self.spec.as_dict(), "driver": self.driver, "bmc_port": self.bmc_port,
                "enroll": self.enroll}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabVm:
        return cls(VmSpec.from_dict(data["spec"]), data["driver"], int(data["bmc_port"]),
                   bool(data.get("enroll", True)))


def default_vms(count: int, *, bmc_base_port: int = 6230) -> list[LabVm]:
    """`count` VMs named lab-1..N, drivers alternating, sizes cycling through SIZES."""
    vms = []
    for index in range(count):
        cpus, memory_mb, disk_gb = SIZES[index % len(SIZES)]
        number = index + 1
        mac = f"52:54:00:1a:{number >> 8:02x}:{number & 0xFF:02x}"
        spec = VmSpec(name=f"lab-{number}", mac=mac, tap=f"tap{number}", cpus=cpus,
                      memory_mb=memory_mb, disk_gb=disk_gb)
        vms.append(LabVm(spec, DRIVERS[index % len(DRIVERS)], bmc_base_port + index))
    return vms


@dataclass
class LabOptions:
    """What `up` is asked for."""

    state_dir: Path
    vms: list[LabVm]
    network: LabNetwork = field(default_factory=LabNetwork)
    ramdisk_dir: Path | None = None  # None: the default of `ironsight ramdisk build`
    api_port: int = 6385  # published on root 127.0.0.1; 0: any free port
    discoverd_port: int = 5050
    bmc_user: str = "admin"
    # The BMCs also answer on root 127.0.0.1: on the same port numbers as inside (when free),
    # or, False, on any free ports (tests running next to other users of those ports).
    bmc_same_ports: bool = True
    # [section] option = value merged into the service's configuration (tests, benchmarks)
    extra_conf: dict[str, dict[str, str]] = field(default_factory=dict)
    manage: bool = True  # move the enrolled nodes to manageable


def default_lab_dir() -> Path:
    return Path(default_state_dir()) / "lab"


# --- a running lab ---------------------------------------------------------------------------

class Lab:
    """A lab as its state directory describes it (up or not)."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir.resolve()
        self.state: dict[str, Any] = _read_json(self.state_dir / STATE_FILE) or {}

    @property
    def exists(self) -> bool:
        return bool(self.state)

    @property
    def network(self) -> LabNetwork:
        return LabNetwork(**self.state["network"]) if self.state else LabNetwork()

    @property
    def vms(self) -> list[LabVm]:
        return [LabVm.from_dict(vm) for vm in self.state.get("vms", [])]

    def vm(self, name: str) -> LabVm:
        for vm in self.vms:
            if vm.spec.name == name:
                return vm
        raise KeyError(name)

    @property
    def api_url(self) -> str:
        return str(self.state["api_url"])

    @property
    def discoverd_url(self) -> str:
        return str(self.state["discoverd_url"])

    @property
    def password_file(self) -> Path:
        return self.state_dir / PASSWORD_FILE

    @property
    def serve_log(self) -> Path:
        return self.state_dir / SERVE_LOG

    @property
    def daemon_log(self) -> Path:
        return self.state_dir / DAEMON_LOG

    def files(self, name: str) -> VmFiles:
        return VmFiles(self.state_dir / VMS_DIR, name)

    def client(self, timeout: float = 30.0) -> httpx.Client:
        """A client of the bare-metal API (latest microversion), through the published port."""
        return httpx.Client(base_url=self.api_url, headers=API_VERSION, timeout=timeout)

    def ipmitool(self, name: str, *args: str, timeout: float = 30.0
                 ) -> subprocess.CompletedProcess[str]:
        """ipmitool against a VM's BMC, from inside the namespace as the service runs it."""
        vm = self.vm(name)
        argv = [*self.network.prefix, "ipmitool", "-I", "lanplus", "-H", "127.0.0.1",
                "-p", str(vm.bmc_port), "-U", self.state["bmc_user"],
                "-f", str(self.password_file), *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False)

    def qemu_pid(self, name: str) -> int | None:
        """The pid of the VM's QEMU if it runs (from its pid file, checked)."""
        files = self.files(name)
        try:
            pid = int(files.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if runs_with(pid, str(files.pid_file).encode()) else None

    def pxe_lines(self, pattern: str = "") -> list[str]:
        """discoverd's PXE and dnsmasq log lines (leases, refusals), optionally filtered."""
        try:
            text = self.serve_log.read_text(errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines()
                if ("ironsight.discoverd.pxe" in line) and pattern in line]

    def process(self, role: str) -> int | None:
        """The pid of the lab's `daemon` or `serve` if it still runs."""
        pid = self.state.get("pids", {}).get(role)
        if not isinstance(pid, int):
            return None
        return pid if runs_with(pid, str(self.state_dir).encode()) else None

    def save(self) -> None:
        _write_json(self.state_dir / STATE_FILE, self.state)


# --- up -----------------------------------------------------------------------------------------

Log = Callable[[str], None]


def up(options: LabOptions, log: Log = print) -> Lab:
    """Bring a lab up; on any failure, take down whatever was started and re-raise."""
    _check_host()
    state_dir = options.state_dir.resolve()
    old = Lab(state_dir)
    if old.process("daemon") or old.process("serve") or network.exists(options.network):
        raise LabError(f"a lab is already up (state in {state_dir}, namespace "
                       f"{options.network.namespace}): `ironsight lab down` first")
    _reset_state_dir(state_dir)
    lab = Lab(state_dir)
    try:
        _up(lab, options, log)
    except BaseException:
        log("lab up failed: taking down what was started")
        down(state_dir, log=lambda _: None, fallback_network=options.network)
        raise
    return lab


def _up(lab: Lab, options: LabOptions, log: Log) -> None:
    began = time.monotonic()
    ramdisk_dir = (options.ramdisk_dir or default_ramdisk_dir()).resolve()
    log(f"ramdisk: {ramdisk_dir}")
    _build_ramdisk(ramdisk_dir, log)

    password = secrets.token_urlsafe(12)  # 16 characters: ipmitool lanplus takes 20 at most
    fd = os.open(lab.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(password + "\n")
    net = options.network
    lab.state = {
        "format": FORMAT, "network": net.__dict__.copy(), "bmc_user": options.bmc_user,
        "ramdisk_dir": str(ramdisk_dir), "vms": [vm.as_dict() for vm in options.vms],
        "pids": {}, "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "api_port_wanted": options.api_port, "discoverd_port_wanted": options.discoverd_port,
        "bmc_same_ports": options.bmc_same_ports,
    }
    lab.save()

    log(f"network: namespace {net.namespace}, bridge {net.bridge} {net.ipv4} {net.ipv6}, "
        f"{len(options.vms)} taps")
    network.create(net, [vm.spec.tap for vm in options.vms])

    log("starting the lab daemon (virtual BMCs, QEMU, published ports)")
    lab.state["pids"]["daemon"] = _spawn(
        [sys.executable, "-m", "ironsight.lab.lab", "daemon", str(lab.state_dir)],
        lab.daemon_log)
    lab.save()
    daemon = _wait_daemon(lab)
    lab.state.update(api_url=f"http://127.0.0.1:{daemon['api_port']}",
                     discoverd_url=f"http://127.0.0.1:{daemon['discoverd_port']}",
                     bmc_root_ports=daemon["bmc_root_ports"])
    lab.save()

    conf = lab.state_dir / CONF_FILE
    conf.write_text(service_config(lab.state_dir, net, ramdisk_dir, options.extra_conf))
    log("starting `ironsight serve` inside the namespace")
    lab.state["pids"]["serve"] = _spawn(
        [*net.prefix, sys.executable, "-m", "ironsight.cli", "serve", "--config-file",
         str(conf)], lab.serve_log)
    lab.save()
    _wait_service(lab)

    enrolled = [vm for vm in options.vms if vm.enroll]
    log(f"enrolling {len(enrolled)} nodes")
    with lab.client() as client:
        for vm in enrolled:
            lab.state.setdefault("nodes", {})[vm.spec.name] = enroll(
                client, vm, options.bmc_user, password)
        lab.save()
        if options.manage and enrolled:
            names = [vm.spec.name for vm in enrolled]
            for name in names:
                provision(client, name, "manage")
            wait_states(client, names, {"manageable"}, MANAGE_TIMEOUT, failed={"enroll"})
    log(f"lab up in {time.monotonic() - began:.1f} s")


def _check_host() -> None:
    if os.geteuid() != 0:
        raise LabError("the lab needs root (network namespaces, taps)")
    for program, package in (("qemu-system-x86_64", "qemu-system-x86"),
                             ("qemu-img", "qemu-utils"), ("dnsmasq", "dnsmasq-base"),
                             ("ip", "iproute2"), ("ipmitool", "ipmitool")):
        if shutil.which(program) is None:
            raise LabError(f"{program} is not installed (apt-get install {package})")
    if not Path("/usr/lib/ipxe/qemu/efi-virtio.rom").exists():
        raise LabError("QEMU's iPXE ROMs are missing (apt-get install ipxe-qemu)")


def _reset_state_dir(state_dir: Path) -> None:
    """A fresh service database and fresh VMs at every `up`; the ramdisk cache stays. Only
    in a new directory or a lab's: never wipe the databases of a real service."""
    state_dir.mkdir(parents=True, exist_ok=True)
    foreign = [p.name for p in state_dir.iterdir() if p.name != "ramdisk"]
    if foreign and not (state_dir / STATE_FILE).exists():
        raise LabError(f"{state_dir} is not empty and holds no lab ({', '.join(foreign[:5])}"
                       "): choose another --state-dir")
    for name in (STATE_FILE, DAEMON_FILE, PASSWORD_FILE, CONF_FILE, SERVE_LOG, DAEMON_LOG,
                 "ironsight.sqlite", "discoverd.sqlite"):
        for path in state_dir.glob(name + "*"):
            path.unlink()
    for name in (VMS_DIR, "pxe", "ramdisk-logs"):
        shutil.rmtree(state_dir / name, ignore_errors=True)
    (state_dir / VMS_DIR).mkdir()


def _build_ramdisk(ramdisk_dir: Path, log: Log) -> None:
    from ironsight.ramdisk import RamdiskError
    from ironsight.ramdisk.build import build

    try:
        result = build(ramdisk_dir, log=log)
    except RamdiskError as exc:
        raise LabError(f"cannot build the ramdisk: {exc}") from None
    log(f"ramdisk {'built' if result.rebuilt else 'up to date'} "
        f"({result.timings.get('total', 0):.1f} s)")


def service_config(state_dir: Path, net: LabNetwork, ramdisk_dir: Path,
                   extra: dict[str, dict[str, str]] | None = None) -> str:
    """`ironsight serve`'s configuration inside the namespace."""
    di_url = f"http://{net.address}:{NS_DISCOVERD_PORT}"
    sections: dict[str, dict[str, str]] = {
        "DEFAULT": {"state_dir": str(state_dir)},
        "api": {"host": "127.0.0.1", "port": str(NS_API_PORT)},
        "discoverd": {"enabled": "true", "service_url": f"{di_url}/v1"},
        "introspection": {"host": net.address, "port": str(NS_DISCOVERD_PORT),
                          "ironic_url": f"http://127.0.0.1:{NS_API_PORT}", "timeout": "900"},
        "pxe": {"enabled": "true", "interface": net.bridge, "dhcp_range": net.dhcp_range(),
                "http_url": di_url, "ramdisk_dir": str(ramdisk_dir),
                "kernel_params": "console=ttyS0,115200"},
        "pxe_filter": {"driver": "dnsmasq", "sync_period": "5"},
    }
    for section, values in (extra or {}).items():
        sections.setdefault(section, {}).update(values)
    out = ["# Written by `ironsight lab up`; rewritten at each up."]
    for section, values in sections.items():
        out.append(f"[{section}]")
        out += [f"{key} = {value}" for key, value in values.items()]
        out.append("")
    return "\n".join(out)


# Children started by this process, kept so that they are reaped (and not reported as
# "still running" when garbage-collected) in long-lived callers such as the tests.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _spawn(argv: Sequence[str], log_path: Path) -> int:
    """A background process in its own session, its output in `log_path`."""
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    _CHILDREN[proc.pid] = proc
    return proc.pid


def _alive_or_fail(lab: Lab, role: str, log_path: Path) -> None:
    # our child: poll it (its cmdline is ours until it has exec'd, so no cmdline check)
    child = _CHILDREN.get(lab.state["pids"][role])
    if child is None or child.poll() is not None:
        tail = log_tail(log_path, 40)
        raise LabError(f"the lab's {role} exited during start-up; {log_path}:\n{tail}")


def _wait_daemon(lab: Lab) -> dict[str, Any]:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        data = _read_json(lab.state_dir / DAEMON_FILE)
        if data and data.get("pid") == lab.state["pids"]["daemon"]:
            return data
        _alive_or_fail(lab, "daemon", lab.daemon_log)
        time.sleep(0.1)
    raise LabError(f"the lab daemon did not start within {START_TIMEOUT:.0f} s; "
                   f"see {lab.daemon_log}")


def _wait_service(lab: Lab) -> None:
    """Both APIs answer and dnsmasq runs (it starts after the PXE filter's first sync)."""
    deadline = time.monotonic() + START_TIMEOUT
    pending = [f"{lab.api_url}/v1", f"{lab.discoverd_url}/v1"]
    while time.monotonic() < deadline:
        _alive_or_fail(lab, "serve", lab.serve_log)
        if pending:
            try:
                httpx.get(pending[0], timeout=2).raise_for_status()
                pending.pop(0)
                continue
            except httpx.HTTPError:
                pass
        elif lab.pxe_lines("dnsmasq started"):
            return
        time.sleep(0.2)
    raise LabError(f"`ironsight serve` was not ready within {START_TIMEOUT:.0f} s "
                   f"({'no dnsmasq' if not pending else 'waiting for ' + pending[0]}); "
                   f"see {lab.serve_log}:\n{log_tail(lab.serve_log, 40)}")


# --- the bare-metal API ------------------------------------------------------------------------

def _call(client: httpx.Client, method: str, path: str, body: Any = None) -> Any:
    resp = client.request(method, path, json=body)
    if resp.status_code >= 400:
        raise LabError(f"{method} {path}: HTTP {resp.status_code} {resp.text}")
    return resp.json() if resp.content else None


def enroll(client: httpx.Client, vm: LabVm, user: str, password: str) -> str:
    """The node of a VM, with its PXE port and its BMC in driver_info; returns its UUID."""
    node = _call(client, "POST", "/v1/nodes", {
        "name": vm.spec.name, "driver": vm.driver,
        "driver_info": {"ipmi_address": "127.0.0.1", "ipmi_port": vm.bmc_port,
                        "ipmi_username": user, "ipmi_password": password}})
    _call(client, "POST", "/v1/ports", {"address": vm.spec.mac, "node_uuid": node["uuid"]})
    return str(node["uuid"])


def provision(client: httpx.Client, node: str, target: str) -> None:
    _call(client, "PUT", f"/v1/nodes/{node}/states/provision", {"target": target})


def wait_states(client: httpx.Client, nodes: Iterable[str], wanted: set[str],
                timeout: float, *, failed: set[str] | None = None,
                settled: Callable[[dict[str, Any]], bool] | None = None,
                poll: float = 0.5) -> dict[str, dict[str, Any]]:
    """Poll until every node is in one of `wanted` (and `settled`); fail at once when one
    reaches a `failed` state, or at the deadline, naming the nodes, states and errors."""
    pending = list(nodes)
    done: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    while pending:
        last: dict[str, dict[str, Any]] = {}
        for name in list(pending):
            doc = last[name] = _call(client, "GET", f"/v1/nodes/{name}")
            if doc["provision_state"] in wanted and (settled is None or settled(doc)):
                done[name] = doc
                pending.remove(name)
            elif failed and doc["provision_state"] in failed:
                raise LabError(f"node {name} is {doc['provision_state']}: "
                               f"{doc.get('last_error')}")
        if not pending:
            break
        if time.monotonic() > deadline:
            states = {name: (last[name]["provision_state"], last[name].get("last_error"))
                      for name in pending}
            raise LabError(f"nodes not {'/'.join(sorted(wanted))} after {timeout:.0f} s: "
                           f"{states}")
        time.sleep(poll)
    return done


# --- status ------------------------------------------------------------------------------------

def status(state_dir: Path) -> dict[str, Any]:
    """What runs and what the service says about each node (for `ironsight lab status`)."""
    lab = Lab(state_dir)
    if not lab.exists:
        return {"up": False, "state_dir": str(lab.state_dir)}
    nodes: dict[str, dict[str, Any]] = {}
    api_error = None
    serve_pid = lab.process("serve")
    if serve_pid and lab.state.get("api_url"):
        try:
            with lab.client(timeout=5) as client:
                for name in lab.state.get("nodes", {}):
                    nodes[name] = _call(client, "GET", f"/v1/nodes/{name}")
        except (httpx.HTTPError, LabError) as exc:
            api_error = str(exc)
    vms = []
    for vm in lab.vms:
        node = nodes.get(vm.spec.name, {})
        props = node.get("properties") or {}
        vms.append({
            **vm.spec.as_dict(), "driver": vm.driver if vm.enroll else None,
            "bmc_port": vm.bmc_port,
            "bmc_root_port": lab.state.get("bmc_root_ports", {}).get(vm.spec.name),
            "qemu_pid": lab.qemu_pid(vm.spec.name),
            "provision_state": node.get("provision_state"),
            "power_state": node.get("power_state"),
            "found": {key: props.get(key) for key in ("cpus", "memory_mb", "local_gb")
                      if key in props},
        })
    daemon_pid = lab.process("daemon")
    return {
        "up": bool(daemon_pid and serve_pid),
        "state_dir": str(lab.state_dir), "namespace": lab.network.namespace,
        "namespace_exists": network.exists(lab.network),
        "daemon_pid": daemon_pid, "serve_pid": serve_pid,
        "api_url": lab.state.get("api_url"), "discoverd_url": lab.state.get("discoverd_url"),
        "api_error": api_error, "vms": vms,
    }


# --- down --------------------------------------------------------------------------------------

def down(state_dir: Path, *, log: Log = print, fallback_network: LabNetwork | None = None,
         grace: float = 15.0) -> None:
    """Stop everything the lab started and delete its namespace. Idempotent. Without a lab
    state, `fallback_network`'s namespace (default: ironsight-lab) is deleted."""
    lab = Lab(state_dir)
    net = lab.network if lab.exists else (fallback_network or LabNetwork())
    for role in ("serve", "daemon"):  # serve first: it ends dnsmasq and stops using the BMCs
        pid = lab.process(role)
        if pid is None:
            continue
        log(f"stopping the lab's {role} (pid {pid})")
        _terminate(pid, grace)
    leftovers = network.destroy(net)  # [] when the namespace is already gone
    if leftovers:
        log(f"ended {len(leftovers)} processes left in namespace {net.namespace}: {leftovers}")
    if lab.exists:
        lab.state["pids"] = {}
        lab.save()
    log(f"lab down (namespace {net.namespace} deleted)")


def _terminate(pid: int, grace: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _running(pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _running(pid: int) -> bool:
    """Alive and not a zombie (an ended child of ours that nobody reaped yet)."""
    child = _CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        del _CHILDREN[pid]
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


# --- the daemon: BMCs, QEMU machines and published ports -------------------------------------

def run_daemon(state_dir: Path) -> int:
    """Serve the lab's BMCs and published ports until SIGTERM, then power every VM off."""
    logs.setup()
    lab = Lab(state_dir)
    net = lab.network
    user = str(lab.state["bmc_user"])
    password = lab.password_file.read_text().rstrip("\n")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    machines = {vm.spec.name: QemuMachine(vm.spec, lab.files(vm.spec.name), prefix=net.prefix)
                for vm in lab.vms}
    bmcs: list[VirtualBmc] = []
    forwards: list[PortForward] = []
    server: BmcServer | None = None
    try:
        with network.entered(net.namespace):
            for vm in lab.vms:
                bmcs.append(VirtualBmc(machines[vm.spec.name], user, password,
                                       address="127.0.0.1", port=vm.bmc_port,
                                       name=f"{vm.spec.name}-bmc"))
        root_ports = {}
        same = bool(lab.state.get("bmc_same_ports", True))
        for vm in lab.vms:  # the same BMC, reachable from the root namespace
            bmc = _root_bmc(machines[vm.spec.name], vm, user, password, same)
            bmcs.append(bmc)
            root_ports[vm.spec.name] = bmc.port
        forwards.append(_publish(net.namespace, ("127.0.0.1", NS_API_PORT),
                                 int(lab.state.get("api_port_wanted", 0))))
        forwards.append(_publish(net.namespace, (net.address, NS_DISCOVERD_PORT),
                                 int(lab.state.get("discoverd_port_wanted", 0))))
        server = BmcServer(bmcs).start()
        _write_json(lab.state_dir / DAEMON_FILE, {
            "pid": os.getpid(), "api_port": forwards[0].address[1],
            "discoverd_port": forwards[1].address[1], "bmc_root_ports": root_ports})
        LOG.info("lab daemon ready: %d BMCs in namespace %s on 127.0.0.1:%s, API on %s, "
                 "discoverd on %s", len(machines), net.namespace,
                 ",".join(str(vm.bmc_port) for vm in lab.vms),
                 forwards[0].address, forwards[1].address)
        while not stop.wait(1.0):
            pass
        LOG.info("stopping: powering the VMs off")
    finally:
        _power_all_off(machines.values())
        if server is not None:
            server.stop()
        else:
            for bmc in bmcs:
                bmc.close()
        for forward in forwards:
            forward.close()
    return 0


def _root_bmc(machine: QemuMachine, vm: LabVm, user: str, password: str,
              same: bool) -> VirtualBmc:
    """On the same port number as inside when wanted and free, else on any free port."""
    for port in (vm.bmc_port, 0) if same else (0,):
        try:
            return VirtualBmc(machine, user, password, address="127.0.0.1", port=port,
                              name=f"{vm.spec.name}-bmc")
        except OSError:
            continue
    raise LabError(f"no UDP port for {vm.spec.name}'s BMC")  # port 0 cannot fail


def _publish(namespace: str, target: tuple[str, int], port: int) -> PortForward:
    try:
        return PortForward(namespace, target, ("127.0.0.1", port)).start()
    except OSError as exc:
        raise LabError(f"cannot publish {target[0]}:{target[1]} on 127.0.0.1:{port}: "
                       f"{exc.strerror} (another service there? choose another port)") from None


def _power_all_off(machines: Iterable[QemuMachine]) -> None:
    threads = [threading.Thread(target=_power_off_quietly, args=(m,)) for m in machines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)


def _power_off_quietly(machine: QemuMachine) -> None:
    try:
        machine.power_off()
    except Exception:
        LOG.exception("%s: power off failed; killing QEMU", machine.name)
        machine.kill()


# --- small helpers ------------------------------------------------------------------------------

def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def log_tail(path: Path, lines: int = 60) -> str:
    """The last `lines` lines of a log file, or "(no log)"."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@contextlib.contextmanager
def running(options: LabOptions, log: Log = print) -> Iterator[Lab]:
    """A lab for the duration of a block (tests, benchmarks): always taken down."""
    lab = up(options, log)
    try:
        yield lab
    finally:
        down(options.state_dir, log=log)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "daemon":
        return run_daemon(Path(args[1]))
    print("usage: python -m ironsight.lab.lab daemon STATE_DIR  (started by `ironsight lab "
          "up`)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
