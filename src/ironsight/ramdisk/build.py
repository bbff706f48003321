"""`ironsight ramdisk build`: kernel + initramfs into one directory, rebuilt only when needed.

The output directory holds `vmlinuz`, `initramfs` and `manifest.json`. The manifest records
a hash of every input: the kernel package and version, the busybox and Python binaries and
versions, the agent's and /init's sources and this builder's own code. When that hash is
unchanged and both files still match their recorded sha256, nothing is rebuilt, so tests and
CI can call `build` on every run for the cost of one `apt-cache` query and a few hashes.
The kernel .deb and its extracted files are cached in `<out>/cache`.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ironsight.ramdisk import RamdiskError, initramfs, kernel, run

MANIFEST = "manifest.json"
VMLINUZ = "vmlinuz"
INITRAMFS = "initramfs"
FORMAT = 1
_BUILDER = Path(__file__).parent
# modules beside the builder that make nothing of the ramdisk (the ISO has its own cache)
NOT_RAMDISK = frozenset({"iso.py"})

Log = Callable[[str], None]


@dataclass(frozen=True)
class Inputs:
    """Everything the output depends on; equal inputs give an equal ramdisk."""

    kernel: kernel.KernelPackage
    busybox: str
    python: str
    sources: dict[str, str]  # label -> sha256

    def as_dict(self) -> dict[str, Any]:
        return {"kernel_package": self.kernel.name, "kernel_version": self.kernel.version,
                "busybox": self.busybox, "python": self.python, "sources": self.sources}

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()


@dataclass
class Result:
    out_dir: Path
    manifest: dict[str, Any]
    rebuilt: bool
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def vmlinuz(self) -> Path:
        return self.out_dir / VMLINUZ

    @property
    def initramfs(self) -> Path:
        return self.out_dir / INITRAMFS


# --- inputs ---------------------------------------------------------------------------------------

def collect_inputs(package: kernel.KernelPackage, *, python: Path = initramfs.PYTHON,
                   busybox: Path = initramfs.BUSYBOX,
                   agent_dir: Path = initramfs.AGENT_DIR) -> Inputs:
    _require(python, "Debian's python3.11 (apt-get install python3.11)")
    _require(busybox, "busybox (apt-get install busybox-static)")
    return Inputs(kernel=package, busybox=busybox_version(busybox),
                  python=python_version(python),
                  sources=source_hashes(python=python, busybox=busybox, agent_dir=agent_dir))


def _require(path: Path, what: str) -> None:
    if not path.is_file():
        raise RamdiskError(f"{path} not found: the ramdisk needs {what}")


def busybox_version(busybox: Path) -> str:
    """`v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1)` from busybox's banner."""
    banner = run([busybox, "--help"]).splitlines()[0]
    return banner.removeprefix("BusyBox ").removesuffix(" multi-call binary.").strip()


def python_version(python: Path) -> str:
    return run([python, "-S", "-E", "-c", "import sys; print(sys.version.split()[0])"]).strip()


def source_hashes(*, python: Path, busybox: Path, agent_dir: Path) -> dict[str, str]:
    """sha256 of the binaries and sources copied into the ramdisk, and of this builder."""
    hashes = {"bin/python": sha256_file(python), "bin/busybox": sha256_file(busybox)}
    for label, directory, pattern in (("agent", agent_dir, "*.py"),
                                      ("files", initramfs.FILES, "*"),
                                      ("builder", _BUILDER, "*.py")):
        for path in sorted(directory.glob(pattern)):
            if path.is_file() and not (label == "builder" and path.name in NOT_RAMDISK):
                hashes[f"{label}/{path.name}"] = sha256_file(path)
    return hashes


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


# --- cache ----------------------------------------------------------------------------------------

