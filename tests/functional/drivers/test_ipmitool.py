"""pxe_ipmitool only: the real ipmitool program against BMCs started from the command line,
as `make demo` starts them. What it does like pxe_ipminative (power, boot device, wrong
password, silent BMC) is tested for both in test_ipmi_power_and_boot.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ipmitool import IpmitoolPower
from ironsight.common import config

pytestmark = [
    pytest.mark.functional,
    pytest.mark.skipif(shutil.which("ipmitool") is None,
                       reason="ipmitool is not installed (apt-get install ipmitool)"),
]

CONF = config.load(overrides={"ipmi": {"command_timeout": "2", "retries": "0"}})


def node(driver_info: dict[str, Any]) -> NodeContext:
    return NodeContext(uuid="node-1", driver="pxe_ipmitool", driver_info=driver_info)


async def test_bmcs_started_from_the_command_line_answer(tmp_path: Path,
                                                         free_udp_port: int) -> None:
    """`python -m ironsight.lab.bmc` (as `make demo` runs it): one line per BMC when ready,
    the password read from a file and never on its command line."""
    password_file = tmp_path / "password"
    password_file.write_text("cli-secret\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ironsight.lab.bmc", "--port", str(free_udp_port), "--count", "2",
         "--user", "admin", "--password-file", str(password_file)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().strip() for _ in range(2)]
        assert lines == [f"bmc {i} listening on 127.0.0.1:{free_udp_port + i} user admin"
                         for i in range(2)]
        assert "cli-secret" not in Path(f"/proc/{proc.pid}/cmdline").read_text()
        info = {"ipmi_address": "127.0.0.1", "ipmi_port": free_udp_port + 1,
                "ipmi_username": "admin", "ipmi_password": "cli-secret"}
        await IpmitoolPower(CONF).set_power_state(node(info), states.POWER_ON, 10)
        assert await IpmitoolPower(CONF).get_power_state(node(info)) == states.POWER_ON
    finally:
        proc.terminate()
        assert proc.wait(5) == 0
