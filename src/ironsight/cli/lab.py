"""`ironsight lab up|status|power-on|hardware|fault|down`: QEMU VMs behind virtual BMCs, PXE-booting
the real discovery ramdisk from a real `ironsight serve`, all in one isolated network
namespace.

After `up`, the bare-metal API is published on 127.0.0.1 (default port 6385), so the usual
client commands work as they are: `ironsight node list`, `ironsight node inspect lab-1 --wait`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

_STATE_DIR_HELP = "Lab state directory (default: <ironsight state dir>/lab)."


def _state_dir(value: Path | None) -> Path:
    from ironsight.lab.state import default_lab_dir

    return value or default_lab_dir()


def _firmware_list(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    from ironsight.lab import firmware

    try:
        return firmware.parse_list(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


@click.group("lab")
def lab_group() -> None:
    """A lab of QEMU VMs to inspect for real (needs root, QEMU, dnsmasq, ipmitool)."""


@lab_group.command("up")
@click.option("--nodes", type=click.IntRange(1, 50), default=3, show_default=True,
              help="Number of VMs (sizes and drivers cycle through three shapes).")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_STATE_DIR_HELP)
@click.option("--ramdisk-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Ramdisk to build or reuse (default: that of `ironsight ramdisk build`).")
@click.option("--namespace", default="ironsight-lab", show_default=True,
              help="Network namespace holding the lab.")
@click.option("--api-port", type=click.IntRange(0, 65535), default=6385, show_default=True,
              help="Root-namespace 127.0.0.1 port publishing the bare-metal API (0: any).")
@click.option("--discoverd-port", type=click.IntRange(0, 65535), default=5050,
              show_default=True, help="Same, for discoverd's API (0: any).")
@click.option("--ssh-nodes", type=click.IntRange(0, 50), default=0, show_default=True,
              help="How many of the VMs (the last ones) are libvirt domains of the lab's own "
                   "hypervisor, enrolled as pxe_ssh (needs libvirt: scripts/install-deps.sh).")
@click.option("--redfish-nodes", type=click.IntRange(0, 50), default=0, show_default=True,
              help="How many of the VMs (the very last ones, after the pxe_ssh ones) are "
                   "libvirt domains behind the lab's Redfish BMC (sushy-tools' emulator, TLS "
                   "with a lab CA), enrolled as redfish (needs libvirt and "
                   "scripts/ensure-sushy-tools.sh).")
@click.option("--firmware", "firmware_kinds", default="bios", show_default=True,
              callback=_firmware_list, metavar="LIST",
              help="The VMs' firmware, cycled over them: a comma-separated list of bios "
                   "(SeaBIOS and iPXE), uefi (OVMF's own PXE), uefi-secureboot (the same, "
                   "Secure Boot enforced with Microsoft's keys), uefi-httpboot (OVMF's UEFI "
                   "HTTP boot instead of PXE).")
@click.option("--ipv6-only-nodes", type=click.IntRange(0, 50), default=0, show_default=True,
              help="How many of the UEFI PXE VMs (the last ones) are on IPv6-only ports: PXE "
                   "over IPv6, no IPv4 or ARP passes their tap.")
@click.option("--unknown-nodes", type=click.IntRange(0, 20), default=0, show_default=True,
              help="More VMs, unknown-1..K, that nobody enrols: BIOS, behind virtual IPMI BMCs "
                   "(pxe_ipmitool), off until `ironsight lab power-on NAME`, each with a "
                   "second, isolated NIC whose MAC is the same on all of them; listed in "
                   "<state dir>/manifest.csv (a delivery manifest), with the service's "
                   "[auto_discovery] on.")
@click.option("--no-manage", is_flag=True, help="Leave the enrolled nodes in enroll.")
def up_command(nodes: int, state_dir: Path | None, ramdisk_dir: Path | None, namespace: str,
               api_port: int, discoverd_port: int, ssh_nodes: int, redfish_nodes: int,
               firmware_kinds: list[str], ipv6_only_nodes: int, unknown_nodes: int,
               no_manage: bool) -> None:
    """Build/reuse the ramdisk, create the network, start the BMCs (and the hypervisor of
    the pxe_ssh and redfish VMs, and the Redfish BMC) and the service, enroll the nodes
    (pxe_ipmitool and pxe_ipminative alternating, then pxe_ssh, then redfish) and manage
    them; with --unknown-nodes, write the unknown VMs' manifest."""
    from ironsight.lab.lifecycle import up
    from ironsight.lab.network import LabNetwork, NetworkError
    from ironsight.lab.state import LabError, LabOptions, default_vms

    if ssh_nodes + redfish_nodes > nodes:
        raise click.BadParameter(f"{ssh_nodes} + {redfish_nodes} is more than --nodes "
                                 f"({nodes})", param_hint="--ssh-nodes/--redfish-nodes")
    try:
        vms = default_vms(nodes, ssh=ssh_nodes, redfish=redfish_nodes,
                          firmware=firmware_kinds, ipv6_only=ipv6_only_nodes,
                          unknown=unknown_nodes)
    except LabError as exc:
        raise click.BadParameter(str(exc), param_hint="--ipv6-only-nodes") from None
    options = LabOptions(state_dir=_state_dir(state_dir), vms=vms,
                         network=LabNetwork(namespace=namespace), ramdisk_dir=ramdisk_dir,
                         api_port=api_port, discoverd_port=discoverd_port,
                         manage=not no_manage)
    try:
        lab = up(options, log=lambda line: click.echo(line, err=True))
    except (LabError, NetworkError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"lab up: {len(options.vms)} VMs, bare-metal API {lab.api_url}, discoverd "
               f"{lab.discoverd_url}")
    click.echo(f"  export IRONSIGHT_URL={lab.api_url}   # if not the default port")
    click.echo(f"  web console: {lab.api_url}/ui/")
    click.echo("  ironsight node inspect " + " ".join(vm.spec.name for vm in lab.vms
                                                       if not vm.unknown) + " --wait 300")
    unknown = [vm.spec.name for vm in lab.vms if vm.unknown]
    if unknown:
        click.echo(f"unknown VMs (not enrolled, off): {', '.join(unknown)}")
        click.echo(f"  delivery manifest: {lab.manifest_file}")
        state = f" --state-dir {state_dir}" if state_dir is not None else ""
        click.echo(f"  ironsight lab power-on {unknown[0]}{state}   # boots it into discovery")


