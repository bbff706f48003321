"""What the lab's end-to-end tests share: where the ramdisk cache is, the skips for a host that
cannot run the lab, and what to print when a lab test fails."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from ironsight.lab import firmware
from ironsight.lab.processes import log_tail
from ironsight.lab.state import Lab

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = ("qemu-system-x86_64", "qemu-img", "dnsmasq", "ipmitool", "nft")


def ramdisk_dir() -> Path:
    """The ramdisk cache shared by the e2e tests (rebuilt only when its inputs change)."""
    state = os.environ.get("IRONSIGHT_STATE_DIR")
    return Path(state) / "ramdisk" if state else REPO / ".state" / "ramdisk-cache"


def require_lab(kinds: Iterable[str] = (firmware.BIOS,)) -> None:
    """Skip the test unless this host can run the lab with VMs of these firmware kinds."""
    if os.geteuid() != 0:
        pytest.skip("the lab needs root (network namespaces, taps)")
    for program in PROGRAMS:
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed (scripts/install-deps.sh)")
    for kind in kinds:
        why = firmware.unavailable(kind)
        if why:
            pytest.skip(f"{kind} VMs cannot run here: {why}")


@contextlib.contextmanager
def diagnosed(lab: Lab, names: Iterable[str], *, pxe_lines: int = 80,
              daemon_lines: int = 40) -> Iterator[None]:
    """On any failure, print what explains it: the VMs' serial logs, dnsmasq, the services."""
    try:
        yield
    except BaseException:
        for name in names:
            print(f"\n===== serial log of {name} (last 60 lines) =====")
            print(log_tail(lab.files(name).serial_log, 60))
            print(f"----- QEMU output of {name} -----")
            print(log_tail(lab.files(name).qemu_log, 10))
        print("\n===== discoverd's PXE / dnsmasq lines =====")
        print("\n".join(lab.pxe_lines()[-pxe_lines:]))
        print("\n===== service log (last 80 lines) =====")
        print(log_tail(lab.serve_log, 80))
        print(f"\n===== lab daemon log (last {daemon_lines} lines) =====")
        print(log_tail(lab.daemon_log, daemon_lines))
        raise
