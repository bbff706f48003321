"""The lab's libvirt hypervisor without running it: the domain a lab VM becomes, the files
`prepare` lays out, and why libvirt cannot run (tests/functional/drivers/test_ssh_libvirt.py
runs it)."""

from __future__ import annotations

import dataclasses
import grp
import pwd
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ironsight.lab import hypervisor
from ironsight.lab.hypervisor import HypervisorDirs, domain_xml, prepare, unavailable
from ironsight.lab.qemu import VmFiles, VmSpec

SPEC = VmSpec(name="vm-1", mac="52:54:00:12:34:56", tap="tap-vm1", cpus=2, memory_mb=384,
              disk_gb=4, extra_disks_mb=(64,), manufacturer="Acme", product="Box-9",
              serial="SN-1", uuid="0b6f3c3e-8f4c-4b47-9d1e-2b4ad4b4a001")


def domain(tmp_path: Path, spec: VmSpec = SPEC) -> ET.Element:
    return ET.fromstring(domain_xml(spec, VmFiles(tmp_path, spec.name)))


def attribute(element: ET.Element, path: str, name: str) -> str | None:
    found = element.find(path)
    assert found is not None, path
    return found.get(name)


# --- domain_xml ------------------------------------------------------------------------------

def test_the_domain_has_the_specs_vcpus_and_memory_in_mib(tmp_path: Path) -> None:
    root = domain(tmp_path)
    assert root.findtext("vcpu") == "2"
    memory = root.find("memory")
    assert memory is not None and memory.get("unit") == "MiB" and memory.text == "384"


def test_the_domain_is_tcg(tmp_path: Path) -> None:
    assert domain(tmp_path).get("type") == "qemu"


def test_the_disks_are_virtio_files_in_the_vms_directory(tmp_path: Path) -> None:
    files = VmFiles(tmp_path, SPEC.name)
    disks = [(attribute(d, "source", "file"), attribute(d, "target", "dev"),
              attribute(d, "target", "bus")) for d in domain(tmp_path).iterfind("devices/disk")]
    assert disks == [(str(files.disk), "vda", "virtio"),
                     (str(files.extra_disk(0)), "vdb", "virtio")]


def test_a_vm_without_disk_has_no_disk_device(tmp_path: Path) -> None:
    spec = VmSpec(name="vm-2", mac=SPEC.mac, tap=SPEC.tap, disk_gb=0)
    assert domain(tmp_path, spec).findall("devices/disk") == []


def test_the_nic_is_an_unmanaged_ethernet_interface_on_the_tap(tmp_path: Path) -> None:
    (nic,) = domain(tmp_path).findall("devices/interface")
    assert nic.get("type") == "ethernet"
    assert attribute(nic, "mac", "address") == SPEC.mac
    assert attribute(nic, "target", "dev") == SPEC.tap
    assert attribute(nic, "target", "managed") == "no"


def test_the_smbios_system_entries_are_the_specs(tmp_path: Path) -> None:
    root = domain(tmp_path)
    entries = {e.get("name"): e.text for e in root.iterfind("sysinfo/system/entry")}
    assert entries == {"manufacturer": "Acme", "product": "Box-9", "serial": "SN-1",
                       "uuid": SPEC.uuid}
    assert attribute(root, "os/smbios", "mode") == "sysinfo"


def test_the_domain_boots_from_disk(tmp_path: Path) -> None:
    assert [b.get("dev") for b in domain(tmp_path).iter("boot")] == ["hd"]


# --- domain_xml: the firmware ------------------------------------------------------------------

def with_firmware(kind: str, *, ipv6_only: bool = False) -> VmSpec:
    return dataclasses.replace(SPEC, firmware=kind, ipv6_only=ipv6_only)


def test_a_bios_domain_has_libvirts_default_firmware_and_rom(tmp_path: Path) -> None:
    root = domain(tmp_path)
    assert root.find("os/loader") is None and root.find("os/nvram") is None
    assert root.find("devices/interface/rom") is None
    assert root.find("features/smm") is None


def test_every_domain_has_acpi_as_qemus_command_line(tmp_path: Path) -> None:
    assert domain(tmp_path).find("features/acpi") is not None


