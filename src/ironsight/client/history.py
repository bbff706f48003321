"""A node's history with its inspections' steps among its events (`ironsight node history`,
the demo): the bare-metal API's history stays Ironic's, and the steps are read from the
attempts' timelines when shown, never copied into it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

# a step's keys that are not its details
STEP_KEYS = ("phase", "at", "source")


def with_steps(events: Sequence[Mapping[str, Any]], attempts: Sequence[Mapping[str, Any]]
               ) -> list[dict[str, Any]]:
    """The history's events and the attempts' steps, by time; a step is an event of type
    inspection_step without a UUID (ERROR for a failed attempt's end)."""
    found = [dict(e) for e in events]
    for attempt in attempts:
        for phase in attempt.get("phases") or []:
            details = ", ".join(f"{k}={v}" for k, v in phase.items()
                                if k not in STEP_KEYS and v is not None)
            failed = phase.get("phase") == "finished" and attempt.get("failure_code")
            found.append({
                "uuid": None, "created_at": phase.get("at"),
                "severity": "ERROR" if failed else "INFO", "event_type": "inspection_step",
                "event": f"Inspection attempt {attempt.get('attempt')}: {phase.get('phase')} "
                         f"({phase.get('source')}{': ' + details if details else ''})"})
    return sorted(found, key=lambda e: utc(e.get("created_at")))


def utc(value: Any) -> dt.datetime:
    """A timestamp as naive UTC, for ordering (the history's carry an offset, the steps'
    none); the oldest time when there is none or it does not parse."""
    try:
        found = dt.datetime.fromisoformat(str(value))
    except ValueError:
        return dt.datetime.min
    return found if found.tzinfo is None else found.astimezone(dt.UTC).replace(tzinfo=None)
