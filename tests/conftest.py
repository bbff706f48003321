"""Shared test set-up: markers follow the folder (unit / functional / e2e)."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ironsight.lab.bmc import VirtualBmc

_ROOT = Path(__file__).parent


def _which_virsh() -> str:
    """Which virsh the pxe_ssh functional tests talk to (tests/functional/drivers)."""
    from ironsight.lab.hypervisor import unavailable

    reason = unavailable()
    if reason is not None:
        return f"pxe_ssh functional tests: the stand-in virsh (libvirt cannot run: {reason})"
    try:
        version = subprocess.run(["libvirtd", "--version"], capture_output=True, text=True,
                                 timeout=10, check=False).stdout.split()[-1]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        version = "version unknown"
    stand_in = ("and the stand-in one: IRONSIGHT_TEST_STAND_IN_VIRSH is set"
                if os.environ.get("IRONSIGHT_TEST_STAND_IN_VIRSH")
                else "the stand-in virsh is not used")
    return f"pxe_ssh functional tests: the real virsh and libvirtd {version} ({stand_in})"


def pytest_report_header(config: pytest.Config) -> str:
    return _which_virsh()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Again at the end, where `pytest -q` (make test, CI) shows it: -q hides the header."""
    terminalreporter.write_line(_which_virsh())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).relative_to(_ROOT).parts
        if parts and parts[0] in ("functional", "e2e"):
            item.add_marker(getattr(pytest.mark, parts[0]))


# --- virtual BMC and UDP ports (drivers, conductor and lab tests) ------------------------------

BMC_USERNAME = "admin"
BMC_PASSWORD = "bmc-test-password"


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def free_udp_port() -> int:
    """A 127.0.0.1 UDP port nothing listens on (e.g. a BMC that does not answer)."""
    return _free_udp_port()


@pytest.fixture
def virtual_bmc() -> Iterator[VirtualBmc]:
    """A running virtual BMC on a free 127.0.0.1 UDP port; its `machine` (an
    InMemoryMachine, powered off) shows what reached it."""
    from ironsight.lab.bmc import BmcServer

    with BmcServer.in_memory(1, BMC_USERNAME, BMC_PASSWORD) as server:
        yield server.bmcs[0]


@pytest.fixture
def bmc_driver_info(virtual_bmc: VirtualBmc) -> dict[str, object]:
    """driver_info of a node whose BMC is `virtual_bmc`."""
    return {"ipmi_address": virtual_bmc.address, "ipmi_port": virtual_bmc.port,
            "ipmi_username": BMC_USERNAME, "ipmi_password": BMC_PASSWORD}
