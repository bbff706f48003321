"""The conductor's record of a hands-off inspection's start, in the node's
driver_internal_info under one key (`inspection_start`): how many starts were made, why the
last one did not reach the inspection service (the poll makes it again), whether it was cut
short by its conductor's death (made again without counting), and whether an abort has yet
to reach the service. The conductor alone reads and writes it (inspection.py, periodic.py):
inspect interfaces never see it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KEY = "inspection_start"
# the keys an earlier release kept, one each, prefixed with the interface's name: read when
# the record is missing (a node in inspect wait across an upgrade), dropped at the next write
_LEGACY = {"_starts": "starts", "_start_lost": "lost", "_start_interrupted": "interrupted",
           "_abort_pending": "abort_pending"}


@dataclass(frozen=True)
class StartRecord:
    starts: int = 1
    lost: str | None = None  # why the last start did not reach the service
    interrupted: bool = False  # cut short by its conductor's death: not counted
    abort_pending: bool = False  # an abort that has not reached the service yet


def record(internal: Mapping[str, Any] | None) -> StartRecord:
    """The node's record (the defaults when it has none)."""
    found = (internal or {}).get(KEY)
    if not isinstance(found, Mapping):
        found = {field: value for key, value in (internal or {}).items()
                 for suffix, field in _LEGACY.items() if key.endswith(suffix)}
    return StartRecord(starts=int(found.get("starts") or 1),
                       lost=str(found["lost"]) if found.get("lost") else None,
                       interrupted=bool(found.get("interrupted")),
                       abort_pending=bool(found.get("abort_pending")))


def updated(internal: Mapping[str, Any] | None, **changes: Any) -> dict[str, Any]:
    """A copy of driver_internal_info with the record changed so."""
    found = dataclasses.replace(record(internal), **changes)
    kept = {k: v for k, v in (internal or {}).items()
            if not any(k.endswith(suffix) for suffix in _LEGACY)}
    return {**kept, KEY: dataclasses.asdict(found)}
