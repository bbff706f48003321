"""A stock ironic-python-agent (from the package registry, in a venv of its own: `make test`
creates it with scripts/ensure-ipa.sh) run against live services by ipa_runner.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ironsight.lab.machines import MachineSpec

from ..conftest import free_tcp_port

ROOT = Path(__file__).resolve().parents[3]
VENV = Path(os.environ.get("IRONSIGHT_TEST_IPA_VENV") or ROOT / ".state" / "ipa-venv")
RUNNER = Path(__file__).with_name("ipa_runner.py")


def missing_reason() -> str | None:
    if not (VENV / "bin" / "python").exists():
        return (f"no ironic-python-agent venv at {VENV}: `make test` creates it "
                "(scripts/ensure-ipa.sh .state), or set IRONSIGHT_TEST_IPA_VENV")
    return None


@dataclass
class Ipa:
    """The daemon for one machine, booted with `kernel_params`; its log in `log`."""

    workdir: Path
    spec: MachineSpec
    kernel_params: dict[str, str]
    conf: dict[str, Any] = field(default_factory=dict)
    port: int = field(default_factory=free_tcp_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.workdir / "ipa.log"

    def start(self) -> Ipa:
        self.workdir.mkdir(parents=True, exist_ok=True)
        spec = {"kernel_params": self.kernel_params, "listen_port": self.port,
                "workdir": str(self.workdir), "conf": self.conf,
                "machine": {"name": self.spec.name, "macs": list(self.spec.macs),
                            "ipv4": list(self.spec.ipv4), "cpus": self.spec.cpus,
                            "memory_mb": self.spec.memory_mb,
                            "disks_gb": list(self.spec.disks_gb), "arch": self.spec.arch}}
        path = self.workdir / "spec.json"
        path.write_text(json.dumps(spec))
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([str(VENV / "bin" / "python"), "-P", str(RUNNER),
                                          str(path)], stdout=log, stderr=subprocess.STDOUT)
        return self

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"IPA exited ({self.proc.returncode}) before "
                                     f"{needle!r}:\n{self.text()[-4000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {needle!r} from IPA in {timeout:g} s:\n"
                                     f"{self.text()[-4000:]}")
            time.sleep(0.1)
        return self.text()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
