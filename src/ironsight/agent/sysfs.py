"""File and command helpers shared by the collectors.

Every reader takes a `root` so that the collectors run unchanged against a fixture
tree. Commands (`ip`, `ipmitool`) only run on the live system (root "/"): a fixture
tree cannot answer them.
"""

from __future__ import annotations

import os


def join(root: str, rel: str) -> str:
    return os.path.join(root, rel.lstrip("/"))


def is_live(root: str) -> bool:
    return os.path.realpath(root) == "/"


def read(path: str) -> str | None:
    """Stripped text, or None: sysfs files may be absent, root-only, or fail with EINVAL."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except (OSError, ValueError):
        return None


def read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def read_int(path: str) -> int | None:
    text = read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def listdir(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def link_name(path: str) -> str | None:
    """Basename of a symlink's target (e.g. a driver), without needing the target to exist."""
    try:
        return os.path.basename(os.readlink(path).rstrip("/")) or None
    except OSError:
        return None


def which(name: str) -> str | None:
    """Like shutil.which, without importing shutil (start-up time in the ramdisk)."""
    for directory in os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").split(os.pathsep):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def run(argv: list[str], timeout: float) -> str | None:
    """stdout of a successful command, else None: these tools are optional on any machine."""
    import subprocess  # only when a command runs: it is a costly import under TCG

    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              errors="replace", check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None
