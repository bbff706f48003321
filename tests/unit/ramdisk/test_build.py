"""Build orchestration and its cache, with fake kernel, inputs and initramfs steps."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ironsight.ramdisk import RamdiskError, build, initramfs, kernel

PKG = kernel.KernelPackage("linux-image-6.1.0-57-cloud-amd64", "6.1.192-3")
INPUTS = build.Inputs(kernel=PKG, busybox="v1.35.0", python="3.11.2",
                      sources={"agent/cli.py": "aa", "files/init": "bb"})


class Steps:
    """Fake heavy steps; counts how often each ran."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.inputs = INPUTS
        self.fetched = 0
        self.built = 0
        self.fail_initramfs = False

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(kernel, "resolve", lambda **_: self.inputs.kernel)
        monkeypatch.setattr(build, "collect_inputs", lambda package: self.inputs)
        monkeypatch.setattr(kernel, "fetch", self.fetch)
        monkeypatch.setattr(initramfs, "build", self.initramfs)

    def fetch(self, package: kernel.KernelPackage, cache_dir: Path, **_: object) -> kernel.Kernel:
        self.fetched += 1
        vmlinuz = self.tmp / "vmlinuz-src"
        vmlinuz.write_bytes(b"kernel " + package.version.encode())
        ko = self.tmp / "virtio_ring.ko"
        ko.write_bytes(b"ko")
        return kernel.Kernel(package, "6.1.0-57-cloud-amd64", vmlinuz, [ko])

    def initramfs(self, dest: Path, modules: list[Path]) -> initramfs.Stats:
        if self.fail_initramfs:
            dest.write_bytes(b"half")
            raise RamdiskError("probe failed")
        self.built += 1
        dest.write_bytes(b"initramfs " + self.inputs.digest().encode())
        return initramfs.Stats(entries=3, uncompressed=100, size=dest.stat().st_size,
                               stdlib_files=1)


@pytest.fixture
def steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Steps:
    fake = Steps(tmp_path)
    fake.install(monkeypatch)
    return fake


def quiet(_: str) -> None:
    pass


def test_first_build_writes_the_files_and_the_manifest(steps: Steps, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = build.build(out, log=quiet)
    assert result.rebuilt
    assert result.vmlinuz.read_bytes() == b"kernel 6.1.192-3"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == result.manifest
    assert manifest["input_hash"] == INPUTS.digest()
    assert manifest["kernel"] == {"package": PKG.name, "version": PKG.version,
                                  "release": "6.1.0-57-cloud-amd64", "modules": ["virtio_ring"]}
    assert manifest["files"]["initramfs"]["size"] == result.initramfs.stat().st_size
    assert manifest["files"]["vmlinuz"]["sha256"] == build.sha256_file(result.vmlinuz)
    assert {"check", "kernel", "initramfs", "total"} <= set(result.timings)
    assert sorted(p.name for p in out.iterdir()) == [
        ".lock", "initramfs", "manifest.json", "vmlinuz"]


def test_unchanged_inputs_skip_the_build(steps: Steps, tmp_path: Path) -> None:
    build.build(tmp_path / "out", log=quiet)
    result = build.build(tmp_path / "out", log=quiet)
    assert not result.rebuilt
    assert (steps.fetched, steps.built) == (1, 1)
    assert set(result.timings) == {"check", "total"}


def test_force_rebuilds(steps: Steps, tmp_path: Path) -> None:
    build.build(tmp_path / "out", log=quiet)
    assert build.build(tmp_path / "out", force=True, log=quiet).rebuilt
    assert steps.built == 2


@pytest.mark.parametrize("change", [
    {"kernel": kernel.KernelPackage(PKG.name, "6.1.193-1")},
    {"busybox": "v1.36.1"},
    {"python": "3.11.4"},
    {"sources": {"agent/cli.py": "changed", "files/init": "bb"}},
])
def test_any_changed_input_rebuilds(steps: Steps, tmp_path: Path,
                                    change: dict[str, object]) -> None:
    build.build(tmp_path / "out", log=quiet)
    steps.inputs = replace(INPUTS, **change)  # type: ignore[arg-type]
    assert build.build(tmp_path / "out", log=quiet).rebuilt
    assert steps.built == 2


@pytest.mark.parametrize("damage", ["vmlinuz", "initramfs", "manifest.json"])
def test_a_damaged_or_missing_output_rebuilds(steps: Steps, tmp_path: Path, damage: str) -> None:
    out = tmp_path / "out"
    build.build(out, log=quiet)
    (out / damage).write_bytes(b"x")
    assert build.build(out, log=quiet).rebuilt
    (out / damage).unlink()
    assert build.build(out, log=quiet).rebuilt


def test_a_failed_build_is_not_taken_as_current(steps: Steps, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build.build(out, log=quiet)
    steps.inputs = replace(INPUTS, python="3.11.9")
    steps.fail_initramfs = True
    with pytest.raises(RamdiskError, match="probe failed"):
        build.build(out, log=quiet)
    assert not (out / "manifest.json").exists()
    assert not list(out.glob(".*.tmp"))
    steps.fail_initramfs = False
    assert build.build(out, log=quiet).rebuilt


def test_digest_is_stable_and_covers_every_field() -> None:
    assert INPUTS.digest() == build.Inputs(**vars(INPUTS)).digest()
    assert len({INPUTS.digest(), replace(INPUTS, busybox="x").digest(),
                replace(INPUTS, sources={}).digest()}) == 3


def test_source_hashes_cover_binaries_agent_scripts_and_builder(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "cli.py").write_text("a")
    binary = tmp_path / "bin"
    binary.write_bytes(b"elf")
    hashes = build.source_hashes(python=binary, busybox=binary, agent_dir=agent)
    assert {"bin/python", "bin/busybox", "agent/cli.py", "files/init", "files/udhcpc.script",
            "builder/build.py", "builder/initramfs.py", "builder/kernel.py"} <= set(hashes)
    (agent / "cli.py").write_text("b")
    assert build.source_hashes(python=binary, busybox=binary,
                               agent_dir=agent)["agent/cli.py"] != hashes["agent/cli.py"]


def test_missing_debian_python_is_named(tmp_path: Path) -> None:
    with pytest.raises(RamdiskError, match=r"python3\.11"):
        build.collect_inputs(PKG, python=tmp_path / "python3.11")
