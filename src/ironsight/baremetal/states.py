"""Provision and power states and the provision state machine, with Ironic's names.

Only the part of Ironic's machine the seed needs: enrolment, verification, inspection and
`provide` (which goes straight to `available`: cleaning and deployment are out of scope).
"""

from __future__ import annotations

from dataclasses import dataclass

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

# Events that an operator may ask for through the API (`PUT .../states/provision`).
VERBS = ("manage", "inspect", "abort", "provide")

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

# States in which a node is "in progress" and the target state shown to the operator.
TARGETS: dict[str, str] = {
    VERIFYING: MANAGEABLE,
    INSPECTING: MANAGEABLE,
    INSPECTWAIT: MANAGEABLE,
}

# States where a conductor is working on the node and a deadline applies.
TIMED_STATES = (VERIFYING, INSPECTING, INSPECTWAIT)

ALL_STATES = (ENROLL, VERIFYING, MANAGEABLE, INSPECTING, INSPECTWAIT, INSPECTFAIL, AVAILABLE)


@dataclass(frozen=True)
class Transition:
    source: str
    event: str
    target: str


def next_state(state: str, event: str) -> str | None:
    """The state `event` leads to from `state`, or None when the event is not allowed."""
    return TRANSITIONS.get((state, event))


def is_allowed(state: str, event: str) -> bool:
    return (state, event) in TRANSITIONS
