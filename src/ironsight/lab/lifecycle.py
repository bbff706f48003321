"""Bringing a lab up and down, telling what runs, and pressing a VM's power button
(`ironsight lab up|status|down|power-on`).

`up` is all or nothing: a lab half up holds a namespace, taps and processes that the next
`up` would trip over, so any failure takes down whatever was started before re-raising.
`down` is idempotent for the same reason: it must clean up after any earlier failure.

With unknown VMs (`LabVm.unknown`), `up` also writes their delivery manifest
(`manifest.py`) and turns the service's `[auto_discovery]` on; it enrols none of them and
powers none on: `power_on` does, through the VM's BMC, as a person would.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ironsight.client.http import ApiError, ClientError, api_answers, node_path
from ironsight.client.wait import Poller, until
from ironsight.common.config import ProcessingSection, default_ramdisk_dir
from ironsight.common.files import private_dir
from ironsight.lab import firmware, hypervisor, manifest, network, redfish_bmc
from ironsight.lab.hardware import describe
from ironsight.lab.hypervisor import Hypervisor, HypervisorDirs, HypervisorError
from ironsight.lab.network import LabNetwork
from ironsight.lab.nodes import RedfishAccess, enroll, provision, wait_states
from ironsight.lab.pki import make_pki
from ironsight.lab.processes import child_exited, log_tail, spawn, terminate
from ironsight.lab.qemu import HardwareError, effective_spec, ensure_disks
from ironsight.lab.redfish_bmc import VMEDIA_POOL, RedfishEmulator
from ironsight.lab.state import (
    CONF_FILE,
    DAEMON_FILE,
    DAEMON_LOG,
    FORMAT,
    HYPERVISOR_DIR,
    MANIFEST_FILE,
    NS_API_PORT,
    NS_DISCOVERD_PORT,
    NS_RAMDISK_PORT,
    PASSWORD_FILE,
    REDFISH_DIR,
    REDFISH_DRIVER,
    REDFISH_PORT,
    SERVE_LOG,
    STATE_FILE,
    UNKNOWN_DRIVER,
    VMS_DIR,
    Lab,
    LabError,
    LabOptions,
    LabVm,
    read_json,
)

START_TIMEOUT = 60.0
MANAGE_TIMEOUT = 90.0

Log = Callable[[str], None]


# --- up -----------------------------------------------------------------------------------------

def up(options: LabOptions, log: Log = print) -> Lab:
    """Bring a lab up; on any failure, take down whatever was started and re-raise."""
    _check_host(options.vms)
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
    lab.write_password(password)
    net = options.network
    lab.state = {
        "format": FORMAT, "network": net.__dict__.copy(), "bmc_user": options.bmc_user,
        "ramdisk_dir": str(ramdisk_dir), "vms": [vm.as_dict() for vm in options.vms],
        "pids": {}, "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "api_port_wanted": options.api_port, "discoverd_port_wanted": options.discoverd_port,
        "bmc_same_ports": options.bmc_same_ports,
    }
    unknown = [vm for vm in options.vms if vm.unknown]
    if unknown:
        lab.state["manifest"] = str(manifest.write(
            lab.manifest_file, unknown, bmc_user=options.bmc_user,
            password_file=lab.password_file))
        log(f"{len(unknown)} unknown VMs (not enrolled, off until `ironsight lab power-on "
            f"NAME`): {', '.join(vm.spec.name for vm in unknown)}; their delivery manifest: "
            f"{lab.manifest_file}")
    lab.save()

    log(f"network: namespace {net.namespace}, bridge {net.bridge} {net.ipv4} {net.ipv6}, "
        f"{len(options.vms)} taps")
    network.create(net, [vm.spec.tap for vm in options.vms])

    ssh_key = _start_hypervisor(lab, options, log)
    redfish = _start_redfish(lab, options, log)

    log("starting the lab daemon (virtual BMCs, QEMU, published ports)")
    lab.state["pids"]["daemon"] = spawn(
        [sys.executable, "-m", "ironsight.lab.daemon", str(lab.state_dir)], lab.daemon_log)
    lab.save()
    daemon = _wait_daemon(lab)
    lab.state.update(api_url=f"http://127.0.0.1:{daemon['api_port']}",
                     discoverd_url=f"http://127.0.0.1:{daemon['discoverd_port']}",
                     bmc_root_ports=daemon["bmc_root_ports"])
    lab.save()

    conf = lab.state_dir / CONF_FILE
    extra = dict(options.extra_conf)
    if ssh_key is not None:  # the conductor checks the hypervisor's host key
        extra["ssh"] = {"known_hosts": str(HypervisorDirs(lab.hypervisor_dir).known_hosts),
                        **extra.get("ssh", {})}
    conf.write_text(service_config(lab.state_dir, net, ramdisk_dir, extra,
                                   discovery_driver=UNKNOWN_DRIVER if unknown else None))
    log("starting `ironsight serve` inside the namespace")
    lab.state["pids"]["serve"] = spawn(
        [*net.prefix, sys.executable, "-m", "ironsight.cli", "serve", "--config-file",
         str(conf)], lab.serve_log)
    lab.save()
    _wait_service(lab)

    enrolled = [vm for vm in options.vms if vm.enroll]
    log(f"enrolling {len(enrolled)} nodes")
    with lab.client() as api:
        for vm in enrolled:
            lab.state.setdefault("nodes", {})[vm.spec.name] = enroll(
                api, vm, options.bmc_user, password, ssh_key, redfish, net)
        lab.save()
        if options.manage and enrolled:
            names = [vm.spec.name for vm in enrolled]
            for name in names:
                provision(api, name, "manage")
            wait_states(api, names, {"manageable"}, MANAGE_TIMEOUT, failed={"enroll"})
    log(f"lab up in {time.monotonic() - began:.1f} s")


def _start_hypervisor(lab: Lab, options: LabOptions, log: Log) -> str | None:
    """The lab's libvirtd and sshd, with a domain per pxe_ssh or redfish VM, when there are
    such VMs; the private key the nodes log in with (None: no such VM)."""
    under_libvirt = [vm for vm in options.vms if vm.under_libvirt]
    if not under_libvirt:
        return None
    why = hypervisor.unavailable()
    if why:
        raise LabError(f"pxe_ssh and redfish VMs need libvirt, which cannot run here: {why}")
    log(f"starting the lab's hypervisor (libvirtd, sshd) for {len(under_libvirt)} libvirt "
        "VMs")
    hv = Hypervisor(lab.hypervisor_dir)
    try:
        lab.state["pids"]["hypervisor"] = hv.start(options.network.namespace)
        lab.save()
        for vm in under_libvirt:
            files = lab.files(vm.spec.name)
            ensure_disks(vm.spec, files)
            hv.define(vm.spec, files)
    except HypervisorError as exc:
        raise LabError(str(exc)) from None
    return hv.dirs.client_key.read_text()


def _start_redfish(lab: Lab, options: LabOptions, log: Log) -> RedfishAccess | None:
    """The lab's Redfish BMC in front of its libvirt domains, when there are redfish VMs:
    sushy-tools' emulator in the namespace on its loopback, HTTPS with a CA of the lab's own,
    the lab's BMC user and password (bcrypt). None: no such VM."""
    if not any(vm.driver == REDFISH_DRIVER for vm in options.vms):
        return None
    why = redfish_bmc.unavailable()
    if why:
        raise LabError(f"redfish VMs need sushy-tools' Redfish emulator: {why}")
    lab.redfish_dir.mkdir(parents=True, exist_ok=True)
    pki = make_pki(lab.redfish_dir, days=30)
    password = lab.password_file.read_text().strip()
    # the media the BMC inserts land in a storage pool of the lab's libvirtd
    Hypervisor(lab.hypervisor_dir).ensure_pool(VMEDIA_POOL)
    emulator = RedfishEmulator(lab.redfish_dir, HypervisorDirs(lab.hypervisor_dir).uri,
                               users={options.bmc_user: password}, cert=pki.cert_file,
                               key=pki.key_file, port=REDFISH_PORT, storage_pool=VMEDIA_POOL)
    log(f"starting the lab's Redfish BMC (sushy-tools' emulator) on https://127.0.0.1:"
        f"{REDFISH_PORT} inside the namespace")
    net = options.network
    lab.state["pids"]["redfish"] = spawn([*net.prefix, *emulator.command()], emulator.log)
    lab.save()
    probe = [*net.prefix, sys.executable, "-c",
             f"import socket; socket.create_connection(('127.0.0.1', {REDFISH_PORT}), 1)"]
    deadline = time.monotonic() + 60
    while subprocess.run(probe, capture_output=True, timeout=30).returncode != 0:
        if time.monotonic() > deadline:
            raise LabError(f"the lab's Redfish BMC did not answer within 60 s:\n"
                           f"{log_tail(emulator.log, 20)}")
        time.sleep(0.2)
    return RedfishAccess(url=f"https://127.0.0.1:{REDFISH_PORT}", ca_file=pki.ca_file)


