"""The lab's background processes: start them detached, end them for sure, read their logs.

The daemon and `ironsight serve` outlive the command that started them (`ironsight lab up`
returns), so they run in sessions of their own with their output in log files, and are
found again by pid from the lab's state.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ironsight.client.wait import Poller, until

# Children started by this process, kept so that they are reaped (and not reported as
# "still running" when garbage-collected) in long-lived callers such as the tests. A record
# of a fact about this process, not configuration: only spawn() adds, only running() removes.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def spawn(argv: Sequence[str], log_path: Path) -> int:
    """A background process in its own session, its output in `log_path`."""
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    _CHILDREN[proc.pid] = proc
    return proc.pid


def child_exited(pid: int) -> bool:
    """Whether a process this one spawned has ended (or was never its child).

    Our child is polled, not checked by command line: that is ours until it has exec'd.
    """
    child = _CHILDREN.get(pid)
    return child is None or child.poll() is not None


def running(pid: int) -> bool:
    """Alive and not a zombie (an ended child of ours that nobody reaped yet)."""
    child = _CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        del _CHILDREN[pid]
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def terminate(pid: int, grace: float) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds; returns once the process is gone (or 5 s
    after the kill)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if grace > 0 and until(lambda: not running(pid), grace, Poller(interval=0.1)):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    until(lambda: not running(pid), 5, Poller(interval=0.05))


def log_tail(path: Path, lines: int = 60) -> str:
    """The last `lines` lines of a log file, or "(no log)"."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