@pytest.mark.parametrize(("kind", "code", "secure"), [
    ("uefi", "/usr/share/OVMF/OVMF_CODE_4M.fd", "no"),
    ("uefi-secureboot", "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd", "yes")])
def test_a_uefi_domain_loads_ovmf_read_only_from_flash(tmp_path: Path, kind: str, code: str,
                                                      secure: str) -> None:
    loader = domain(tmp_path, with_firmware(kind)).find("os/loader")
    assert loader is not None and loader.text == code
    assert loader.attrib == {"readonly": "yes", "secure": secure, "type": "pflash"}


@pytest.mark.parametrize(("kind", "template"), [
    ("uefi", "/usr/share/OVMF/OVMF_VARS_4M.fd"),
    ("uefi-secureboot", "/usr/share/OVMF/OVMF_VARS_4M.ms.fd")])
def test_a_uefi_domains_nvram_is_the_vms_file_made_from_the_template(
        tmp_path: Path, kind: str, template: str) -> None:
    nvram = domain(tmp_path, with_firmware(kind)).find("os/nvram")
    assert nvram is not None and nvram.get("template") == template
    assert nvram.text == str(VmFiles(tmp_path, SPEC.name).nvram)


@pytest.mark.parametrize("kind", ["uefi", "uefi-secureboot"])
def test_a_uefi_domains_nic_has_no_option_rom(tmp_path: Path, kind: str) -> None:
    assert attribute(domain(tmp_path, with_firmware(kind)), "devices/interface/rom",
                     "enabled") == "no"


@pytest.mark.parametrize("kind", ["uefi", "uefi-secureboot"])
def test_a_uefi_domain_has_acpi(tmp_path: Path, kind: str) -> None:
    assert domain(tmp_path, with_firmware(kind)).find("features/acpi") is not None


def test_a_secure_boot_domain_has_smm_and_no_s3(tmp_path: Path) -> None:
    root = domain(tmp_path, with_firmware("uefi-secureboot"))
    assert attribute(root, "features/smm", "state") == "on"
    assert attribute(root, "pm/suspend-to-mem", "enabled") == "no"


def test_a_plain_uefi_domain_has_no_smm(tmp_path: Path) -> None:
    root = domain(tmp_path, with_firmware("uefi"))
    assert root.find("features/smm") is None and root.find("pm") is None


def test_an_ipv6_only_domain_offers_no_pxe_over_ipv4(tmp_path: Path) -> None:
    root = domain(tmp_path, with_firmware("uefi", ipv6_only=True))
    entries = {e.get("name"): e.text for e in root.iterfind("sysinfo[@type='fwcfg']/entry")}
    assert entries == {"opt/org.tianocore/IPv4PXESupport": "no"}


def test_a_dual_stack_domain_has_no_fw_cfg(tmp_path: Path) -> None:
    assert domain(tmp_path, with_firmware("uefi")).find("sysinfo[@type='fwcfg']") is None


# --- prepare ---------------------------------------------------------------------------------