@lab_group.command("status")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_STATE_DIR_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status_command(state_dir: Path | None, as_json: bool) -> None:
    """What runs, and each VM with its node's state and what inspection found."""
    import json

    from ironsight.lab.lifecycle import status

    info = status(_state_dir(state_dir))
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    if "vms" not in info:
        click.echo(f"no lab in {info['state_dir']}")
        return
    click.echo(_summary(info))
    if not info["up"]:
        raise SystemExit(1)


# the libvirt VMs' "BMC" column (the others: their virtual IPMI BMC's port)
_BMC = {"pxe_ssh": "ssh", "redfish": "redfish"}


def _summary(info: dict[str, Any]) -> str:
    from rich.console import Console
    from rich.table import Table

    table = Table("VM", "MAC", "driver", "BMC", "firmware", "vCPU", "MiB", "disk GiB",
                  "QEMU / domain", "provision", "power", "found")
    for vm in info["vms"]:
        found = " ".join(f"{k}={v}" for k, v in vm["found"].items()) + (
            f" FAULT {vm['fault']}" if vm.get("fault") else "")
        table.add_row(vm["name"], vm["mac"], vm["driver"] or "-",
                      _BMC.get(vm["driver"], f"udp/{vm['bmc_port']}"),
                      vm["firmware"] + (" IPv6-only" if vm["ipv6_only"] else ""),
                      str(vm["cpus"]), str(vm["memory_mb"]) + ("*" if vm.get(
                          "hardware_changed") else ""), str(vm["disk_gb"]),
                      (vm.get("domain_state") or "?") if vm["driver"] in _BMC
                      else str(vm["qemu_pid"] or "off"),
                      vm["provision_state"] or "?", vm["power_state"] or "?", found)
    console = Console(width=160, record=True)
    unknown = [vm["name"] for vm in info["vms"] if vm.get("unknown")]
    with console.capture() as capture:
        state = "up" if info["up"] else "DOWN (or partly)"
        console.print(f"lab {state}: namespace {info['namespace']} "
                      f"({'exists' if info['namespace_exists'] else 'absent'}), daemon pid "
                      f"{info['daemon_pid']}, serve pid {info['serve_pid']}")
        console.print(f"bare-metal API {info['api_url']}, discoverd {info['discoverd_url']}"
                      + (f" (unreachable: {info['api_error']})" if info["api_error"] else ""))
        if info["api_url"]:
            console.print(f"web console {info['api_url']}/ui/")
        changed = [f"{vm['name']} ({vm['hardware']})" for vm in info["vms"]
                   if vm.get("hardware_changed")]
        if changed:
            console.print("* hardware changed by `ironsight lab hardware` (from the next "
                          f"power on; `--reset` undoes it): {', '.join(changed)}")
        for vm in info["vms"]:
            if vm.get("hardware_error"):
                console.print(f"{vm['name']}: its hardware override cannot be read: "
                              f"{vm['hardware_error']}")
        if unknown:
            console.print(f"unknown VMs (not enrolled; `ironsight lab power-on NAME`): "
                          f"{', '.join(unknown)}; delivery manifest {info.get('manifest')}",
                          soft_wrap=True)
        console.print(table)
    return capture.get().rstrip()


