"""Waiting for what a running service does in its own time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def until(check: Callable[[], Any], timeout: float, what: str = "the condition",
          interval: float = 0.1) -> Any:
    """The first true value of `check()`, asked every `interval` s; AssertionError naming
    `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
