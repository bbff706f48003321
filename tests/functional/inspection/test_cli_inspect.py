"""`ironsight node inspect NODE --wait 60` against the real service, while a background thread
plays the node's ramdisk (the real agent on its machine tree)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ironsight.cli.main import _register, cli
from ironsight.cli.options import Runtime

from .helpers import Ramdisk, enroll, machine, node


@pytest.fixture(scope="module")
def ironsight_cli():
    _register()
    return cli


def _row(output: str, name: str) -> list[str]:
    """The cells of the table row that names `name`."""
    line = next(ln for ln in output.splitlines() if f" {name} " in ln)
    return [cell.strip() for cell in line.replace("┃", "│").split("│") if cell.strip()]


def test_node_inspect_wait_exits_0_and_shows_what_was_found(service, client, tmp_path,
                                                            ironsight_cli):
    spec, tree = machine(tmp_path, cpus=7, memory_mb=6144, disks_gb=(50,))
    uuid = enroll(client, spec)
    ramdisk = Ramdisk(service, uuid, tree)
    ramdisk.start()
    result = CliRunner().invoke(ironsight_cli, ["node", "inspect", spec.name, "--wait", "60"],
                                env={"IRONSIGHT_URL": service.url},
                                obj=Runtime(poll_interval=0.2))
    ramdisk.join(30)
    assert ramdisk.error is None, ramdisk.error
    assert ramdisk.result is not None and ramdisk.result.returncode == 0, ramdisk.result
    assert result.exit_code == 0, result.output
    row = _row(result.stdout, spec.name)
    assert uuid in row
    assert "manageable" in row
    assert str(spec.cpus) in row, row
    assert str(spec.memory_mb) in row, row
    assert str(49) in row, row
    assert f"node {spec.name}: provision state manageable" in result.stderr
    assert node(client, uuid)["provision_state"] == "manageable"