def _check_host(vms: Sequence[LabVm]) -> None:
    """Refuse at once what the VMs could not run with (before anything is created)."""
    if os.geteuid() != 0:
        raise LabError("the lab needs root (network namespaces, taps)")
    for program, package in (("qemu-system-x86_64", "qemu-system-x86"),
                             ("qemu-img", "qemu-utils"), ("dnsmasq", "dnsmasq-base"),
                             ("ip", "iproute2"), ("ipmitool", "ipmitool")):
        if shutil.which(program) is None:
            raise LabError(f"{program} is not installed (apt-get install {package})")
    for kind in firmware.KINDS:  # SeaBIOS's iPXE ROM, OVMF's files
        why = firmware.unavailable(kind)
        if why and any(vm.spec.firmware == kind for vm in vms):
            raise LabError(f"the {kind} VMs cannot run here: {why}")
    why = network.nft_unavailable()
    if why and any(vm.spec.ipv6_only for vm in vms):
        raise LabError(f"the IPv6-only VMs cannot run here: {why}")


def _reset_state_dir(state_dir: Path) -> None:
    """A fresh service database and fresh VMs at every `up`; the ramdisk cache stays. Only
    in a new directory or a lab's: never wipe the databases of a real service."""
    private_dir(state_dir)
    foreign = [p.name for p in state_dir.iterdir() if p.name != "ramdisk"]
    if foreign and not (state_dir / STATE_FILE).exists():
        raise LabError(f"{state_dir} is not empty and holds no lab ({', '.join(foreign[:5])}"
                       "): choose another --state-dir")
    for name in (STATE_FILE, DAEMON_FILE, PASSWORD_FILE, CONF_FILE, SERVE_LOG, DAEMON_LOG,
                 MANIFEST_FILE, "ironsight.sqlite", "discoverd.sqlite"):
        for path in state_dir.glob(name + "*"):
            path.unlink()
    for name in (VMS_DIR, "pxe", "ramdisk-logs", HYPERVISOR_DIR, REDFISH_DIR):
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


