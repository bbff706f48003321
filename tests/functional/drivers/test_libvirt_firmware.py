"""The lab's UEFI VMs as libvirt domains (pxe_ssh), on the real libvirtd of conftest.py: the
domain XML of `hypervisor.domain_xml` is accepted by libvirt, and the QEMU it starts runs
the firmware the lab's own VMs run (read back from the QEMU process and its serial console,
not from our XML)."""

from __future__ import annotations

import contextlib
import random
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ironsight.lab import firmware, hypervisor
from ironsight.lab.hypervisor import HypervisorError
from ironsight.lab.qemu import VmFiles, VmSpec

if TYPE_CHECKING:
    from .conftest import Libvirt

UNAVAILABLE = hypervisor.unavailable() or firmware.unavailable(firmware.UEFI_SECUREBOOT)

pytestmark = [pytest.mark.functional,
              pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")]

PXE_TIMEOUT = 60.0  # OVMF reaches its PXE ~8 s after QEMU starts under TCG, when idle
PXE_STARTS = re.compile(r">>Start PXE over (IPv4|IPv6)")

Define = Callable[..., VmSpec]


@pytest.fixture
def define(libvirt: Libvirt) -> Iterator[Define]:
    """Defines a lab VM of the given firmware as a domain (no disk, on one of the fixture's
    taps); destroyed and undefined, its NVRAM with it, afterwards."""
    names: list[str] = []

    def define(kind: str, *, ipv6_only: bool = False) -> VmSpec:
        name = f"isv-{uuid.uuid4().hex[:8]}"
        mac = "52:54:00:" + ":".join(f"{random.randrange(256):02x}" for _ in range(3))
        spec = VmSpec(name=name, mac=mac, tap=next(libvirt.taps), disk_gb=0, firmware=kind,
                      ipv6_only=ipv6_only)
        libvirt.hypervisor.define(spec, VmFiles(libvirt.run_dir, name))
        names.append(name)
        return spec

    yield define
    for name in names:
        if libvirt.hypervisor.state(name) != "shut off":
            with contextlib.suppress(HypervisorError):
                libvirt.hypervisor.virsh("destroy", name)
        libvirt.hypervisor.virsh("undefine", "--nvram", name)


def qemu_argv(libvirt: Libvirt, name: str) -> str:
    pid = int((libvirt.hypervisor.dirs.root / "run" / "qemu" / f"{name}.pid").read_text())
    return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")


def serial(libvirt: Libvirt, name: str) -> str:
    try:
        return VmFiles(libvirt.run_dir, name).serial_log.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def first_pxe(libvirt: Libvirt, name: str) -> str:
    """The IP version OVMF's PXE starts over first (its serial console); fails at timeout."""
    deadline = time.monotonic() + PXE_TIMEOUT
    while time.monotonic() < deadline:
        found = PXE_STARTS.search(serial(libvirt, name))
        if found:
            return found.group(1)
        time.sleep(0.5)
    pytest.fail(f"OVMF started no PXE within {PXE_TIMEOUT:.0f} s; serial console:\n"
                f"{serial(libvirt, name)}")
    raise AssertionError("unreachable")


def test_a_secure_boot_domain_defines_and_starts(libvirt: Libvirt, define: Define) -> None:
    spec = define(firmware.UEFI_SECUREBOOT)
    libvirt.hypervisor.virsh("start", spec.name)
    assert libvirt.hypervisor.state(spec.name) == "running"


def test_a_secure_boot_domain_runs_ovmfs_secure_build_with_smm(libvirt: Libvirt,
                                                               define: Define) -> None:
    spec = define(firmware.UEFI_SECUREBOOT)
    libvirt.hypervisor.virsh("start", spec.name)
    argv = qemu_argv(libvirt, spec.name)
    assert f'"filename":"{firmware.OVMF_CODE_SECBOOT}"' in argv
    assert "smm=on" in argv
    assert "-global driver=cfi.pflash01,property=secure,value=on" in argv
    assert "-global ICH9-LPC.disable_s3=1" in argv


def test_a_uefi_domains_nvram_is_made_from_the_template_at_its_start(
        libvirt: Libvirt, define: Define) -> None:
    spec = define(firmware.UEFI_SECUREBOOT)
    nvram = VmFiles(libvirt.run_dir, spec.name).nvram
    assert not nvram.exists()
    libvirt.hypervisor.virsh("start", spec.name)
    assert nvram.stat().st_size == firmware.OVMF_VARS_MS.stat().st_size
    assert f'"filename":"{nvram}"' in qemu_argv(libvirt, spec.name)


def test_a_uefi_domain_pxe_boots_with_ovmf_not_ipxe(libvirt: Libvirt, define: Define) -> None:
    spec = define(firmware.UEFI)
    libvirt.hypervisor.virsh("start", spec.name)
    assert '"romfile":""' in qemu_argv(libvirt, spec.name)
    assert first_pxe(libvirt, spec.name) == "IPv4"
    assert "iPXE" not in serial(libvirt, spec.name)


def test_an_ipv6_only_domain_pxe_boots_over_ipv6_only(libvirt: Libvirt,
                                                      define: Define) -> None:
    spec = define(firmware.UEFI, ipv6_only=True)
    libvirt.hypervisor.virsh("start", spec.name)
    assert "-fw_cfg name=opt/org.tianocore/IPv4PXESupport,string=no" in qemu_argv(
        libvirt, spec.name)
    assert first_pxe(libvirt, spec.name) == "IPv6"
    assert "PXE over IPv4" not in serial(libvirt, spec.name)
