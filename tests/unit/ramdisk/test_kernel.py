"""Kernel package resolution (fake apt), module facts and load order, extraction of a fake .deb."""

from __future__ import annotations

import lzma
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from ironsight.ramdisk import RamdiskError, kernel

SHOW = """Package: linux-image-cloud-amd64
Version: 6.1.192-3
Depends: linux-image-6.1.0-57-cloud-amd64 (= 6.1.192-3)
Description: Linux for x86-64 cloud (meta-package)
"""
POLICY = """linux-image-6.1.0-57-cloud-amd64:
  Installed: (none)
  Candidate: 6.1.192-3
  Version table:
"""
PKG = kernel.KernelPackage("linux-image-6.1.0-57-cloud-amd64", "6.1.192-3")


class FakeApt:
    """Answers like apt-cache/apt-get; `known` becomes True after `apt-get update`."""

    def __init__(self, known: bool = True, show: str = SHOW, update_fixes: bool = True) -> None:
        self.known = known
        self.show = show
        self.update_fixes = update_fixes
        self.download_errors: list[str] = []
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str | Path], *, cwd: Path | None = None) -> str:
        args = [str(a) for a in argv]
        self.calls.append(args)
        if args[:2] == ["apt-get", "update"]:
            self.known = self.known or self.update_fixes
            return ""
        if args[:2] == ["apt-get", "download"]:
            assert cwd is not None
            if self.download_errors:
                raise RamdiskError(self.download_errors.pop(0))
            name, version = args[-1].split("=")
            (cwd / f"{name}_{version.replace(':', '%3a')}_amd64.deb").write_bytes(b"deb")
            return ""
        if not self.known:
            raise RamdiskError("E: No packages found")
        if args[:2] == ["apt-cache", "show"]:
            return self.show
        if args[:2] == ["apt-cache", "policy"]:
            return POLICY
        raise AssertionError(args)

    def commands(self) -> list[str]:
        return [" ".join(call[:2]) for call in self.calls]


# --- resolving ------------------------------------------------------------------------------------

def test_resolve_uses_one_apt_cache_call_when_the_version_is_pinned() -> None:
    apt = FakeApt()
    assert kernel.resolve(runner=apt, log=lambda _: None) == PKG
    assert apt.commands() == ["apt-cache show"]


def test_resolve_asks_for_the_candidate_of_an_unversioned_dependency() -> None:
    apt = FakeApt(show="Depends: linux-image-6.1.0-57-cloud-amd64\n")
    assert kernel.resolve(runner=apt, log=lambda _: None) == PKG
    assert apt.commands() == ["apt-cache show", "apt-cache policy"]


def test_resolve_runs_apt_get_update_only_when_apt_cannot_tell() -> None:
    apt = FakeApt(known=False)
    logged: list[str] = []
    assert kernel.resolve(runner=apt, log=logged.append) == PKG
    assert apt.commands() == ["apt-cache show", "apt-get update", "apt-cache show"]
    assert "apt-get update" in logged[0]


def test_resolve_fails_when_even_an_update_does_not_help() -> None:
    with pytest.raises(RamdiskError, match="cannot resolve linux-image-cloud-amd64"):
        kernel.resolve(runner=FakeApt(known=False, update_fixes=False), log=lambda _: None)


@pytest.mark.parametrize(("text", "expected"), [
    (SHOW, ("linux-image-6.1.0-57-cloud-amd64", "6.1.192-3")),
    ("Depends: linux-image-6.12.9+deb13-cloud-amd64 (= 6.12.9-1), foo\n",
     ("linux-image-6.12.9+deb13-cloud-amd64", "6.12.9-1")),
    ("Depends: linux-image-6.1.0-57-cloud-amd64\n", ("linux-image-6.1.0-57-cloud-amd64", None)),
    ("Depends: something-else\n", None),
])
def test_abi_package(text: str, expected: tuple[str, str | None] | None) -> None:
    assert kernel.abi_package(text) == expected


def test_candidate_none_means_unknown() -> None:
    assert kernel.candidate(POLICY) == "6.1.192-3"
    assert kernel.candidate("  Candidate: (none)\n") is None


def test_download_once_per_version(tmp_path: Path) -> None:
    apt = FakeApt()
    deb = kernel.download(PKG, tmp_path, apt)
    assert deb.name == "linux-image-6.1.0-57-cloud-amd64_6.1.192-3_amd64.deb"
    assert kernel.download(PKG, tmp_path, apt) == deb
    assert apt.commands() == ["apt-get download"]
    assert apt.calls[0][-1] == "linux-image-6.1.0-57-cloud-amd64=6.1.192-3"


