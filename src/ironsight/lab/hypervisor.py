"""A libvirt hypervisor of the lab's own, reached over SSH as an operator's would be: the far
side of `pxe_ssh`.

`python -m ironsight.lab.hypervisor DIR` runs inside the lab's network namespace (so that the
domains' taps are the lab's) and in a private mount namespace, where libvirt's fixed paths
(/etc/libvirt, /run/libvirt, /var/lib/libvirt, /var/log/libvirt, /var/cache/libvirt) are
directories under DIR: the machine's own libvirt configuration and state, if any, are never
read or changed, and several hypervisors (a lab, a test) can run side by side. It starts
`virtlogd`, `libvirtd` and an `sshd` (key login only, for root, on 127.0.0.1:22 of the
namespace) as its children, writes DIR/ready.json once all three answer, and on SIGTERM
destroys the running domains and ends its children.

Domains are TCG (`type='qemu'`: KVM cannot boot stock kernels on these machines), with the
lab VM's tap as an unmanaged `ethernet` interface, so libvirt creates no network, bridge or
firewall rule. Their firmware is the lab VM's (firmware.py): SeaBIOS, or OVMF given by path
(`<loader>`, the VM's variables as `<nvram>` copied by libvirt from the template at the first
start), with no option ROM on the NIC. Everything on the root side (`Hypervisor`) talks to
that libvirtd through its socket, DIR/run/libvirt-sock, with
`virsh -c qemu:///system?socket=...`.

What libvirt needs on the machine (Debian 12; scripts/install-deps.sh does it): the packages
libvirt-daemon, libvirt-daemon-driver-qemu and libvirt-clients without recommends, and the
user and group `libvirt-qemu`, which the QEMU driver resolves before it reads its
configuration (ours then runs QEMU as root, `dynamic_ownership = 0`).
"""

from __future__ import annotations

import contextlib
import ctypes
import grp
import json
import logging
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ironsight.client.wait import Poller, until
from ironsight.lab import firmware
from ironsight.lab.processes import child_exited, log_tail, spawn, terminate
from ironsight.lab.qemu import QEMU, VmFiles, VmSpec

LOG = logging.getLogger(__name__)

QEMU_DRIVER = Path("/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so")
SSHD = "/usr/sbin/sshd"
SHADOW = Path("/etc/shadow")
SSH_PORT = 22  # of the namespace's 127.0.0.1
SSH_USER = "root"
# What virsh connects to in an SSH session there (the session is in the private mount
# namespace, where /run/libvirt is the hypervisor's own)
LIBVIRT_URI = "qemu:///system"
START_TIMEOUT = 60.0
COMMAND_TIMEOUT = 60.0
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
REAP_INTERVAL = 0.5
# libvirt's fixed paths, each replaced by a directory of the hypervisor's own
MOUNTS = {"etc": "/etc/libvirt", "run": "/run/libvirt", "lib": "/var/lib/libvirt",
          "log": "/var/log/libvirt", "cache": "/var/cache/libvirt"}
PACKAGES = "libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients"


class HypervisorError(Exception):
    """The hypervisor cannot start or a virsh command failed; the message says which."""


def unavailable() -> str | None:
    """Why libvirt cannot run on this machine (what to install or create), or None."""
    for program in ("libvirtd", "virtlogd", "virsh"):
        if shutil.which(program) is None:
            return (f"{program} is not installed (apt-get install --no-install-recommends "
                    f"{PACKAGES})")
    if not QEMU_DRIVER.exists():
        return "libvirt's QEMU driver is not installed (libvirt-daemon-driver-qemu)"
    if not os.path.exists(SSHD) or shutil.which("ssh-keygen") is None:
        return "sshd is not installed (openssh-server)"
    try:
        pwd.getpwnam("libvirt-qemu")
        grp.getgrnam("libvirt-qemu")
    except KeyError:
        return ("the user and group libvirt-qemu do not exist (libvirt's QEMU driver needs "
                "them: scripts/install-deps.sh creates them)")
    if os.geteuid() != 0:
        return "libvirt's system daemon needs root"
    return None