LLDP_HOOKS = ("parse-lldp", "local-link-connection")


def service_config(state_dir: Path, net: LabNetwork, ramdisk_dir: Path,
                   extra: dict[str, dict[str, str]] | None = None, *,
                   discovery_driver: str | None = None) -> str:
    """`ironsight serve`'s configuration inside the namespace; with `discovery_driver` (the
    lab has unknown VMs), `[auto_discovery]` on with that driver."""
    # The recommended deployment's shape: discoverd's API on the namespace's loopback, only its
    # ramdisk side (the callback, the boot files) on the lab bridge the VMs reach.
    ramdisk_url = f"http://{net.address}:{NS_RAMDISK_PORT}"
    # IPv6-only VMs: DHCPv6 with boot file URLs, the ramdisk side on the IPv6 address too.
    # Only then: iPXE (the BIOS VMs) would otherwise also configure itself over DHCPv6.
    ipv6 = bool(net.ipv6_only_taps)
    sections: dict[str, dict[str, str]] = {
        "DEFAULT": {"state_dir": str(state_dir)},
        "api": {"host": "127.0.0.1", "port": str(NS_API_PORT)},
        "discoverd": {"enabled": "true",
                      "service_url": f"http://127.0.0.1:{NS_DISCOVERD_PORT}/v1"},
        # virtual media: the Redfish BMC (the emulator, on the namespace's loopback) fetches
        # the inspection ISO from the API listener
        "redfish": {"vmedia_url": f"http://127.0.0.1:{NS_API_PORT}"},
        "introspection": {"host": "127.0.0.1", "port": str(NS_DISCOVERD_PORT),
                          "ramdisk_host": f"{net.address},{net.address6}" if ipv6
                          else net.address, "ramdisk_port": str(NS_RAMDISK_PORT),
                          "ironic_url": f"http://127.0.0.1:{NS_API_PORT}", "timeout": "900"},
        "pxe": {"enabled": "true", "interface": net.bridge, "dhcp_range": net.dhcp_range(),
                "http_url": ramdisk_url, "ramdisk_dir": str(ramdisk_dir),
                "kernel_params": "console=ttyS0,115200 ipa-collect-lldp=1",
                **({"dhcp_range_ipv6": net.dhcp_range_ipv6(),
                    "http_url_ipv6": f"http://[{net.address6}]:{NS_RAMDISK_PORT}"}
                   if ipv6 else {})},
        "pxe_filter": {"driver": "dnsmasq", "sync_period": "5"},
        # the lab's switch announces each VM's port (lldp.py): into each port's
        # local_link_connection, and parsed into the stored data for rules
        "processing": {"processing_hooks": ",".join(
            [*ProcessingSection().processing_hooks, *LLDP_HOOKS])},
    }
    if discovery_driver is not None:
        sections["auto_discovery"] = {"enabled": "true", "driver": discovery_driver}
    for section, values in (extra or {}).items():
        sections.setdefault(section, {}).update(values)
    out = ["# Written by `ironsight lab up`; rewritten at each up."]
    for section, values in sections.items():
        out.append(f"[{section}]")
        out += [f"{key} = {value}" for key, value in values.items()]
        out.append("")
    return "\n".join(out)


