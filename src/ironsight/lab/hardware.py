"""Changing a lab VM's hardware while it is off, as a technician swaps parts
(`ironsight lab hardware`).

A VM behind a virtual IPMI BMC boots with its spec's memory and extra disks unless its
override file (`VmFiles.hardware`, `vms/NAME.hardware.json`: `{"memory_mb": N,
"extra_disks_mb": [...]}`, either key optional) says otherwise; QEMU reads it again at every
power on (`qemu.effective_spec`), so a change takes effect at the VM's next power on, not
while it runs. `change` merges new values into that file (with `reset`, into nothing: back
to the spec), keeps only what differs from the spec, and removes the file when nothing
does. Extra disks keep their index's serial (`qemu.extra_disk_serial`): dropping the last
one of `64,64` is pulling that disk out; a disk whose size changes is a new, empty one.

libvirt's VMs (pxe_ssh, redfish) are defined once by the lab's hypervisor: not theirs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from ironsight.lab.qemu import (
    HardwareError,
    VmSpec,
    effective_spec,
    parse_hardware,
    read_hardware,
)
from ironsight.lab.state import Lab, LabError, LabVm, write_json


def vm_of(lab: Lab, name: str) -> LabVm:
    """The lab's VM `name`, if its hardware can change (a VM behind a virtual IPMI BMC)."""
    if not lab.exists:
        raise LabError(f"no lab in {lab.state_dir}")
    try:
        vm = lab.vm(name)
    except KeyError:
        names = ", ".join(v.spec.name for v in lab.vms)
        raise LabError(f"no VM {name!r} in the lab (its VMs: {names})") from None
    if vm.under_libvirt:
        raise LabError(f"{name} is a libvirt domain ({vm.driver}): its hardware is defined "
                       "by the lab's hypervisor, and only the VMs behind virtual IPMI BMCs "
                       "take a hardware override")
    return vm


def current(lab: Lab, name: str) -> VmSpec:
    """What VM `name` boots with at its next power on."""
    vm = vm_of(lab, name)
    return effective_spec(vm.spec, lab.files(name))


def change(lab: Lab, name: str, *, memory_mb: int | None = None,
           extra_disks_mb: Sequence[int] | None = None, reset: bool = False) -> VmSpec:
    """Set VM `name`'s memory and/or extra disks for its next power on (None: as before;
    `reset`: back to its spec first). What it will boot with. LabError for a VM that is not
    the lab's or cannot change; HardwareError (naming the key) for values out of bounds, or
    an override file already there that is not valid (`reset` replaces it)."""
    vm = vm_of(lab, name)
    files = lab.files(name)
    wanted: dict[str, Any] = {} if reset else dict(read_hardware(vm.spec, files))
    if memory_mb is not None:
        wanted["memory_mb"] = memory_mb
    if extra_disks_mb is not None:
        wanted["extra_disks_mb"] = list(extra_disks_mb)
    checked = parse_hardware(wanted, vm.spec)
    differs = {key: value for key, value in checked.items() if getattr(vm.spec, key) != value}
    if differs:
        files.hardware.parent.mkdir(parents=True, exist_ok=True)
        write_json(files.hardware, {key: list(value) if isinstance(value, tuple) else value
                                    for key, value in differs.items()})
    else:
        with contextlib.suppress(FileNotFoundError):
            files.hardware.unlink()
    return effective_spec(vm.spec, files)


def describe(spec: VmSpec) -> str:
    """`384 MiB, 1 extra disk (64 MiB)`."""
    disks = spec.extra_disks_mb
    extra = (f"{len(disks)} extra disk{'s' if len(disks) != 1 else ''} "
             f"({', '.join(str(size) for size in disks)} MiB)") if disks else "no extra disk"
    return f"{spec.memory_mb} MiB, {extra}"


__all__ = ["HardwareError", "change", "current", "describe", "vm_of"]
