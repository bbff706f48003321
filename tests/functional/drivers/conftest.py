"""Real programs for the driver tests: `ipmitool` against the virtual BMC (fixtures in
tests/conftest.py); a real `sshd` whose sessions find a stand-in `virsh` first on PATH (runs
wherever sshd does; it keeps each domain's state and XML in files, so a test can check what
the driver really did on the "hypervisor"); and, where libvirt can run, a real libvirt
hypervisor (ironsight.lab.hypervisor) in a network namespace of the tests' own, its sshd
published on a loopback port of the root namespace."""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import random
import secrets
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ironsight.common import config
from ironsight.lab import network
from ironsight.lab.hypervisor import Hypervisor, HypervisorError, unavailable
from ironsight.lab.network import LabNetwork, PortForward
from ironsight.lab.qemu import VmFiles, VmSpec

from ..conftest import free_tcp_port

SSHD = "/usr/sbin/sshd"

FAKE_VIRSH = r"""#!/bin/sh
# Stand-in for virsh: domains are directories under $FAKE_VIRSH_DIR holding `state`
# ("running" or "shut off") and `domain.xml`; every call is appended to `calls`.
dir=$FAKE_VIRSH_DIR
if [ "$1" = "--connect" ]; then shift 2; fi
cmd=$1
shift
echo "$cmd $*" >> "$dir/calls"
die() { echo "error: $*" >&2; exit 1; }
domain() { [ -d "$dir/$1" ] || die "failed to get domain '$1'"; echo "$dir/$1"; }
case "$cmd" in
  domstate)
    d=$(domain "$1") || exit 1
    cat "$d/state"; echo ;;
  start)
    d=$(domain "$1") || exit 1
    [ "$(cat "$d/state")" = "shut off" ] || die "domain is already running"
    echo running > "$d/state"; echo "Domain '$1' started" ;;
  destroy)
    d=$(domain "$1") || exit 1
    [ "$(cat "$d/state")" = "running" ] || die "domain is not running"
    echo "shut off" > "$d/state"; echo "Domain '$1' destroyed" ;;
  dumpxml)
    [ "$1" = "--inactive" ] && shift
    d=$(domain "$1") || exit 1
    cat "$d/domain.xml" ;;
  define)
    xml=$(cat "$1")
    name=$(printf '%s\n' "$xml" | sed -n 's:.*<name>\(.*\)</name>.*:\1:p' | head -n 1)
    d=$(domain "$name") || exit 1
    printf '%s\n' "$xml" > "$d/domain.xml"; echo "Domain '$name' defined from $1" ;;
  *)
    die "unknown command '$cmd'" ;;
esac
"""

DOMAIN_XML = """<domain type='qemu'>
  <name>{name}</name>
  <memory unit='MiB'>512</memory>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <boot dev='hd'/>
  </os>
  <devices>
    <interface type='network'><source network='default'/></interface>
  </devices>
</domain>
"""


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", str(path)],
                   check=True)
    return path.read_text()


@dataclass
class Sshd:
    port: int
    username: str
    key: str  # private key whose public half is authorized
    other_key: str  # a private key sshd does not know
    virsh_dir: Path

    def driver_info(self, vm_name: str, **extra: Any) -> dict[str, Any]:
        return {"ssh_address": "127.0.0.1", "ssh_port": self.port,
                "ssh_username": self.username, "ssh_key_contents": self.key,
                "ssh_virt_type": "virsh", "ssh_vm_name": vm_name, **extra}


