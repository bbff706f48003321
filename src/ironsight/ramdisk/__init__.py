"""The discovery ramdisk: Debian's cloud kernel plus an initramfs that runs the agent.

`ironsight ramdisk build` writes `vmlinuz`, `initramfs` and `manifest.json`. The kernel is
taken from Debian's package (downloaded, never installed), the initramfs holds busybox,
Debian's own Python 3.11 with only the standard library modules the agent imports, and the
agent package (`ironsight.agent`) copied alone as `ironsight_agent`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path


class RamdiskError(Exception):
    """The ramdisk cannot be built; the message says which step and why."""


def run(argv: Sequence[str | Path], *, cwd: Path | None = None,
        env: dict[str, str] | None = None, timeout: float = 600) -> str:
    """stdout of a command that must succeed; its stderr goes into the error."""
    try:
        proc = subprocess.run([str(arg) for arg in argv], cwd=cwd, env=env, capture_output=True,
                              text=True, errors="replace", timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RamdiskError(f"{argv[0]}: {exc}") from None
    if proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip())[-2000:]
        raise RamdiskError(f"`{' '.join(str(a) for a in argv)}` failed "
                           f"(exit {proc.returncode}): {detail}")
    return proc.stdout
