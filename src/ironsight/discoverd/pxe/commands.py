"""Running a short-lived program (iptables, ip, dnsmasq --test) without blocking the event
loop, bounded in time."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

TIMEOUT = 30.0


async def run_command(argv: Sequence[str], stdin: str | None = None,
                      timeout: float = TIMEOUT) -> tuple[int, str]:
    """(exit status, stdout and stderr together); status -1 when it could not run."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    except OSError as exc:
        return -1, f"cannot run {argv[0]}: {exc}"
    try:
        out, _ = await asyncio.wait_for(
            proc.communicate(stdin.encode() if stdin is not None else None), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return -1, f"{argv[0]} timed out after {timeout:.0f} s"
    return proc.returncode or 0, out.decode(errors="replace").strip()
