"""`ironsight serve` on a state directory that cannot hold its state (read-only, full, not a
directory) exits non-zero with one line saying so, and no traceback.

Read-only and full are real: the state directory is a tmpfs mounted (read-only, or tiny)
inside a private mount namespace of the test's own (`unshare -m`, as root), so nothing on the
host changes and the mount is gone with the process. Permission bits would not do: the
tests run as root, which ignores them."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import free_tcp_port

NEEDS_NAMESPACE = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root and unshare(1) for a private mount namespace")


def write_conf(tmp_path: Path, state_dir: Path) -> Path:
    conf = tmp_path / "ironsight.conf"
    conf.write_text(f"[DEFAULT]\nstate_dir = {state_dir}\n[api]\nport = {free_tcp_port()}\n"
                    f"[introspection]\nport = {free_tcp_port()}\n")
    return conf


def serve_in_namespace(tmp_path: Path, mount: str, before: str = "true", after: str = "",
                       ) -> subprocess.CompletedProcess[str]:
    """Mount a tmpfs with `mount` options on a fresh state directory in a private mount
    namespace, run `before` (shell), remount with `after` options if any, then serve."""
    state = tmp_path / "state"
    state.mkdir()
    conf = write_conf(tmp_path, state)
    serve = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "ironsight.cli", "serve",
                                              "--config-file", str(conf)))
    script = (f"set -e; mount --make-rprivate /; mount -t tmpfs -o {mount} tmpfs {state}; "
              f"{before}; {f'mount -o remount,{after} {state};' if after else ''} "
              f"set +e; timeout 30 {serve}")
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                          text=True, timeout=90, env={**os.environ})


def assert_one_line_error(proc: subprocess.CompletedProcess[str], says: str) -> None:
    assert proc.returncode not in (0, 124), proc  # 124: still running when timeout stopped it
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and says in errors[0], proc.stderr


@NEEDS_NAMESPACE
def test_serve_on_a_read_only_state_directory_is_one_line(tmp_path: Path) -> None:
    proc = serve_in_namespace(tmp_path, "size=4m", after="ro")
    assert_one_line_error(proc, "is not writable: Read-only file system")


@NEEDS_NAMESPACE
def test_serve_on_a_read_only_state_directory_with_databases_is_one_line(
        tmp_path: Path) -> None:
    """The databases exist (an upgrade already ran), then the file system turns read-only."""
    upgrade = " ".join(shlex.quote(a) for a in (
        sys.executable, "-m", "ironsight.cli", "db", "upgrade", "--config-file",
        str(tmp_path / "ironsight.conf")))
    proc = serve_in_namespace(tmp_path, "size=4m", before=upgrade, after="ro")
    assert_one_line_error(proc, "is not writable: Read-only file system")


@NEEDS_NAMESPACE
def test_serve_on_a_full_state_directory_is_one_line(tmp_path: Path) -> None:
    fill = f"dd if=/dev/zero of={tmp_path / 'state' / 'fill'} bs=4k 2>/dev/null || true"
    proc = serve_in_namespace(tmp_path, "size=256k", before=fill)
    assert_one_line_error(proc, "state directory")
    assert "No space left on device" in proc.stderr or "is full" in proc.stderr


def test_serve_with_a_state_directory_under_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    conf = write_conf(tmp_path, tmp_path / "file" / "state")
    proc = subprocess.run([sys.executable, "-m", "ironsight.cli", "serve", "--config-file",
                           str(conf)], capture_output=True, text=True, timeout=60)
    assert_one_line_error(proc, "cannot create the state directory")
