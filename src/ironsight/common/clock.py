"""Time as both services store it."""

from __future__ import annotations

import datetime as dt


def utcnow() -> dt.datetime:
    """Now in UTC, naive: how both services store times."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)