def _alive_or_fail(lab: Lab, role: str, log_path: Path) -> None:
    if child_exited(lab.state["pids"][role]):
        tail = log_tail(log_path, 40)
        raise LabError(f"the lab's {role} exited during start-up; {log_path}:\n{tail}")


def _wait_daemon(lab: Lab) -> dict[str, Any]:
    """What the daemon published (its ports) once it is ready."""
    ready: dict[str, Any] = {}

    def published() -> bool:
        data = read_json(lab.state_dir / DAEMON_FILE)
        if data and data.get("pid") == lab.state["pids"]["daemon"]:
            ready.update(data)
            return True
        _alive_or_fail(lab, "daemon", lab.daemon_log)
        return False

    if not until(published, START_TIMEOUT, Poller(interval=0.1)):
        raise LabError(f"the lab daemon did not start within {START_TIMEOUT:.0f} s; "
                       f"see {lab.daemon_log}")
    return ready


def _wait_service(lab: Lab) -> None:
    """Both APIs answer and dnsmasq runs (it starts after the PXE filter's first sync)."""
    pending = [lab.api_url, lab.discoverd_url]

    def ready() -> bool:
        _alive_or_fail(lab, "serve", lab.serve_log)
        while pending:
            if not api_answers(pending[0]):
                return False
            pending.pop(0)
        return bool(lab.pxe_lines("dnsmasq started"))

    if not until(ready, START_TIMEOUT, Poller(interval=0.2)):
        waiting = "no dnsmasq" if not pending else f"waiting for {pending[0]}/v1"
        raise LabError(f"`ironsight serve` was not ready within {START_TIMEOUT:.0f} s "
                       f"({waiting}); see {lab.serve_log}:\n{log_tail(lab.serve_log, 40)}")


# --- status -------------------------------------------------------------------------------------

def status(state_dir: Path) -> dict[str, Any]:
    """What runs and what the service says about each node (for `ironsight lab status`). An
    unknown VM's node is the one discovery made of it, under the VM's name (the manifest
    names it so), once there is one."""
    lab = Lab(state_dir)
    if not lab.exists:
        return {"up": False, "state_dir": str(lab.state_dir)}
    nodes: dict[str, dict[str, Any]] = {}
    api_error = None
    serve_pid = lab.process("serve")
    if serve_pid and lab.state.get("api_url"):
        try:
            with lab.client(timeout=5) as api:
                for name in lab.state.get("nodes", {}):
                    nodes[name] = api.get(node_path(name))
                for vm in lab.unknown_vms:
                    with contextlib.suppress(ApiError):  # 404 until discovered
                        nodes[vm.spec.name] = api.get(node_path(vm.spec.name))
        except ClientError as exc:
            api_error = str(exc)
    vms = []
    for vm in lab.vms:
        node = nodes.get(vm.spec.name, {})
        props = node.get("properties") or {}
        boots, hardware_error = vm.spec, None
        if not vm.under_libvirt:  # `lab hardware`'s override, read as QEMU reads it
            try:
                boots = effective_spec(vm.spec, lab.files(vm.spec.name))
            except HardwareError as exc:
                hardware_error = str(exc)
        vms.append({
            **boots.as_dict(), "driver": node.get("driver") or (vm.driver if vm.enroll
                                                                 else None),
            "hardware_changed": boots != vm.spec, "hardware": describe(boots),
            "hardware_error": hardware_error,
            "unknown": vm.unknown, "bmc_port": vm.bmc_port,
            "bmc_root_port": lab.state.get("bmc_root_ports", {}).get(vm.spec.name),
            "qemu_pid": lab.qemu_pid(vm.spec.name),
            "domain_state": _domain_state(lab, vm.spec.name) if vm.under_libvirt else None,
            "provision_state": node.get("provision_state"),
            "power_state": node.get("power_state"),
            "found": {key: props.get(key) for key in ("cpus", "memory_mb", "local_gb")
                      if key in props},
            "fault": (lab.state.get("faults") or {}).get(vm.spec.name),
        })
    daemon_pid = lab.process("daemon")
    return {
        "up": bool(daemon_pid and serve_pid),
        "state_dir": str(lab.state_dir), "namespace": lab.network.namespace,
        "namespace_exists": network.exists(lab.network),
        "daemon_pid": daemon_pid, "serve_pid": serve_pid,
        "hypervisor_pid": lab.process("hypervisor"),
        "api_url": lab.state.get("api_url"), "discoverd_url": lab.state.get("discoverd_url"),
        "api_error": api_error, "vms": vms, "manifest": lab.state.get("manifest"),
    }


