"""Provision and power states and the provision state machine, with Ironic's names.

Only the part of Ironic's machine the design needs: enrolment, verification, inspection and
`provide` (which goes straight to `available`: cleaning and deployment are out of scope).
"""

from __future__ import annotations

ENROLL = "enroll"
VERIFYING = "verifying"
MANAGEABLE = "manageable"
INSPECTING = "inspecting"
INSPECTWAIT = "inspect wait"
INSPECTFAIL = "inspect failed"
AVAILABLE = "available"

POWER_ON = "power on"
POWER_OFF = "power off"
REBOOT = "rebooting"
POWER_ERROR = "error"

# (state, event) -> new state
TRANSITIONS: dict[tuple[str, str], str] = {
    (ENROLL, "manage"): VERIFYING,
    (VERIFYING, "done"): MANAGEABLE,
    (VERIFYING, "fail"): ENROLL,
    (MANAGEABLE, "inspect"): INSPECTING,
    (INSPECTING, "wait"): INSPECTWAIT,
    (INSPECTING, "done"): MANAGEABLE,
    (INSPECTING, "fail"): INSPECTFAIL,
    (INSPECTWAIT, "done"): MANAGEABLE,
    (INSPECTWAIT, "fail"): INSPECTFAIL,
    (INSPECTWAIT, "abort"): INSPECTFAIL,
    (INSPECTFAIL, "manage"): MANAGEABLE,
    (INSPECTFAIL, "inspect"): INSPECTING,
    (MANAGEABLE, "provide"): AVAILABLE,
    (AVAILABLE, "manage"): MANAGEABLE,
}

def next_state(state: str, event: str) -> str | None:
    """The state `event` leads to from `state`, or None when the event is not allowed."""
    return TRANSITIONS.get((state, event))


def is_allowed(state: str, event: str) -> bool:
    return (state, event) in TRANSITIONS