@lab_group.command("power-on")
@click.argument("name")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_STATE_DIR_HELP)
def power_on_command(name: str, state_dir: Path | None) -> None:
    """Power the lab VM NAME on, as a person pressing its power button: through its virtual
    IPMI BMC (ipmitool inside the lab's namespace), or a libvirt domain through the lab's
    hypervisor. Enrolled and unknown VMs alike; its boot device is left as it is."""
    from ironsight.lab.lifecycle import power_on
    from ironsight.lab.state import LabError

    try:
        click.echo(power_on(_state_dir(state_dir), name))
    except LabError as exc:
        raise click.ClickException(str(exc)) from None


def _disk_sizes(ctx: click.Context, param: click.Parameter, value: str | None
                ) -> list[int] | None:
    """`64,64` -> [64, 64] (MiB); the bounds are checked with the VM's."""
    if value is None:
        return None
    parts = [part.strip() for part in value.split(",")]
    if not all(part.isdigit() for part in parts):
        raise click.BadParameter(f"{value!r} is not a comma-separated list of disk sizes in "
                                 "MiB, e.g. 64,64 (--no-extra-disks for none)", ctx=ctx,
                                 param=param)
    return [int(part) for part in parts]


@lab_group.command("hardware")
@click.argument("name")
@click.option("--memory-mb", type=int, default=None,
              help="Memory (MiB) at the VM's next power on.")
@click.option("--extra-disks-mb", callback=_disk_sizes, default=None, metavar="SIZES",
              help="Its extra disks at its next power on, sizes in MiB, comma-separated "
                   "(64,64); each keeps its index's serial: leaving out the last one pulls "
                   "that disk.")
@click.option("--no-extra-disks", is_flag=True, help="No extra disk at its next power on.")
@click.option("--reset", is_flag=True,
              help="Back to the VM's spec (with the other options: start from it).")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_STATE_DIR_HELP)
