"""The delivery manifest `lab up` writes for its unknown VMs (lab/manifest.py), and the BMC
password file it points at."""

from __future__ import annotations

import csv
import stat
from pathlib import Path

import pytest

from ironsight.lab import manifest
from ironsight.lab.state import SHARED_EXTRA_MAC, Lab, LabError, default_vms

PASSWORD = "pw-0123456789abc"


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    lab = Lab(tmp_path)
    lab.write_password(PASSWORD)
    return lab


def written(lab: Lab, *, enrolled: int = 2, unknown: int = 2) -> Path:
    return manifest.write(lab.manifest_file, default_vms(enrolled, unknown=unknown,
                                                         bmc_base_port=6230),
                          bmc_user="admin", password_file=lab.password_file)


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def test_the_header_names_the_columns_in_order(lab: Lab) -> None:
    header = written(lab).read_text().splitlines()[0]
    assert header == ("serial,name,macs,bmc_address,bmc_port,driver,bmc_username,"
                      "bmc_password_file")


def test_one_row_per_unknown_vm_and_none_for_the_enrolled_ones(lab: Lab) -> None:
    assert [row["name"] for row in read_rows(written(lab, enrolled=3, unknown=2))] == [
        "unknown-1", "unknown-2"]


def test_a_row_is_the_vms_serial_mac_and_bmc_as_the_service_reaches_it(lab: Lab) -> None:
    first = read_rows(written(lab, enrolled=2, unknown=1))[0]
    assert first == {
        "serial": "LAB-unknown-1", "name": "unknown-1", "macs": "52:54:00:1b:00:01",
        "bmc_address": "127.0.0.1", "bmc_port": "6232", "driver": "pxe_ipmitool",
        "bmc_username": "admin", "bmc_password_file": str(lab.password_file)}


def test_the_macs_are_the_provisioning_nics_only(lab: Lab) -> None:
    assert SHARED_EXTRA_MAC not in written(lab).read_text()


def test_the_bmc_port_is_the_one_an_enrolled_vm_would_be_enrolled_with(lab: Lab) -> None:
    vms = default_vms(1, unknown=2, bmc_base_port=7000)
    path = manifest.write(lab.manifest_file, vms, bmc_user="admin",
                          password_file=lab.password_file)
    assert [row["bmc_port"] for row in read_rows(path)] == ["7001", "7002"]


def test_the_password_is_never_in_the_manifest(lab: Lab) -> None:
    assert PASSWORD not in written(lab).read_text()


def test_the_password_file_path_is_absolute(lab: Lab, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = manifest.write(lab.manifest_file, default_vms(1, unknown=1), bmc_user="admin",
                          password_file=Path("bmc-password"))
    assert read_rows(path)[0]["bmc_password_file"] == str(tmp_path / "bmc-password")


def test_the_password_file_is_0600_with_the_password_on_its_first_line(lab: Lab) -> None:
    assert stat.S_IMODE(lab.password_file.stat().st_mode) == 0o600
    assert lab.password_file.read_text().splitlines()[0] == PASSWORD


def test_the_password_file_is_0600_even_when_it_existed_readable(tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    lab.password_file.write_text("old\n")
    lab.password_file.chmod(0o644)
    lab.write_password(PASSWORD)
    assert stat.S_IMODE(lab.password_file.stat().st_mode) == 0o600
    assert lab.password_file.read_text() == PASSWORD + "\n"


def test_a_password_file_others_may_read_is_refused(lab: Lab) -> None:
    lab.password_file.chmod(0o644)
    with pytest.raises(LabError, match="only its owner may read"):
        written(lab)
    assert not lab.manifest_file.exists()


def test_a_missing_password_file_is_refused(tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    with pytest.raises(LabError, match=r"the BMC password file .*bmc-password"):
        written(lab)


def test_the_manifest_is_private_and_replaces_an_old_one(lab: Lab) -> None:
    lab.manifest_file.write_text("serial\nstale\n")
    path = written(lab)
    assert "stale" not in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []


def test_discoverds_parser_takes_the_labs_manifest(lab: Lab) -> None:
    parser = pytest.importorskip("ironsight.discoverd.manifest")
    entries = parser.parse(written(lab).read_text())
    assert [(e.serial, e.name, e.macs, e.bmc_port, e.driver) for e in entries] == [
        ("LAB-unknown-1", "unknown-1", ("52:54:00:1b:00:01",), 6232, "pxe_ipmitool"),
        ("LAB-unknown-2", "unknown-2", ("52:54:00:1b:00:02",), 6233, "pxe_ipmitool")]
    assert parser.read_password(entries[0]) == PASSWORD
