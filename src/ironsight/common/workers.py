"""A bounded pool for long actions: the API answers 503 rather than queueing without end."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ironsight.common.exceptions import NoFreeWorker

LOG = logging.getLogger(__name__)


class WorkerPool:
    def __init__(self, size: int) -> None:
        self.size = size
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def busy(self) -> int:
        return len(self._tasks)

    def check_free(self) -> None:
        if len(self._tasks) >= self.size:
            raise NoFreeWorker("No free conductor workers available")

    def spawn(self, fn: Callable[[], Awaitable[object]], name: str,
              on_crash: Callable[[Exception], Awaitable[None]] | None = None) -> None:
        """Run `fn` now. Callers check_free() before they change state, so that a full pool
        refuses cleanly; a spawn right after such a check is never refused. `on_crash` lets
        the caller leave its resource in a state an operator can act on."""

        async def run() -> None:
            try:
                await fn()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                LOG.exception("Worker %s crashed", name)
                if on_crash is not None:
                    try:
                        await on_crash(exc)
                    except Exception:
                        LOG.exception("Worker %s: recording the crash failed", name)

        task = asyncio.get_running_loop().create_task(run(), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self, timeout: float) -> None:
        """Let running actions finish (they release their locks), then cancel the rest."""
        if not self._tasks:
            return
        _done, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=5)