@pytest.fixture
def keygen(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """ssh-keygen stand-in: a private key file and its `.pub`; the paths it was asked for."""
    made: list[Path] = []

    def fake(path: Path) -> None:
        made.append(path)
        path.write_text(f"private {path.name}\n")
        Path(f"{path}.pub").write_text(f"ssh-ed25519 AAAA{path.name}\n")

    monkeypatch.setattr(hypervisor, "_keygen", fake)
    return made


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_prepare_makes_its_directories_0700(tmp_path: Path, keygen: list[Path]) -> None:
    dirs = HypervisorDirs(tmp_path / "hv")
    prepare(dirs)
    assert mode(dirs.root) == 0o700
    assert mode(dirs.ssh) == 0o700
    assert all((dirs.root / name).is_dir() for name in hypervisor.MOUNTS)


def test_prepare_writes_libvirts_configuration(tmp_path: Path, keygen: list[Path]) -> None:
    dirs = HypervisorDirs(tmp_path / "hv")
    prepare(dirs)
    qemu = (dirs.root / "etc" / "qemu.conf").read_text()
    assert 'user = "root"' in qemu and "dynamic_ownership = 0" in qemu
    assert 'unix_sock_rw_perms = "0700"' in (dirs.root / "etc" / "libvirtd.conf").read_text()


def test_prepare_lets_sshd_accept_only_the_client_key(tmp_path: Path,
                                                      keygen: list[Path]) -> None:
    dirs = HypervisorDirs(tmp_path / "hv")
    prepare(dirs)
    sshd_config = (dirs.ssh / "sshd_config").read_text().splitlines()
    assert "ListenAddress 127.0.0.1:22" in sshd_config
    assert "PasswordAuthentication no" in sshd_config
    assert (dirs.ssh / "authorized_keys").read_text() == "ssh-ed25519 AAAAid_ed25519\n"
    assert dirs.client_key.read_text() == "private id_ed25519\n"


SHADOW_LINES = ["root:*:20228:0:99999:7:::", "daemon:*:20228:0:99999:7:::"]


@pytest.fixture
def shadow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "etc-shadow"
    path.write_text("\n".join(SHADOW_LINES) + "\n")
    monkeypatch.setattr(hypervisor, "SHADOW", path)
    return path


def test_prepare_with_a_password_lets_sshd_take_it_for_root(
        tmp_path: Path, keygen: list[Path], shadow: Path) -> None:
    dirs = HypervisorDirs(tmp_path / "hv")
    prepare(dirs, password="s3cret-pw")
    sshd_config = (dirs.ssh / "sshd_config").read_text().splitlines()
    assert "PasswordAuthentication yes" in sshd_config
    assert "PermitRootLogin yes" in sshd_config
    root, daemon = dirs.shadow.read_text().splitlines()
    fields = root.split(":")
    salt = fields[1].split("$")[2]  # SHA-512 crypt ($6$salt$hash) of the password given:
    again = subprocess.run(["openssl", "passwd", "-6", "-salt", salt, "-stdin"],
                           input="s3cret-pw", capture_output=True, text=True, check=True)
    assert fields[1] == again.stdout.strip()
    assert fields[:1] + fields[2:] == SHADOW_LINES[0].split(":")[:1] + \
        SHADOW_LINES[0].split(":")[2:]
    assert daemon == SHADOW_LINES[1]
    assert mode(dirs.shadow) == 0o600
    assert "s3cret-pw" not in dirs.shadow.read_text()
    assert shadow.read_text().splitlines() == SHADOW_LINES  # the machine's own: untouched


def test_prepare_without_a_password_removes_the_copy(
        tmp_path: Path, keygen: list[Path], shadow: Path) -> None:
    dirs = HypervisorDirs(tmp_path / "hv")
    prepare(dirs, password="s3cret-pw")
    prepare(dirs)
    assert not dirs.shadow.exists()
    assert "PermitRootLogin prohibit-password" in (dirs.ssh / "sshd_config").read_text()


def test_prepare_keeps_existing_keys(tmp_path: Path, keygen: list[Path]) -> None:
    dirs = HypervisorDirs(tmp_path / "hv")
    prepare(dirs)
    prepare(dirs)
    assert [path.name for path in keygen] == ["host_ed25519", "id_ed25519"]


def test_known_hosts_names_port_22_by_address_alone(tmp_path: Path,
                                                    keygen: list[Path]) -> None:
    dirs = HypervisorDirs(tmp_path / "hv")
    prepare(dirs)
    assert dirs.known_hosts.read_text() == "127.0.0.1 ssh-ed25519 AAAAhost_ed25519\n"


def test_known_hosts_names_another_port_in_brackets(tmp_path: Path,
                                                    keygen: list[Path]) -> None:
    dirs = HypervisorDirs(tmp_path / "hv")
    prepare(dirs, ssh_host="10.20.0.1", ssh_port=2222)
    assert dirs.known_hosts.read_text() == "[10.20.0.1]:2222 ssh-ed25519 AAAAhost_ed25519\n"


# --- unavailable -----------------------------------------------------------------------------

@pytest.fixture
def everything_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where libvirt can run: programs, QEMU driver, sshd, libvirt-qemu, root."""
    (tmp_path / "driver.so").touch()
    (tmp_path / "sshd").touch()
    monkeypatch.setattr(hypervisor.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(hypervisor, "QEMU_DRIVER", tmp_path / "driver.so")
    monkeypatch.setattr(hypervisor, "SSHD", str(tmp_path / "sshd"))
    monkeypatch.setattr(hypervisor.pwd, "getpwnam", lambda name: None)
    monkeypatch.setattr(hypervisor.grp, "getgrnam", lambda name: None)
    monkeypatch.setattr(hypervisor.os, "geteuid", lambda: 0)


def missing(monkeypatch: pytest.MonkeyPatch, program: str) -> None:
    monkeypatch.setattr(hypervisor.shutil, "which",
                        lambda name: None if name == program else f"/usr/bin/{name}")


def test_libvirt_can_run_when_everything_is_there(everything_there: None) -> None:
    assert unavailable() is None


@pytest.mark.parametrize(("program", "package"), [("virsh", "libvirt-clients"),
                                                  ("libvirtd", "libvirt-daemon"),
                                                  ("virtlogd", "libvirt-daemon")])
def test_a_missing_program_names_its_package(everything_there: None,
                                             monkeypatch: pytest.MonkeyPatch, program: str,
                                             package: str) -> None:
    missing(monkeypatch, program)
    reason = unavailable()
    assert reason is not None
    assert f"{program} is not installed" in reason and package in reason


def test_a_missing_qemu_driver_names_its_package(everything_there: None, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hypervisor, "QEMU_DRIVER", tmp_path / "absent.so")
    assert "libvirt-daemon-driver-qemu" in (unavailable() or "")


def test_a_missing_sshd_names_its_package(everything_there: None, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hypervisor, "SSHD", str(tmp_path / "absent"))
    assert "openssh-server" in (unavailable() or "")


@pytest.mark.parametrize("lookup", [pwd, grp], ids=["user", "group"])
def test_a_missing_libvirt_qemu_user_or_group_says_what_creates_it(
        everything_there: None, monkeypatch: pytest.MonkeyPatch, lookup: object) -> None:
    def absent(name: str) -> None:
        raise KeyError(name)

    monkeypatch.setattr(lookup, "getpwnam" if lookup is pwd else "getgrnam", absent)
    reason = unavailable() or ""
    assert "libvirt-qemu" in reason and "scripts/install-deps.sh" in reason


def test_libvirt_needs_root(everything_there: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hypervisor.os, "geteuid", lambda: 1000)
    assert "root" in (unavailable() or "")


# --- reaping what libvirtd leaves to the supervisor (a child subreaper) ----------------------

_REAPER_PROBE = """
import os, time
from pathlib import Path
from ironsight.lab.hypervisor import _Children, _become_subreaper

def parent(pid):
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])

_become_subreaper()
children = _Children()
own = children.spawn(["sh", "-c", "exit 3"])
read, write = os.pipe()
middle = os.fork()
if middle == 0:  # as libvirtd daemonizes QEMU: the middle process exits, its child lives on
    orphan = os.fork()
    if orphan == 0:
        time.sleep(0.5)
        os._exit(0)
    os.write(write, str(orphan).encode())
    os._exit(0)
os.waitpid(middle, 0)
orphan = int(os.read(read, 32))
adopted = parent(orphan) == os.getpid()
time.sleep(1.0)  # both have ended by now
zombie = Path(f"/proc/{orphan}").exists()
children.reap_orphans()
while own.poll() is None:  # if `own` came first in the queue
    children.reap_orphans()
children.reap_orphans()
print(adopted, zombie, Path(f"/proc/{orphan}").exists(), own.returncode)
"""


def test_the_supervisor_adopts_and_reaps_orphans_and_keeps_its_own_childrens_status(
        ) -> None:
    result = subprocess.run([sys.executable, "-c", _REAPER_PROBE], capture_output=True,
                            text=True, timeout=30, check=True)
    assert result.stdout.split() == ["True", "True", "False", "3"], result
