"""The agent runs alone in the ramdisk: stdlib only, copied without the project."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import ironsight.agent

AGENT_DIR = Path(ironsight.agent.__file__).parent

PROBE = """
import sys
from agent import cli
code = cli.main(sys.argv[1:])
print("MODULES", " ".join(sorted(sys.modules)), file=sys.stderr)
"""


def _copy_alone(tmp_path: Path) -> Path:
    shutil.copytree(AGENT_DIR, tmp_path / "agent",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-S", "-E", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, check=False)


def _modules(stderr: str) -> set[str]:
    line = next(line for line in stderr.splitlines() if line.startswith("MODULES "))
    return set(line.split()[1:])


def test_the_package_copied_alone_runs_as_python_m_agent(tmp_path, qemu_vm):
    proc = _run(_copy_alone(tmp_path), "-m", "agent", "--print", "--root", str(qemu_vm))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["inventory"]["cpu"]["count"] == 2


def test_only_standard_library_modules_are_imported(tmp_path, qemu_vm, callback_server):
    cwd = _copy_alone(tmp_path)
    proc = _run(cwd, "-c", PROBE, "--root", str(qemu_vm), "--callback-url", callback_server.url)
    assert proc.returncode == 0, proc.stderr
    foreign = {name for name in _modules(proc.stderr)
               if name.split(".")[0] not in sys.stdlib_module_names
               and name.split(".")[0] not in ("agent", "__main__")}
    assert foreign == set()


def test_printing_does_not_load_the_http_client(tmp_path, qemu_vm):
    proc = _run(_copy_alone(tmp_path), "-c", PROBE, "--print", "--root", str(qemu_vm))
    assert proc.returncode == 0, proc.stderr
    assert {"urllib.request", "http.client", "email"} & _modules(proc.stderr) == set()
