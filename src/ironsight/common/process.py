"""Facts about processes: dead-owner detection (both services), the lab's own processes."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def runs_with(pid: int, marker: bytes) -> bool:
    """Whether the process `pid` runs and its command line (/proc/<pid>/cmdline) contains
    `marker`: tells a process of ours from another that got its pid later."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return marker in cmdline