@dataclass(frozen=True)
class HypervisorDirs:
    """Where one hypervisor keeps everything (0700: its keys are there)."""

    root: Path

    @property
    def socket(self) -> Path:
        return self.root / "run" / "libvirt-sock"

    @property
    def uri(self) -> str:
        return f"qemu:///system?socket={self.socket}"

    @property
    def ssh(self) -> Path:
        return self.root / "ssh"

    @property
    def client_key(self) -> Path:
        """The private key `pxe_ssh` nodes carry in driver_info (ssh_key_contents)."""
        return self.ssh / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        """The hypervisor's host key, for the conductor's `[ssh] known_hosts`."""
        return self.ssh / "known_hosts"

    @property
    def shadow(self) -> Path:
        """/etc/shadow as the hypervisor's sshd sees it, when root has a password there."""
        return self.ssh / "shadow"

    @property
    def ready(self) -> Path:
        return self.root / "ready.json"

    @property
    def log(self) -> Path:
        return self.root / "hypervisor.log"


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", str(path)],
                   check=True, capture_output=True, timeout=30)


def prepare(dirs: HypervisorDirs, ssh_host: str = "127.0.0.1", ssh_port: int = SSH_PORT,
            password: str | None = None) -> None:
    """Lay out the directories, libvirt's configuration, sshd's and the keys (a host key,
    and the client key whose public half sshd accepts for root). Kept when already there.

    With `password`, sshd also takes it for root: the hypervisor's mount namespace sees a
    copy of /etc/shadow with root's hash replaced (the machine's own is never changed)."""
    dirs.root.mkdir(parents=True, exist_ok=True)
    dirs.root.chmod(0o700)
    for name in MOUNTS:
        (dirs.root / name).mkdir(exist_ok=True)
    etc = dirs.root / "etc"
    (etc / "qemu.conf").write_text('user = "root"\ngroup = "root"\ndynamic_ownership = 0\n')
    (etc / "libvirtd.conf").write_text('unix_sock_group = "root"\nunix_sock_rw_perms = "0700"\n'
                                       'auth_unix_rw = "none"\nlog_outputs = "3:stderr"\n')
    dirs.ssh.mkdir(exist_ok=True)
    dirs.ssh.chmod(0o700)
    host_key = dirs.ssh / "host_ed25519"
    if not host_key.exists():
        _keygen(host_key)
    if not dirs.client_key.exists():
        _keygen(dirs.client_key)
    (dirs.ssh / "authorized_keys").write_text(
        (dirs.ssh / "id_ed25519.pub").read_text())
    host_public = (dirs.ssh / "host_ed25519.pub").read_text().split()
    name = ssh_host if ssh_port == 22 else f"[{ssh_host}]:{ssh_port}"
    dirs.known_hosts.write_text(f"{name} {host_public[0]} {host_public[1]}\n")
    (dirs.ssh / "sshd_config").write_text(f"""\
ListenAddress {ssh_host}:{ssh_port}
HostKey {host_key}
PidFile {dirs.ssh}/sshd.pid
AuthorizedKeysFile {dirs.ssh}/authorized_keys
PermitRootLogin {"yes" if password else "prohibit-password"}
PasswordAuthentication {"yes" if password else "no"}
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
""")
    _write_shadow(dirs, password)


