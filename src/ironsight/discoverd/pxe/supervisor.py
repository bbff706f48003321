"""Keeps one child process (dnsmasq) running for as long as discoverd runs.

A child rather than a daemon: discoverd sees it exit at once, restarts it (with a backoff, so
that a broken configuration does not spin), and stops it with itself. Its output lines go to a
callback. The child's pid is recorded so that one left behind by a killed discoverd is ended
before a new one tries to bind the same port.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import logging
import os
import signal
from collections.abc import Callable, Sequence
from pathlib import Path

LOG = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: the kernel kills it when discoverd dies, even by SIGKILL,
    so that no orphan keeps the DHCP port from the replica that takes over."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Supervisor:
    def __init__(self, argv: Sequence[str], *, name: str, on_line: Callable[[str], None],
                 pid_file: Path | None = None, min_backoff: float = 1.0,
                 max_backoff: float = 30.0, stable_after: float = 30.0) -> None:
        self.argv = list(argv)
        self.name = name
        self.on_line = on_line
        self.pid_file = pid_file
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.stable_after = stable_after
        self.pid: int | None = None
        self.restarts = 0
        # Set once the running child printed its first line (dnsmasq: after it bound).
        self.running = asyncio.Event()
        self._proc: asyncio.subprocess.Process | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._recent: collections.deque[str] = collections.deque(maxlen=10)

    @property
    def started(self) -> bool:
        return self._task is not None

    def start(self) -> None:
        self.end_stale()
        self._stopping = False
        self._task = asyncio.get_running_loop().create_task(self._keep_running(),
                                                            name=f"supervise-{self.name}")

    async def stop(self, timeout: float = 5.0) -> None:
        self._stopping = True
        await self._end(timeout)
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await self._end(timeout)  # one spawned while the loop was being cancelled
        self._forget_pid()

    async def _end(self, timeout: float) -> None:
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            LOG.warning("%s did not stop within %.0f s; killing it", self.name, timeout)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()

    async def _keep_running(self) -> None:
        delay = self.min_backoff
        loop = asyncio.get_running_loop()
        while not self._stopping:
            began = loop.time()
            try:
                why = f"exited with status {await self._run_once()}"
            except Exception as exc:  # could not start it (OSError), or lost its output
                why = f"failed: {exc}"
            if self._stopping:
                return
            ran = loop.time() - began
            delay = self.min_backoff if ran >= self.stable_after else delay
            LOG.error("%s %s after %.1f s; restarting in %.1f s. Last output: %s", self.name,
                      why, ran, delay, " | ".join(self._recent) or "(none)")
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_backoff)
            self.restarts += 1

    async def _run_once(self) -> int:
        self._recent.clear()
        proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
            preexec_fn=_die_with_parent)
        self._proc, self.pid = proc, proc.pid
        self._record_pid(proc.pid)
        LOG.info("%s started (pid %d)", self.name, proc.pid)
        assert proc.stderr is not None
        try:
            while line := await proc.stderr.readline():
                text = line.decode(errors="replace").rstrip()
                self._recent.append(text)
                self.running.set()
                self.on_line(text)
            return await proc.wait()
        except Exception:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()  # never two of them: the next one could not bind
            await proc.wait()
            raise
        finally:
            self.running.clear()
            self.pid = None

    # --- a child left behind by a discoverd that was killed ------------------------------

    def _record_pid(self, pid: int) -> None:
        if self.pid_file is not None:
            self.pid_file.write_text(f"{pid}\n")

    def _forget_pid(self) -> None:
        if self.pid_file is not None:
            self.pid_file.unlink(missing_ok=True)

    def end_stale(self) -> None:
        if self.pid_file is None or not self.pid_file.exists():
            return
        try:
            pid = int(self.pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return
        if self.argv[-1].encode() not in cmdline:
            return  # the pid was reused by something else
        LOG.warning("Ending %s (pid %d) left by a previous discoverd", self.name, pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        self._forget_pid()
