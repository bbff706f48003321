"""The delivery manifest of a lab's unknown VMs: the CSV file `lab up` writes as
`<state dir>/manifest.csv`, for discoverd's auto-discovery (`ironsight discovery manifest
import`), listing the machines it should expect.

One row per unknown VM (the VMs nobody enrols), under a header row, comma-separated:

    serial,name,macs,bmc_address,bmc_port,driver,bmc_username,bmc_password_file
    LAB-unknown-1,unknown-1,52:54:00:1b:00:01,127.0.0.1,6233,pxe_ipmitool,admin,/…/bmc-password

- `serial`: the VM's SMBIOS system serial (what its ramdisk reports), `name` the VM's name;
- `macs`: its provisioning NIC's MAC only (not the isolated NIC's shared MAC);
- `bmc_address`, `bmc_port`: its virtual IPMI BMC as the services reach it, inside the lab's
  namespace (as an enrolled IPMI VM's `ipmi_address` and `ipmi_port`);
- `driver`: the BMC's hardware type; `bmc_username`: the lab BMCs' user;
- `bmc_password_file`: the absolute path of the lab's 0600 password file, whose first line
  is the BMCs' password. The password itself is never in the manifest: this module never
  reads it, and refuses a password file that others may read.
"""

from __future__ import annotations

import csv
import io
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from ironsight.common.files import create_private
from ironsight.lab.state import NS_BMC_ADDRESS, LabError, LabVm

COLUMNS = ("serial", "name", "macs", "bmc_address", "bmc_port", "driver", "bmc_username",
           "bmc_password_file")


def rows(vms: Sequence[LabVm], *, bmc_user: str, password_file: Path) -> list[dict[str, str]]:
    """The manifest's rows of `vms`' unknown ones, in their order."""
    return [{"serial": vm.spec.system_serial, "name": vm.spec.name, "macs": vm.spec.mac,
             "bmc_address": NS_BMC_ADDRESS, "bmc_port": str(vm.bmc_port),
             "driver": vm.driver, "bmc_username": bmc_user,
             "bmc_password_file": str(password_file.resolve())}
            for vm in vms if vm.unknown]


def write(path: Path, vms: Sequence[LabVm], *, bmc_user: str, password_file: Path) -> Path:
    """Write the manifest of `vms`' unknown ones to `path` (replaced atomically, 0600 as the
    lab's other state files); returns `path`. LabError when the password file is missing or
    others may read it."""
    try:
        mode = password_file.stat().st_mode
    except OSError as exc:
        raise LabError(f"the BMC password file {password_file}: {exc.strerror}") from None
    if not stat.S_ISREG(mode) or stat.S_IMODE(mode) & 0o077:
        raise LabError(f"the BMC password file {password_file} must be a regular file "
                       f"only its owner may read (mode {stat.S_IMODE(mode):04o})")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(vms, bmc_user=bmc_user, password_file=password_file))
    partial = path.with_name(f".{path.name}.tmp")
    create_private(partial, out.getvalue().encode())
    os.replace(partial, path)
    return path
