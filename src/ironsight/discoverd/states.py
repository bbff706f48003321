"""Introspection states and events (ironic-inspector's names).

Unlike upstream, `error` is reachable from every state that is not final — ironic-inspector's
state machine had no error transition out of `waiting`, so a failed callback could leave a
node `waiting` until its timeout. Here every path ends in `finished` or `error`.
"""

from __future__ import annotations

STARTING = "starting"
WAITING = "waiting"
PROCESSING = "processing"
FINISHED = "finished"
ERROR = "error"
REAPPLYING = "reapplying"
ABORTING = "aborting"

ALL = (STARTING, WAITING, PROCESSING, FINISHED, ERROR, REAPPLYING, ABORTING)
FINAL = (FINISHED, ERROR)
ACTIVE = (STARTING, PROCESSING, REAPPLYING, ABORTING)  # some process is working on it
UNFINISHED = (STARTING, WAITING, PROCESSING, REAPPLYING, ABORTING)

# event -> states it may be applied in; the target is given by the caller's update.
ALLOWED_FROM: dict[str, tuple[str, ...]] = {
    "start": (FINISHED, ERROR, WAITING),
    "wait": (STARTING,),
    "process": (WAITING, STARTING),  # a fast ramdisk may call back before `wait` is saved
    "finish": (PROCESSING, REAPPLYING),
    "reapply": (FINISHED, ERROR),
    "abort": (STARTING, WAITING),
    "abort_end": (ABORTING,),
    "refuse": (WAITING, STARTING),  # a report its hooks refuse ends only what waits for one
    "start_failed": (STARTING,),  # a boot that failed ends only a start still under way
    "timeout": UNFINISHED,
    "error": UNFINISHED,
}

EVENT_TARGET = {
    "start": STARTING, "wait": WAITING, "process": PROCESSING, "finish": FINISHED,
    "reapply": REAPPLYING, "abort": ABORTING, "abort_end": ERROR, "refuse": ERROR,
    "start_failed": ERROR,
    "timeout": ERROR,
    "error": ERROR,
}