def hardware_command(name: str, memory_mb: int | None, extra_disks_mb: list[int] | None,
                     no_extra_disks: bool, reset: bool, state_dir: Path | None) -> None:
    """Change the lab VM NAME's hardware as a technician would while it is off: its memory
    and extra disks from its next power on (through its BMC: an inspection's, or `lab
    power-on`). A running VM keeps what it booted with until then. Without options, print
    what it will boot with. VMs behind virtual IPMI BMCs only."""
    from ironsight.lab import qemu
    from ironsight.lab.hardware import HardwareError, change, current, describe, vm_of
    from ironsight.lab.state import Lab, LabError

    if extra_disks_mb is not None and no_extra_disks:
        raise click.UsageError("--extra-disks-mb and --no-extra-disks exclude each other: "
                               "give one of them")
    lab = Lab(_state_dir(state_dir))
    try:
        vm = vm_of(lab, name)
    except LabError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        if memory_mb is not None:
            qemu.check_memory_mb(memory_mb, vm.spec.firmware)
    except HardwareError as exc:
        raise click.BadParameter(str(exc), param_hint="'--memory-mb'") from None
    try:
        if extra_disks_mb is not None:
            qemu.check_extra_disks_mb(extra_disks_mb)
    except HardwareError as exc:
        raise click.BadParameter(str(exc), param_hint="'--extra-disks-mb'") from None
    disks = [] if no_extra_disks else extra_disks_mb
    try:
        if memory_mb is None and disks is None and not reset:
            spec = current(lab, name)
        else:
            spec = change(lab, name, memory_mb=memory_mb, extra_disks_mb=disks, reset=reset)
    except (LabError, HardwareError) as exc:
        raise click.ClickException(str(exc)) from None
    overridden = spec != vm.spec
    click.echo(f"{name} boots with {describe(spec)} at its next power on"
               + (f" (its spec: {describe(vm.spec)}; override {lab.files(name).hardware})"
                  if overridden else " (its spec)"))
    if lab.qemu_pid(name) is not None:
        click.echo(f"{name} is on: it keeps what it booted with until it is powered off and "
                   "on again")


@lab_group.command("fault")
@click.argument("vm")
@click.argument("kind", type=click.Choice(["no-dhcp", "no-kernel", "no-ramdisk", "no-agent",
                                           "wrong-callback", "clear"]))
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_STATE_DIR_HELP)
def fault_command(vm: str, kind: str, state_dir: Path | None) -> None:
    """Break VM's boots in a named way until `clear`, in the lab's network: no-dhcp (its
    DHCP requests dropped), no-kernel / no-ramdisk (its HTTP request for the kernel or the
    initramfs dropped), no-agent (its ramdisk's calls to discoverd dropped), wrong-callback
    (the same calls refused with a TCP reset). docs/lab.md has the details."""
    from ironsight.lab.faults import inject
    from ironsight.lab.network import NetworkError
    from ironsight.lab.state import Lab, LabError

    lab = Lab(_state_dir(state_dir))
    if not lab.exists:
        raise click.ClickException(f"no lab in {lab.state_dir}")
    try:
        faults = inject(lab, vm, kind)
    except (LabError, NetworkError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(", ".join(f"{name}: {what}" for name, what in sorted(faults.items()))
               or "no fault")


@lab_group.command("down")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_STATE_DIR_HELP)
@click.option("--namespace", default=None,
              help="Namespace to delete when the state directory has no lab.")
def down_command(state_dir: Path | None, namespace: str | None) -> None:
    """Stop the service, dnsmasq, the BMCs and every VM; delete the namespace."""
    from ironsight.lab.lifecycle import down
    from ironsight.lab.network import LabNetwork, NetworkError
    from ironsight.lab.state import LabError

    try:
        down(_state_dir(state_dir), log=lambda line: click.echo(line, err=True),
             fallback_network=LabNetwork(namespace=namespace) if namespace else None)
    except (LabError, NetworkError) as exc:
        raise click.ClickException(str(exc)) from None


def register(cli: click.Group) -> None:
    cli.add_command(lab_group)
