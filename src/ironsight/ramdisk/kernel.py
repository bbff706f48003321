"""Debian's cloud kernel for the ramdisk: resolved, downloaded and partly extracted.

The meta-package `linux-image-cloud-amd64` depends on the current ABI package
(`linux-image-6.1.0-57-cloud-amd64 (= 6.1.192-3)`), so nothing hard-codes an ABI number.
The cloud flavour is used because its LZ4 image boots ~3 s faster under QEMU's TCG than
the generic XZ one. The .deb is fetched with `apt-get download` and only `boot/vmlinuz-*`
plus the modules listed in MODULES are unpacked from it: nothing is installed into /boot.

There is no udev in the ramdisk, so /init loads every module itself with `insmod`, in
the order written here: computed from each module's own `depends=` field, because a
wrong order fails silently (the NIC just never appears).
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ironsight.ramdisk import RamdiskError, run

META_PACKAGE = "linux-image-cloud-amd64"

# What the ramdisk loads, as paths under lib/modules/<release>/kernel/ without ".ko".
# Their dependencies must be listed too (checked at build time): we extract nothing else.
MODULES = (
    "drivers/virtio/virtio_ring",
    "drivers/virtio/virtio",
    "drivers/virtio/virtio_pci_legacy_dev",
    "drivers/virtio/virtio_pci_modern_dev",
    "drivers/virtio/virtio_pci",
    "net/core/failover",
    "drivers/net/net_failover",
    "drivers/net/virtio_net",      # the NIC
    "drivers/block/virtio_blk",    # the disks (/dev/vda)
    "fs/efivarfs/efivarfs",        # UEFI variables (SecureBoot) for the agent
)


class Runner(Protocol):
    """How commands run (`ironsight.ramdisk.run`; tests pass a fake apt)."""

    def __call__(self, argv: Sequence[str | Path], *, cwd: Path | None = None) -> str: ...


_DEPENDS = re.compile(rb"(?:^|\0)depends=([^\0]*)\0")
_ABI_PACKAGE = re.compile(
    r"^(?:Pre-)?Depends:.*?\b(linux-image-\d[^\s,(]*)(?:\s*\(=\s*([^)\s]+)\))?", re.MULTILINE)
_CANDIDATE = re.compile(r"^\s*Candidate:\s*(\S+)", re.MULTILINE)
_DONE = ".extracted"


@dataclass(frozen=True)
class KernelPackage:
    name: str     # linux-image-6.1.0-57-cloud-amd64
    version: str  # 6.1.192-3


@dataclass(frozen=True)
class Kernel:
    package: KernelPackage
    release: str          # `uname -r`: 6.1.0-57-cloud-amd64
    vmlinuz: Path
    modules: list[Path]   # in load order


# --- resolving the package ----------------------------------------------------------------------

def resolve(meta: str = META_PACKAGE, runner: Runner = run,
            log: Callable[[str], None] = print) -> KernelPackage:
    """The versioned package behind `meta`; `apt-get update` only when apt cannot tell."""
    package = _try_resolve(meta, runner)
    if package is None:
        log("apt-cache cannot resolve " + meta + ": running apt-get update")
        runner(["apt-get", "update", "-qq"])
        package = _try_resolve(meta, runner)
    if package is None:
        raise RamdiskError(f"apt cannot resolve {meta} (no such package in the apt sources?)")
    return package


def _try_resolve(meta: str, runner: Runner) -> KernelPackage | None:
    """One `apt-cache show` (apt may rebuild its cache on every call: ~1 s each)."""
    try:
        found = abi_package(runner(["apt-cache", "show", "--no-all-versions", meta]))
        if found and not found[1]:  # unversioned dependency: ask for the candidate
            found = (found[0], candidate(runner(["apt-cache", "policy", found[0]])))
    except RamdiskError:
        return None
    return KernelPackage(found[0], found[1]) if found and found[1] else None


def abi_package(show_output: str) -> tuple[str, str | None] | None:
    """(`linux-image-<abi>-cloud-amd64`, its version if pinned) from the meta-package's record."""
    match = _ABI_PACKAGE.search(show_output)
    return (match.group(1), match.group(2)) if match else None


def candidate(policy_output: str) -> str | None:
    match = _CANDIDATE.search(policy_output)
    return match.group(1) if match and match.group(1) != "(none)" else None


# --- download and extraction --------------------------------------------------------------------

