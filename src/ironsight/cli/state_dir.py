"""Before `serve` starts anything: the state directory must exist (it is created), be
writable and have room. Otherwise one line says which and why, and the command exits 1: the
alternative is a traceback from deep inside SQLite at the first write."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

# Less free space than this and the service would fail at its first real write (a database
# page, a ramdisk's logs): refuse to start instead.
MIN_FREE_BYTES = 1024 * 1024


def check_state_dir(path: Path, min_free: int = MIN_FREE_BYTES) -> None:
    """Raise a one-line ClickException when `path` cannot hold the services' state."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.ClickException(
            f"cannot create the state directory {path}: {exc.strerror or exc}") from None
    try:
        with tempfile.TemporaryFile(dir=path) as probe:
            probe.write(b"\0" * 4096)
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as exc:
        raise click.ClickException(
            f"the state directory {path} is not writable: {exc.strerror or exc}") from None
    stats = os.statvfs(path)
    free = stats.f_bavail * stats.f_frsize
    if free < min_free:
        raise click.ClickException(
            f"the state directory {path} is full: {free} bytes free, at least {min_free} "
            "needed")
