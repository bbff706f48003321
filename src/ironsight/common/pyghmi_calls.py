"""Blocking pyghmi calls from asyncio, shared by the pxe_ipminative driver and discovery's
BMC check (both services may run in one process, and pyghmi's sessions are process-wide).

- `in_daemon_thread`: not asyncio's shared default pool: a pyghmi login can hang far past
  any timeout (one to an unknown user of pyghmi's own BMC never ends), and a stuck pool
  thread would take a slot from every other `to_thread` user and hold the event loop's
  shutdown. Cancelling the await abandons the thread.
- `bmc_lock`: one call at a time per BMC, process-wide: pyghmi would otherwise share (and
  one caller's logout end) one session between two concurrent calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_locks_lock = threading.Lock()
_bmc_locks: dict[tuple[str, int], threading.Lock] = {}


async def in_daemon_thread(func: Callable[..., T], *args: Any, name: str = "pyghmi") -> T:
    """Run blocking `func` in a new daemon thread and await its result."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():  # the caller gave up (a timeout)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def run() -> None:
        try:
            result, error = func(*args), None
        except BaseException as exc:
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the event loop is gone
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await future


def bmc_lock(address: str, port: int) -> threading.Lock:
    with _locks_lock:
        return _bmc_locks.setdefault((address, port), threading.Lock())