def _write_shadow(dirs: HypervisorDirs, password: str | None) -> None:
    dirs.shadow.unlink(missing_ok=True)
    if password is None:
        return
    hashed = subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=password,
                            capture_output=True, text=True, check=True, timeout=30)
    lines = []
    for line in SHADOW.read_text().splitlines():
        fields = line.split(":")
        if fields[0] == SSH_USER:
            fields[1] = hashed.stdout.strip()
        lines.append(":".join(fields))
    fd = os.open(dirs.shadow, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write("\n".join(lines) + "\n")


# --- inside the namespaces: the supervisor -----------------------------------------------

def _bind_mounts(dirs: HypervisorDirs) -> None:
    binds = [(dirs.root / name, target) for name, target in MOUNTS.items()]
    if dirs.shadow.exists():
        binds.append((dirs.shadow, str(SHADOW)))
    for source, target in binds:
        subprocess.run(["mount", "--bind", str(source), target], check=True,
                       capture_output=True, timeout=10)


def _listening(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
        return True
    return False


class _Children:
    """The supervisor's own children, and the orphans it adopts as a child subreaper.

    libvirtd daemonizes every QEMU it starts, so a QEMU's parent is the nearest subreaper,
    else PID 1; and `virsh destroy` returns only once the QEMU's pid is gone, i.e. reaped.
    An init that reaps lazily (this kind of machine's takes about 1.5 s) made every pxe_ssh
    power off wait for it; a hypervisor host's systemd reaps at once, and so do we.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._own: dict[int, subprocess.Popen[bytes]] = {}

    def spawn(self, args: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        with self._lock:  # registered before the reaper can see it end
            proc = subprocess.Popen(list(args), **kwargs)
            self._own[proc.pid] = proc
            return proc

    def run(self, args: Sequence[str], timeout: float) -> str:
        """A command's standard output (its errors are not ours to handle here)."""
        proc = self.spawn(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        return out.decode(errors="replace")

    def reap_orphans(self) -> None:
        with self._lock:
            while True:
                try:
                    ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                except ChildProcessError:
                    return
                if ended is None:
                    return
                own = self._own.get(ended.si_pid)
                if own is None:
                    os.waitpid(ended.si_pid, 0)
                elif own.poll() is None:
                    return  # being waited for elsewhere; it goes first
                else:
                    del self._own[ended.si_pid]


def _become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _reap_until(done: threading.Event, children: _Children) -> threading.Thread:
    ended = threading.Event()
    signal.signal(signal.SIGCHLD, lambda *_: ended.set())

    def reap() -> None:
        while not done.is_set():
            ended.wait(REAP_INTERVAL)  # the interval in case a signal came in between
            ended.clear()
            children.reap_orphans()

    thread = threading.Thread(target=reap, name="reaper", daemon=True)
    thread.start()
    return thread


def supervise(dirs: HypervisorDirs) -> int:
    """Run virtlogd, libvirtd and sshd until SIGTERM (in the namespaces `Hypervisor.start`
    put this process in), and reap the QEMUs libvirtd leaves to us."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    _bind_mounts(dirs)
    _become_subreaper()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    children = _Children()
    reaping = threading.Event()
    reaper = _reap_until(reaping, children)
    started: list[subprocess.Popen[bytes]] = []
    try:
        # pid files in our /run/libvirt: their default, /run/<daemon>.pid, is the machine's
        # (shared with every other hypervisor, which would make the second one fail to start)
        for daemon in ("virtlogd", "libvirtd"):
            started.append(children.spawn(
                [daemon, "--pid-file", f"{MOUNTS['run']}/{daemon}.pid"]))
        if not until(lambda: Path(MOUNTS["run"], "libvirt-sock").exists()
                     or any(c.poll() is not None for c in started), START_TIMEOUT,
                     Poller(interval=0.1)) or any(c.poll() is not None for c in started):
            LOG.error("libvirtd did not start")
            return 1
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation
        started.append(children.spawn([SSHD, "-D", "-e", "-f",
                                       str(dirs.ssh / "sshd_config")]))
        if not until(lambda: _listening("127.0.0.1", SSH_PORT) or started[-1].poll()
                     is not None, START_TIMEOUT, Poller(interval=0.1)) or \
                started[-1].poll() is not None:
            LOG.error("sshd did not start")
            return 1
        dirs.ready.write_text(json.dumps({"pid": os.getpid()}))
        LOG.info("hypervisor ready: libvirtd on %s, sshd on 127.0.0.1:%d", dirs.socket,
                 SSH_PORT)
        while not stop.wait(1.0):
            if any(c.poll() is not None for c in started):
                LOG.error("a child ended: %s", [c.args for c in started
                                                 if c.poll() is not None])
                return 1
        return 0
    finally:
        _destroy_domains(children)
        for child in reversed(started):
            if child.poll() is None:
                child.terminate()
                try:
                    child.wait(10)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait(5)
        reaping.set()
        reaper.join(REAP_INTERVAL + 1)
        children.reap_orphans()


def _destroy_domains(children: _Children) -> None:
    """Running domains end with their hypervisor (as a lab's VMs power off at `down`)."""
    for name in children.run(["virsh", "-c", LIBVIRT_URI, "list", "--name"], 30).split():
        children.run(["virsh", "-c", LIBVIRT_URI, "destroy", name], 30)


# --- the root side ---------------------------------------------------------------------------

def domain_xml(spec: VmSpec, files: VmFiles, *, emulator: str = QEMU) -> str:
    """A lab VM as a libvirt domain: the same hardware as `qemu.command_line` gives it
    (vCPUs, memory, disks, NIC on its tap, SMBIOS system, serial port in a file, firmware),
    booting from disk until the driver sets another device."""
    path = shutil.which(emulator) or emulator
    fw = firmware.get(spec.firmware)
    domain = ET.Element("domain", type="qemu")
    ET.SubElement(domain, "name").text = spec.name
    ET.SubElement(domain, "uuid").text = spec.system_uuid
    ET.SubElement(domain, "memory", unit="MiB").text = str(spec.memory_mb)
    ET.SubElement(domain, "vcpu").text = str(spec.cpus)
    system = ET.SubElement(ET.SubElement(domain, "sysinfo", type="smbios"), "system")
    for key, value in (("manufacturer", spec.manufacturer), ("product", spec.product),
                       ("serial", spec.system_serial), ("uuid", spec.system_uuid)):
        ET.SubElement(system, "entry", name=key).text = value
    entries = firmware.fw_cfg(spec.firmware, spec.ipv6_only)
    if entries:  # what OVMF leaves out of its network boot (as QEMU's -fw_cfg)
        fw_cfg = ET.SubElement(domain, "sysinfo", type="fwcfg")
        for name, value in entries.items():
            ET.SubElement(fw_cfg, "entry", name=name).text = value
    os_element = ET.SubElement(domain, "os")
    ET.SubElement(os_element, "type", arch="x86_64", machine="q35").text = "hvm"
    if fw.uefi:
        ET.SubElement(os_element, "loader", readonly="yes",
                      secure="yes" if fw.secure_boot else "no",
                      type="pflash").text = str(fw.code)
        ET.SubElement(os_element, "nvram",
                      template=str(fw.vars_template)).text = str(files.nvram)
    ET.SubElement(os_element, "boot", dev="hd")
    ET.SubElement(os_element, "smbios", mode="sysinfo")
    # ACPI, as QEMU's command line has it by default (libvirt turns it off unless told): OVMF
    # hands the OS its hardware in ACPI tables, and a BIOS VM switched to UEFI (Redfish boot
    # mode) needs it too
    features = ET.SubElement(domain, "features")
    ET.SubElement(features, "acpi")
    if fw.uefi and fw.secure_boot:  # OVMF's secure build runs only with SMM; no S3 (qemu.py)
        ET.SubElement(features, "smm", state="on")
        ET.SubElement(ET.SubElement(domain, "pm"), "suspend-to-mem", enabled="no")
    ET.SubElement(domain, "on_reboot").text = "restart"
    devices = ET.SubElement(domain, "devices")
    ET.SubElement(devices, "emulator").text = path
    disks = ([(files.disk, "vda")] if spec.disk_gb else []) + [
        (files.extra_disk(i), f"vd{chr(ord('b') + i)}") for i in range(len(spec.extra_disks_mb))]
    for source, target in disks:
        disk = ET.SubElement(devices, "disk", type="file", device="disk")
        ET.SubElement(disk, "driver", name="qemu", type="qcow2")
        ET.SubElement(disk, "source", file=str(source))
        ET.SubElement(disk, "target", dev=target, bus="virtio")
    nic = ET.SubElement(devices, "interface", type="ethernet")
    ET.SubElement(nic, "mac", address=spec.mac)
    ET.SubElement(nic, "target", dev=spec.tap, managed="no")
    ET.SubElement(nic, "model", type="virtio")
    if fw.uefi:  # OVMF's own PXE boots it, not iPXE's ROM
        ET.SubElement(nic, "rom", enabled="no")
    serial = ET.SubElement(devices, "serial", type="file")
    ET.SubElement(serial, "source", path=str(files.serial_log), append="on")
    ET.SubElement(serial, "target", port="0")
    return ET.tostring(domain, encoding="unicode")


class Hypervisor:
    """One hypervisor's directories and its supervisor process, seen from the root
    namespace."""

    def __init__(self, root: Path) -> None:
        self.dirs = HypervisorDirs(root.resolve())

    def start(self, namespace: str, password: str | None = None) -> int:
        """Start the supervisor in `namespace` (which must exist); returns its pid once
        libvirtd and sshd answer. sshd takes the client key for root, and `password` too
        when given."""
        reason = unavailable()
        if reason:
            raise HypervisorError(reason)
        prepare(self.dirs, password=password)
        self.dirs.ready.unlink(missing_ok=True)
        for target in MOUNTS.values():  # mount points (empty) for the private binds
            Path(target).mkdir(parents=True, exist_ok=True)
        pid = spawn(["ip", "netns", "exec", namespace, "unshare", "--mount",
                     "--propagation", "private", sys.executable, "-m",
                     "ironsight.lab.hypervisor", str(self.dirs.root)], self.dirs.log)

        def ready() -> bool:
            if child_exited(pid):
                raise HypervisorError(f"the hypervisor exited during start-up; "
                                      f"{self.dirs.log}:\n{log_tail(self.dirs.log, 30)}")
            return self.dirs.ready.exists()

        if not until(ready, START_TIMEOUT, Poller(interval=0.1)):
            terminate(pid, 10)
            raise HypervisorError(f"the hypervisor did not start within {START_TIMEOUT:.0f} "
                                  f"s; see {self.dirs.log}")
        return pid

    @staticmethod
    def stop(pid: int, grace: float = 30.0) -> None:
        terminate(pid, grace)

    def virsh(self, *args: str, stdin: str | None = None) -> str:
        """A virsh command on this hypervisor (through its socket, not SSH)."""
        argv = ["virsh", "-c", self.dirs.uri, *args]
        try:
            proc = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                                  timeout=COMMAND_TIMEOUT, check=False,
                                  env={**os.environ, "LC_ALL": "C"})
        except subprocess.TimeoutExpired:
            raise HypervisorError(f"virsh {' '.join(args)}: no answer within "
                                  f"{COMMAND_TIMEOUT:.0f} s") from None
        if proc.returncode != 0:
            raise HypervisorError(f"virsh {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def define(self, spec: VmSpec, files: VmFiles) -> None:
        self.virsh("define", "/dev/stdin", stdin=domain_xml(spec, files))

    def ensure_pool(self, name: str) -> Path:
        """A directory storage pool of this hypervisor's own, started (where sushy-tools'
        emulator uploads the virtual media it inserts); its directory."""
        path = self.dirs.root / f"pool-{name}"
        path.mkdir(mode=0o700, exist_ok=True)
        if name not in self.virsh("pool-list", "--all", "--name").split():
            self.virsh("pool-define-as", name, "dir", "--target", str(path))
        if name not in self.virsh("pool-list", "--name").split():
            self.virsh("pool-start", name)
        return path

    def state(self, name: str) -> str:
        """`virsh domstate`: "running", "shut off"..."""
        return self.virsh("domstate", name).strip()

    def domain_id(self, name: str) -> str:
        """A new one at every start ("-" while shut off)."""
        return self.virsh("domid", name).strip()

    def dumpxml(self, name: str, inactive: bool = True) -> str:
        return self.virsh("dumpxml", *(["--inactive"] if inactive else []), name)


def wait_state(hypervisor: Hypervisor, name: str, wanted: str, timeout: float) -> bool:
    """Whether the domain reaches `wanted` within `timeout` seconds."""
    return until(lambda: hypervisor.state(name) == wanted, timeout, Poller(interval=0.2))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 1:
        return supervise(HypervisorDirs(Path(args[0])))
    print("usage: python -m ironsight.lab.hypervisor DIR  (started by Hypervisor.start)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