def download(package: KernelPackage, cache_dir: Path, runner: Runner = run,
             log: Callable[[str], None] = print) -> Path:
    """The package's .deb in `cache_dir`, downloaded once."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    found = _deb_in(cache_dir, package)
    if found is None:
        log(f"downloading {package.name} {package.version}")
        argv = ["apt-get", "download", "-q"]
        if os.geteuid() == 0:  # root: no `_apt` sandbox warning about a root-only directory
            argv += ["-o", "APT::Sandbox::User=root"]
        runner([*argv, f"{package.name}={package.version}"], cwd=cache_dir)
        found = _deb_in(cache_dir, package)
    if found is None:
        raise RamdiskError(f"apt-get download left no .deb of {package.name} in {cache_dir}")
    return found


def _deb_in(directory: Path, package: KernelPackage) -> Path | None:
    version = package.version.replace(":", "%3a")  # as apt names the file: epoch 1:x -> 1%3ax
    matches = sorted(directory.glob(f"{package.name}_{version}_*.deb"))
    return matches[0] if matches else None


def extract(deb: Path, dest: Path, package: KernelPackage) -> Kernel:
    """Unpack vmlinuz and MODULES from `deb` into `dest` (reused when already complete)."""
    if not (dest / _DONE).exists():
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        _untar(deb, dest, ["./boot/vmlinuz-*", "*/modules.builtin",
                           *(f"*/kernel/{path}.ko*" for path in MODULES)])
        (dest / _DONE).write_text(package.version + "\n")
    return _kernel_in(dest, package)


def _untar(deb: Path, dest: Path, patterns: list[str]) -> None:
    dpkg = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert dpkg.stdout is not None
    tar = subprocess.run(["tar", "-x", "-C", str(dest), "--no-same-owner", "--wildcards",
                          *patterns], stdin=dpkg.stdout, capture_output=True, text=True,
                         check=False)
    dpkg.stdout.close()
    dpkg_err = dpkg.communicate()[1].decode(errors="replace")
    if dpkg.returncode != 0 or tar.returncode != 0:
        raise RamdiskError(f"cannot extract the kernel from {deb.name}: "
                           f"{(tar.stderr or dpkg_err).strip()[-2000:]}")


def _kernel_in(dest: Path, package: KernelPackage) -> Kernel:
    images = sorted((dest / "boot").glob("vmlinuz-*"))
    if len(images) != 1:
        raise RamdiskError(f"{package.name}: expected one boot/vmlinuz-*, found {len(images)}")
    release = images[0].name.removeprefix("vmlinuz-")
    moddir = next((d for d in (dest / "lib/modules" / release, dest / "usr/lib/modules" / release)
                   if d.is_dir()), None)
    if moddir is None:
        raise RamdiskError(f"{package.name}: no modules directory for {release}")
    files = {module_name(path): _module_file(moddir / "kernel", path) for path in MODULES}
    builtin = builtin_modules((moddir / "modules.builtin").read_text())
    order = load_order({name: module_depends(ko_bytes(f)) for name, f in files.items()},
                       builtin)
    return Kernel(package, release, images[0], [files[name] for name in order])


def _module_file(kernel_dir: Path, path: str) -> Path:
    matches = sorted(kernel_dir.glob(path + ".ko*"))
    if not matches:
        raise RamdiskError(f"kernel module {path}.ko is not in this kernel package")
    return matches[0]


# --- module facts and load order ----------------------------------------------------------------

def module_name(path: str | Path) -> str:
    """The kernel's name of a module file: basename without .ko[.xz|.zst], '-' as '_'."""
    return Path(path).name.split(".ko")[0].replace("-", "_")


def decompress_ko(data: bytes, name: str) -> bytes:
    """Plain ELF: busybox insmod cannot load compressed modules (newer kernels ship .ko.xz)."""
    if name.endswith(".xz"):
        return lzma.decompress(data)
    if name.endswith(".zst"):
        return subprocess.run(["zstd", "-dc"], input=data, capture_output=True,
                              check=True).stdout
    return data


def ko_bytes(path: Path) -> bytes:
    return decompress_ko(path.read_bytes(), path.name)


def module_depends(ko: bytes) -> list[str]:
    """The `depends=` field of a module's .modinfo section (what modinfo -F depends prints)."""
    match = _DEPENDS.search(ko)
    if not match or not match.group(1):
        return []
    return [name.replace("-", "_") for name in match.group(1).decode().split(",") if name]


def builtin_modules(text: str) -> set[str]:
    """Names from modules.builtin: dependencies on these need no insmod."""
    return {module_name(line.strip()) for line in text.splitlines() if line.strip()}


def load_order(depends: dict[str, list[str]], builtin: set[str] | None = None) -> list[str]:
    """Dependencies first; otherwise the given order. Fails on a missing module or a cycle."""
    builtin = builtin or set()
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str, wanted_by: str | None) -> None:
        if name in order or name in builtin:
            return
        if name not in depends:
            raise RamdiskError(f"kernel module {name} (needed by {wanted_by}) is not in the "
                               "ramdisk's module list")
        if name in visiting:
            raise RamdiskError(f"kernel modules depend on each other in a cycle at {name}")
        visiting.add(name)
        for dep in depends[name]:
            visit(dep, name)
        visiting.discard(name)
        order.append(name)

    for name in depends:
        visit(name, None)
    return order


def prune_cache(cache_dir: Path, keep: set[Path]) -> None:
    """Old kernel versions' .debs and trees: the cache would otherwise grow with every ABI."""
    for entry in cache_dir.iterdir():
        if entry.name.startswith("linux-image-") and entry not in keep:
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def fetch(package: KernelPackage, cache_dir: Path, log: Callable[[str], None] = print,
          runner: Runner = run) -> Kernel:
    """Download (once) and extract (once) the resolved kernel package."""
    try:
        deb = download(package, cache_dir, runner, log)
    except RamdiskError as exc:
        if "404" not in str(exc):  # only stale lists (the file left the mirror) are fixed so
            raise
        log(f"{package.name} is gone from the mirror: running apt-get update and retrying")
        runner(["apt-get", "update", "-qq"])
        package = resolve(runner=runner, log=log)
        deb = download(package, cache_dir, runner, log)
    tree = cache_dir / f"{package.name}_{package.version}"
    kernel = extract(deb, tree, package)
    prune_cache(cache_dir, {deb, tree})
    return kernel