def test_download_finds_a_version_with_an_epoch(tmp_path: Path) -> None:
    package = kernel.KernelPackage("linux-image-x", "1:2.0-1")
    deb = kernel.download(package, tmp_path, FakeApt())
    assert deb.name == "linux-image-x_1%3a2.0-1_amd64.deb"


def test_fetch_updates_the_lists_when_the_mirror_dropped_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel, "extract",
                        lambda deb, dest, package: kernel.Kernel(package, "r", deb, []))
    apt = FakeApt()
    apt.download_errors = ["E: Failed to fetch http://deb/x.deb  404  Not Found [IP: 1.2.3.4 80]"]
    kern = kernel.fetch(PKG, tmp_path, log=lambda _: None, runner=apt)
    assert kern.vmlinuz.name == "linux-image-6.1.0-57-cloud-amd64_6.1.192-3_amd64.deb"
    assert apt.commands() == ["apt-get download", "apt-get update", "apt-cache show",
                              "apt-get download"]


def test_fetch_does_not_retry_when_the_mirror_is_unreachable(tmp_path: Path) -> None:
    apt = FakeApt()
    apt.download_errors = ["E: Failed to fetch ...  Temporary failure resolving 'deb'"]
    with pytest.raises(RamdiskError, match="Temporary failure"):
        kernel.fetch(PKG, tmp_path, log=lambda _: None, runner=apt)
    assert apt.commands() == ["apt-get download"]


def test_prune_cache_keeps_only_the_current_kernel(tmp_path: Path) -> None:
    keep = tmp_path / "linux-image-new_2_amd64.deb"
    for name in ("linux-image-old_1_amd64.deb", keep.name, "unrelated"):
        (tmp_path / name).write_text("x")
    (tmp_path / "linux-image-old_1").mkdir()
    kernel.prune_cache(tmp_path, {keep})
    assert sorted(p.name for p in tmp_path.iterdir()) == [keep.name, "unrelated"]


# --- module facts and order -----------------------------------------------------------------------

def modinfo(depends: str, name: str = "x") -> bytes:
    """The bytes around a .modinfo section as in a real .ko."""
    return (b"\x7fELF....\0license=GPL\0" + f"depends={depends}\0".encode()
            + b"retpoline=Y\0intree=Y\0" + f"name={name}\0".encode() + b"vermagic=6.1\0")


def test_module_depends_reads_the_modinfo_field() -> None:
    assert kernel.module_depends(modinfo("virtio_ring,virtio,net_failover")) == [
        "virtio_ring", "virtio", "net_failover"]
    assert kernel.module_depends(modinfo("")) == []
    assert kernel.module_depends(b"no modinfo at all") == []


@pytest.mark.parametrize(("path", "name"), [
    ("drivers/net/virtio_net.ko", "virtio_net"),
    ("virtio-rng.ko.xz", "virtio_rng"),
    (Path("/x/virtio_blk.ko.zst"), "virtio_blk"),
])
def test_module_name(path: str | Path, name: str) -> None:
    assert kernel.module_name(path) == name


def test_compressed_modules_are_unpacked_for_busybox_insmod() -> None:
    data = modinfo("virtio")
    assert kernel.decompress_ko(lzma.compress(data), "virtio_net.ko.xz") == data
    assert kernel.decompress_ko(data, "virtio_net.ko") == data


REAL_DEPENDS = {  # Debian 6.1 cloud kernel, listed in the wrong order on purpose
    "virtio_blk": ["virtio", "virtio_ring"],
    "virtio_net": ["virtio_ring", "virtio", "net_failover"],
    "virtio": ["virtio_ring"],
    "virtio_pci": ["virtio_pci_legacy_dev", "virtio_pci_modern_dev", "virtio", "virtio_ring"],
    "virtio_ring": [],
    "net_failover": ["failover"],
    "failover": [],
    "virtio_pci_legacy_dev": [],
    "virtio_pci_modern_dev": [],
    "efivarfs": [],
}


def test_load_order_puts_every_dependency_first() -> None:
    order = kernel.load_order(REAL_DEPENDS)
    assert sorted(order) == sorted(REAL_DEPENDS)
    for name, deps in REAL_DEPENDS.items():
        assert all(order.index(dep) < order.index(name) for dep in deps), (name, order)
    assert order[:2] == ["virtio_ring", "virtio"]