def _domain_state(lab: Lab, name: str) -> str | None:
    if lab.process("hypervisor") is None:
        return None
    try:
        return Hypervisor(lab.hypervisor_dir).state(name)
    except HypervisorError:
        return None


# --- power on ----------------------------------------------------------------------------------

def power_on(state_dir: Path, name: str) -> str:
    """Power one lab VM on as a person pressing its power button would: a VM behind a virtual
    IPMI BMC through that BMC (`ipmitool chassis power on` inside the namespace, as the
    service runs it; the password from the lab's 0600 file, never on the command line), a
    libvirt domain (pxe_ssh, redfish) by the lab's hypervisor (`virsh start`, what both
    drivers' BMCs do). Enrolled or unknown VMs alike; nothing else (boot device, node) is
    changed. Returns what was done; LabError naming the VM otherwise."""
    lab = Lab(state_dir)
    if not lab.exists:
        raise LabError(f"no lab in {lab.state_dir}: `ironsight lab up` first")
    try:
        vm = lab.vm(name)
    except KeyError:
        names = ", ".join(v.spec.name for v in lab.vms) or "none"
        raise LabError(f"the lab in {lab.state_dir} has no VM {name!r} (its VMs: "
                       f"{names})") from None
    if lab.process("daemon") is None:
        raise LabError(f"cannot power {name} on: the lab in {lab.state_dir} is not up (its "
                       "daemon, which runs the BMCs, is not running): `ironsight lab up`")
    if vm.under_libvirt:
        if lab.process("hypervisor") is None:
            raise LabError(f"cannot power {name} on: the lab's hypervisor is not running")
        hv = Hypervisor(lab.hypervisor_dir)
        try:
            if hv.state(name) == "running":
                return f"{name}: already on (libvirt domain running)"
            hv.virsh("start", name)
        except HypervisorError as exc:
            raise LabError(f"cannot power {name} on: {exc}") from None
        return f"{name}: powered on (libvirt domain started)"
    try:
        proc = lab.ipmitool(name, "chassis", "power", "on")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LabError(f"cannot power {name} on through its BMC: {exc}") from None
    if proc.returncode != 0:
        raise LabError(f"cannot power {name} on through its BMC (udp/{vm.bmc_port} in "
                       f"namespace {lab.network.namespace}): ipmitool: "
                       f"{(proc.stderr or proc.stdout).strip()}")
    return f"{name}: powered on through its BMC ({proc.stdout.strip()})"


# --- down ---------------------------------------------------------------------------------------

def down(state_dir: Path, *, log: Log = print, fallback_network: LabNetwork | None = None,
         grace: float = 15.0) -> None:
    """Stop everything the lab started and delete its namespace. Idempotent. Without a lab
    state, `fallback_network`'s namespace (default: ironsight-lab) is deleted."""
    lab = Lab(state_dir)
    net = lab.network if lab.exists else (fallback_network or LabNetwork())
    # serve first: it ends dnsmasq and stops using the BMCs and the hypervisor, which
    # destroys its domains as it ends
    for role in ("serve", "daemon", "redfish", "hypervisor"):
        pid = lab.process(role)
        if pid is None:
            continue
        log(f"stopping the lab's {role} (pid {pid})")
        terminate(pid, grace)
    leftovers = network.destroy(net)  # [] when the namespace is already gone
    if leftovers:
        log(f"ended {len(leftovers)} processes left in namespace {net.namespace}: {leftovers}")
    if lab.exists:
        lab.state["pids"] = {}
        lab.save()
    log(f"lab down (namespace {net.namespace} deleted)")


@contextlib.contextmanager
def running(options: LabOptions, log: Log = print) -> Iterator[Lab]:
    """A lab for the duration of a block (tests, benchmarks): always taken down."""
    lab = up(options, log)
    try:
        yield lab
    finally:
        down(options.state_dir, log=log)
