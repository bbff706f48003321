"""`ironsight ramdisk build`: options, default directory, output and errors (build faked)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ironsight.cli import ramdisk as ramdisk_cli
from ironsight.ramdisk import RamdiskError, build

MANIFEST = {
    "kernel": {"package": "linux-image-6.1.0-57-cloud-amd64", "version": "6.1.192-3",
               "modules": ["virtio_ring", "virtio"]},
    "python": "3.11.2", "busybox": "v1.35.0",
    "files": {"vmlinuz": {"size": 14190528}, "initramfs": {"size": 6787159}},
}


@pytest.fixture
def cli() -> click.Group:
    @click.group()
    def root() -> None:
        pass

    ramdisk_cli.register(root)
    return root


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, bool]]:
    seen: list[tuple[Path, bool]] = []

    def fake_build(out: Path, *, force: bool = False, log: object = None) -> build.Result:
        seen.append((out, force))
        return build.Result(out, MANIFEST, rebuilt=force, timings={"check": 1.04, "total": 1.2})

    monkeypatch.setattr(build, "build", fake_build)
    return seen


def test_build_defaults_to_the_state_dir(cli: click.Group, calls: list[tuple[Path, bool]],
                                         monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    monkeypatch.setenv("IRONSIGHT_STATE_DIR", str(tmp_path))
    result = CliRunner().invoke(cli, ["ramdisk", "build"])
    assert result.exit_code == 0, result.output
    assert calls == [(tmp_path / "ramdisk", False)]
    assert "up to date (inputs unchanged)" in result.output
    assert "14.19 MB  linux-image-6.1.0-57-cloud-amd64 6.1.192-3" in result.output
    assert "modules: virtio_ring virtio" in result.output
    assert "check 1.0 s, total 1.2 s" in result.output


def test_build_out_and_force(cli: click.Group, calls: list[tuple[Path, bool]],
                             tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["ramdisk", "build", "--out", str(tmp_path / "rd"),
                                      "--force"])
    assert result.exit_code == 0, result.output
    assert calls == [(tmp_path / "rd", True)]
    assert result.output.startswith(f"ramdisk built: {tmp_path / 'rd'}")


def test_a_failing_step_exits_1_with_its_message(cli: click.Group,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(*_: object, **__: object) -> build.Result:
        raise RamdiskError("apt cannot resolve linux-image-cloud-amd64")

    monkeypatch.setattr(build, "build", failing)
    result = CliRunner().invoke(cli, ["ramdisk", "build", "--out", "/nonexistent/x"])
    assert result.exit_code == 1
    assert "Error: apt cannot resolve linux-image-cloud-amd64" in result.output