def test_load_order_keeps_the_given_order_when_it_is_right() -> None:
    names = ["virtio_ring", "virtio", "virtio_pci_legacy_dev", "virtio_pci_modern_dev",
             "virtio_pci", "failover", "net_failover", "virtio_net", "virtio_blk"]
    assert kernel.load_order({n: REAL_DEPENDS[n] for n in names}) == names


def test_load_order_skips_builtin_dependencies() -> None:
    assert kernel.load_order({"virtio_net": ["virtio", "failover"]},
                             builtin={"virtio", "failover"}) == ["virtio_net"]


def test_load_order_rejects_a_missing_dependency() -> None:
    with pytest.raises(RamdiskError, match=r"net_failover \(needed by virtio_net"):
        kernel.load_order({"virtio_net": ["net_failover"]})


def test_load_order_rejects_a_cycle() -> None:
    with pytest.raises(RamdiskError, match="cycle"):
        kernel.load_order({"a": ["b"], "b": ["a"]})


def test_builtin_modules() -> None:
    text = "kernel/drivers/virtio/virtio.ko\nkernel/net/core/failover.ko\n\n"
    assert kernel.builtin_modules(text) == {"virtio", "failover"}


# --- extraction from a .deb -----------------------------------------------------------------------

RELEASE = "6.1.0-99-cloud-amd64"


def _fake_deb(tmp_path: Path, skip: str | None = None) -> Path:
    """A kernel .deb as Debian lays it out (./boot, ./lib/modules), with extra modules."""
    tree = tmp_path / "pkg"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN/control").write_text(
        f"Package: linux-image-{RELEASE}\nVersion: 6.1.999-1\nArchitecture: amd64\n"
        "Maintainer: test <t@example.org>\nDescription: fake kernel\n")
    (tree / "boot").mkdir()
    (tree / f"boot/vmlinuz-{RELEASE}").write_bytes(b"kernel image")
    (tree / f"boot/System.map-{RELEASE}").write_text("not extracted")
    moddir = tree / "lib/modules" / RELEASE
    for path in [*kernel.MODULES, "drivers/virtio/virtio_balloon", "drivers/scsi/virtio_scsi"]:
        if path == skip:
            continue
        name = kernel.module_name(path)
        ko = moddir / "kernel" / f"{path}.ko"
        ko.parent.mkdir(parents=True, exist_ok=True)
        ko.write_bytes(modinfo(",".join(REAL_DEPENDS.get(name, ["virtio"])), name))
    (moddir / "modules.builtin").write_text("kernel/fs/binfmt_script.ko\n")
    deb = tmp_path / "kernel.deb"
    subprocess.run(["dpkg-deb", "-Zgzip", "--root-owner-group", "-b", str(tree), str(deb)],
                   check=True, capture_output=True)
    return deb


needs_dpkg = pytest.mark.skipif(not shutil.which("dpkg-deb"), reason="needs dpkg-deb")


@needs_dpkg
def test_extract_takes_only_vmlinuz_and_the_listed_modules(tmp_path: Path) -> None:
    package = kernel.KernelPackage(f"linux-image-{RELEASE}", "6.1.999-1")
    kern = kernel.extract(_fake_deb(tmp_path), tmp_path / "tree", package)
    assert kern.release == RELEASE
    assert kern.vmlinuz.read_bytes() == b"kernel image"
    names = [kernel.module_name(m) for m in kern.modules]
    assert names == ["virtio_ring", "virtio", "virtio_pci_legacy_dev", "virtio_pci_modern_dev",
                     "virtio_pci", "failover", "net_failover", "virtio_net", "virtio_blk",
                     "efivarfs"]
    extracted = sorted(p.name for p in (tmp_path / "tree").rglob("*") if p.is_file())
    assert "virtio_balloon.ko" not in extracted
    assert f"System.map-{RELEASE}" not in extracted


@needs_dpkg
def test_extract_is_reused_once_complete(tmp_path: Path) -> None:
    package = kernel.KernelPackage(f"linux-image-{RELEASE}", "6.1.999-1")
    deb = _fake_deb(tmp_path)
    kernel.extract(deb, tmp_path / "tree", package)
    deb.unlink()  # a second extraction would fail
    assert kernel.extract(deb, tmp_path / "tree", package).release == RELEASE


@needs_dpkg
def test_extract_names_a_module_missing_from_the_package(tmp_path: Path) -> None:
    package = kernel.KernelPackage(f"linux-image-{RELEASE}", "6.1.999-1")
    with pytest.raises(RamdiskError, match="virtio_blk"):
        kernel.extract(_fake_deb(tmp_path, skip="drivers/block/virtio_blk"), tmp_path / "t",
                       package)

