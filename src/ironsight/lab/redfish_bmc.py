"""A Redfish BMC in front of libvirt domains: sushy-tools' emulator (the one Ironic's CI and
Metal3's development environment run) with its libvirt driver, from a venv of its own
(scripts/ensure-sushy-tools.sh), behind HTTP basic credentials (bcrypt) and TLS.

Its configuration file holds no password (only the bcrypt digests' file), and nothing secret
is passed on its command line.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import bcrypt
import httpx

from ironsight.lab.firmware import OVMF_CODE, OVMF_VARS, OVMF_VARS_MS

ROOT = Path(__file__).resolve().parents[3]
# Legacy: SeaBIOS named as a ROM loader, so that a domain can go back from UEFI
SEABIOS = "/usr/share/seabios/bios-256k.bin"  # qemu-system-x86's
# UEFI: OVMF's plain build (its Secure Boot build runs only with SMM, which the emulator does
# not turn on); a lab VM that boots Secure Boot is defined so from the start
BOOT_LOADER_MAP = {"UEFI": {"x86_64": str(OVMF_CODE)}, "Legacy": {"x86_64": SEABIOS}}
VENV_ENV = "IRONSIGHT_SUSHY_TOOLS_VENV"
VMEDIA_POOL = "ironsight-vmedia"  # the libvirt storage pool inserted media are uploaded to


def venv() -> Path:
    return Path(os.environ.get(VENV_ENV) or ROOT / ".state" / "sushy-tools-venv")


def unavailable() -> str | None:
    """Why the emulator cannot run here, or None."""
    if not (venv() / "bin" / "sushy-emulator").exists():
        return (f"no sushy-tools venv at {venv()} (scripts/ensure-sushy-tools.sh .state, or "
                f"set {VENV_ENV})")
    return None


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class RedfishEmulator:
    """One emulator process: `users` (name -> password) may log in; with `cert` and `key` it
    speaks HTTPS."""

    root: Path
    libvirt_uri: str
    users: dict[str, str]
    cert: Path | None = None
    key: Path | None = None
    host: str = "127.0.0.1"
    port: int = 0
    # the libvirt storage pool inserted media are uploaded to (Hypervisor.ensure_pool)
    storage_pool: str | None = None
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        scheme = "https" if self.cert else "http"
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def log(self) -> Path:
        return self.root / "sushy-emulator.log"

    def system_id(self, domain_uuid: str) -> str:
        """The Redfish path of a libvirt domain (the emulator names systems by UUID)."""
        return f"/redfish/v1/Systems/{domain_uuid}"

    def write_config(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        htpasswd = self.root / "htpasswd"
        htpasswd.write_text("".join(
            f"{user}:{bcrypt.hashpw(pw.encode(), bcrypt.gensalt(6)).decode()}\n"
            for user, pw in self.users.items()))
        htpasswd.chmod(0o600)
        lines = [f"SUSHY_EMULATOR_LISTEN_IP = {self.host!r}",
                 f"SUSHY_EMULATOR_LISTEN_PORT = {self.port}",
                 f"SUSHY_EMULATOR_LIBVIRT_URI = {self.libvirt_uri!r}",
                 f"SUSHY_EMULATOR_AUTH_FILE = {str(htpasswd)!r}",
                 "SUSHY_EMULATOR_IGNORE_BOOT_DEVICE = False",
                 # Debian's OVMF (the lab's UEFI VMs' firmware, lab/firmware.py), where
                 # the emulator's defaults name files Debian does not ship
                 f"SUSHY_EMULATOR_BOOT_LOADER_MAP = {BOOT_LOADER_MAP!r}",
                 f"SUSHY_EMULATOR_SECURE_BOOT_ENABLED_NVRAM = {str(OVMF_VARS_MS)!r}",
                 f"SUSHY_EMULATOR_SECURE_BOOT_DISABLED_NVRAM = {str(OVMF_VARS)!r}"]
        if self.storage_pool:
            lines.append(f"SUSHY_EMULATOR_STORAGE_POOL = {self.storage_pool!r}")
        if self.cert and self.key:
            lines += [f"SUSHY_EMULATOR_SSL_CERT = {str(self.cert)!r}",
                      f"SUSHY_EMULATOR_SSL_KEY = {str(self.key)!r}"]
        path = self.root / "emulator.conf"
        path.write_text("\n".join(lines) + "\n")
        return path

    def command(self) -> list[str]:
        """The emulator's command line (its configuration written first); nothing secret."""
        return [str(venv() / "bin" / "sushy-emulator"), "--config", str(self.write_config())]

    def start(self, timeout: float = 30) -> RedfishEmulator:
        """Run here (the tests); the lab runs `command()` in its namespace instead."""
        if not self.port:
            self.port = _free_port(self.host)
        argv = self.command()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sushy-emulator exited:\n{self.log.read_text()[-3000:]}")
            try:  # the service root needs no credentials
                httpx.get(f"{self.url}/redfish/v1", verify=False, timeout=1)
                return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"sushy-emulator did not answer:\n"
                                   f"{self.log.read_text()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