@dataclass
class Domain:
    """A virtual machine of the stand-in virsh."""

    name: str
    path: Path

    @property
    def state(self) -> str:
        return (self.path / "state").read_text().strip()

    @property
    def xml(self) -> str:
        return (self.path / "domain.xml").read_text()

    def calls(self, virsh_dir: Path) -> list[str]:
        lines = (virsh_dir / "calls").read_text().splitlines()
        return [line for line in lines if line.split(" ")[-1] == self.name]


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited:\n{log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on port {port}:\n{log.read_text()}")


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    """A real sshd on 127.0.0.1 (key login only) whose sessions run the stand-in virsh:
    only where libvirt cannot run (elsewhere test_ssh_libvirt.py checks the same behaviours
    against the real virsh; IRONSIGHT_TEST_STAND_IN_VIRSH=1 runs it anyway)."""
    if unavailable() is None and not os.environ.get("IRONSIGHT_TEST_STAND_IN_VIRSH"):
        pytest.skip("libvirt runs here: the same behaviours are tested against the real "
                    "virsh (test_ssh_libvirt.py), the stand-in is for machines without it")
    if not os.path.exists(SSHD) or shutil.which("ssh-keygen") is None:
        pytest.skip("sshd is not installed (apt-get install openssh-server)")
    tmp = tmp_path_factory.mktemp("sshd")
    bin_dir, virsh_dir = tmp / "bin", tmp / "virsh"
    bin_dir.mkdir()
    virsh_dir.mkdir()
    (virsh_dir / "calls").touch()
    virsh = bin_dir / "virsh"
    virsh.write_text(FAKE_VIRSH)
    virsh.chmod(0o755)
    _keygen(tmp / "host_key")
    key = _keygen(tmp / "client_key")
    other_key = _keygen(tmp / "other_key")
    (tmp / "authorized_keys").write_text((tmp / "client_key.pub").read_text())
    port = free_tcp_port()
    (tmp / "sshd_config").write_text(f"""\
Port {port}
ListenAddress 127.0.0.1
HostKey {tmp}/host_key
PidFile {tmp}/sshd.pid
AuthorizedKeysFile {tmp}/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
SetEnv PATH={bin_dir}:/usr/local/bin:/usr/bin:/bin FAKE_VIRSH_DIR={virsh_dir}
""")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    log = tmp / "sshd.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(tmp / "sshd_config")],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, proc, log)
        yield Sshd(port=port, username=pwd.getpwuid(os.geteuid()).pw_name, key=key,
                   other_key=other_key, virsh_dir=virsh_dir)
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def domain(sshd: Sshd) -> Domain:
    """A fresh domain, shut off, booting from disk."""
    name = f"vm-{uuid.uuid4().hex[:8]}"
    path = sshd.virsh_dir / name
    path.mkdir()
    (path / "state").write_text("shut off\n")
    (path / "domain.xml").write_text(DOMAIN_XML.format(name=name))
    return Domain(name=name, path=path)


# --- a real libvirt hypervisor ----------------------------------------------------------------

LIBVIRT_TAPS = ("isv-t0", "isv-t1")  # taken in turn; a domain holds its tap while running
CONF_OVERRIDES = {"connect_timeout": "10", "command_timeout": "30"}


def _known_hosts(path: Path, port: int, host_public_key: Path) -> Path:
    kind, key = host_public_key.read_text().split()[:2]
    path.write_text(f"[127.0.0.1]:{port} {kind} {key}\n")
    return path


@dataclass
class Libvirt:
    """The real hypervisor as the driver sees it (sshd on 127.0.0.1:`port`) and as a test
    checks it (`hypervisor.virsh` etc., through libvirtd's socket, not SSH)."""

    hypervisor: Hypervisor
    port: int
    key: str  # the client key sshd accepts for root
    password: str  # root's password as sshd sees it (in the hypervisor's namespace only)
    other_key: str  # a private key sshd does not know
    known_hosts: Path  # the hypervisor's real host key for [127.0.0.1]:port
    wrong_known_hosts: Path  # another host key for the same name
    run_dir: Path  # the domains' serial logs
    taps: Iterator[str]

    def conf(self, known_hosts: Path | None = None) -> config.Config:
        return config.load(overrides={"ssh": {
            **CONF_OVERRIDES, "known_hosts": str(known_hosts or self.known_hosts)}})

    def driver_info(self, vm_name: str, **extra: Any) -> dict[str, Any]:
        return {"ssh_address": "127.0.0.1", "ssh_port": self.port, "ssh_username": "root",
                "ssh_key_contents": self.key, "ssh_virt_type": "virsh",
                "ssh_vm_name": vm_name, **extra}


@pytest.fixture(scope="module")
def libvirt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Libvirt]:
    """libvirtd, virtlogd and sshd in a network namespace of this process's own (with a
    bridge and taps for the domains' NICs, nothing leading out)."""
    tmp = tmp_path_factory.mktemp("libvirt")
    net = LabNetwork(namespace=f"isv-{os.getpid()}", bridge="br-t")
    network.create(net, taps=LIBVIRT_TAPS)
    forward: PortForward | None = None
    pid: int | None = None
    try:
        hypervisor = Hypervisor(tmp / "hypervisor")
        password = "pw-" + secrets.token_hex(12)
        pid = hypervisor.start(net.namespace, password=password)
        forward = PortForward(net.namespace, ("127.0.0.1", 22)).start()
        port = forward.address[1]
        _keygen(tmp / "other_key")
        _keygen(tmp / "other_host_key")
        run_dir = tmp / "domains"
        run_dir.mkdir()
        yield Libvirt(
            hypervisor=hypervisor, port=port, key=hypervisor.dirs.client_key.read_text(),
            password=password,
            other_key=(tmp / "other_key").read_text(),
            known_hosts=_known_hosts(tmp / "known_hosts", port,
                                     hypervisor.dirs.ssh / "host_ed25519.pub"),
            wrong_known_hosts=_known_hosts(tmp / "wrong_known_hosts", port,
                                           tmp / "other_host_key.pub"),
            run_dir=run_dir, taps=itertools.cycle(LIBVIRT_TAPS))
    finally:
        if forward is not None:
            forward.close()
        if pid is not None:
            Hypervisor.stop(pid)
        network.destroy(net)


@pytest.fixture
def libvirt_domain(libvirt: Libvirt) -> Iterator[str]:
    """A fresh domain, shut off, booting from disk (it has none: 128 MiB and a NIC); its
    name. Destroyed (when running) and undefined afterwards."""
    name = f"isv-{uuid.uuid4().hex[:8]}"
    mac = "52:54:00:" + ":".join(f"{random.randrange(256):02x}" for _ in range(3))
    spec = VmSpec(name=name, mac=mac, tap=next(libvirt.taps), memory_mb=128, disk_gb=0)
    libvirt.hypervisor.define(spec, VmFiles(libvirt.run_dir, name))
    try:
        yield name
    finally:
        if libvirt.hypervisor.state(name) != "shut off":
            with contextlib.suppress(HypervisorError):  # it may have stopped meanwhile
                libvirt.hypervisor.virsh("destroy", name)
        libvirt.hypervisor.virsh("undefine", name)