def read_manifest(out_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((out_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_current(out_dir: Path, digest: str) -> dict[str, Any] | None:
    """The manifest when it was built from these inputs and its files are intact."""
    manifest = read_manifest(out_dir)
    if not manifest or manifest.get("format") != FORMAT or manifest.get("input_hash") != digest:
        return None
    files = manifest.get("files")
    for name in (VMLINUZ, INITRAMFS):
        recorded = files.get(name) if isinstance(files, dict) else None
        path = out_dir / name
        if (not isinstance(recorded, dict) or not path.is_file()
                or path.stat().st_size != recorded.get("size")
                or sha256_file(path) != recorded.get("sha256")):
            return None
    return manifest


@contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    """One build per output directory at a time (parallel test runs share a cache)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# --- build ----------------------------------------------------------------------------------------

def build(out_dir: Path, *, force: bool = False, log: Log = print) -> Result:
    """Build into `out_dir` unless its manifest shows the same inputs."""
    started = time.monotonic()
    timings: dict[str, float] = {}
    out_dir = out_dir.resolve()
    with _locked(out_dir):
        step = time.monotonic()
        package = kernel.resolve(log=log)
        inputs = collect_inputs(package)
        digest = inputs.digest()
        timings["check"] = time.monotonic() - step
        manifest = None if force else is_current(out_dir, digest)
        if manifest is not None:
            timings["total"] = time.monotonic() - started
            return Result(out_dir, manifest, rebuilt=False, timings=timings)
        manifest = _rebuild(out_dir, inputs, timings, log)
        timings["total"] = time.monotonic() - started
        manifest["build_seconds"] = round(timings["total"], 2)
        _write_json(out_dir / MANIFEST, manifest)
    return Result(out_dir, manifest, rebuilt=True, timings=timings)


def _rebuild(out_dir: Path, inputs: Inputs, timings: dict[str, float],
             log: Log) -> dict[str, Any]:
    (out_dir / MANIFEST).unlink(missing_ok=True)  # a half-replaced output is never "current"
    step = time.monotonic()
    log(f"kernel: {inputs.kernel.name} {inputs.kernel.version}")
    kern = kernel.fetch(inputs.kernel, out_dir / "cache", log=log)
    _replace(out_dir / VMLINUZ, lambda tmp: shutil.copyfile(kern.vmlinuz, tmp))
    timings["kernel"] = time.monotonic() - step

    step = time.monotonic()
    log(f"initramfs: busybox {inputs.busybox}, python {inputs.python}, "
        f"{len(kern.modules)} modules")
    stats: list[initramfs.Stats] = []
    _replace(out_dir / INITRAMFS, lambda tmp: stats.append(initramfs.build(tmp, kern.modules)))
    timings["initramfs"] = time.monotonic() - step
    return manifest_for(out_dir, inputs, kern, stats[0])


def _replace(dest: Path, write: Callable[[Path], object]) -> None:
    """Write next to `dest`, then rename: readers (a running boot server) never see half."""
    tmp = dest.with_name(f".{dest.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def manifest_for(out_dir: Path, inputs: Inputs, kern: kernel.Kernel,
                 stats: initramfs.Stats) -> dict[str, Any]:
    from ironsight.agent import __version__ as agent_version

    return {
        "format": FORMAT,
        "input_hash": inputs.digest(),
        "built_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "kernel": {"package": kern.package.name, "version": kern.package.version,
                   "release": kern.release,
                   "modules": [kernel.module_name(m) for m in kern.modules]},
        "busybox": inputs.busybox,
        "python": inputs.python,
        "agent": {"package": initramfs.AGENT_NAME, "version": agent_version},
        "initramfs": {"entries": stats.entries, "uncompressed_size": stats.uncompressed,
                      "stdlib_files": stats.stdlib_files, "compression": "gzip"},
        "files": {name: {"size": (out_dir / name).stat().st_size,
                         "sha256": sha256_file(out_dir / name)}
                  for name in (VMLINUZ, INITRAMFS)},
        "inputs": inputs.as_dict(),
    }


def _write_json(path: Path, data: dict[str, Any]) -> None:
    _replace(path, lambda tmp: tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n"))
