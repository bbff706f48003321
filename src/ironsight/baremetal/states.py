"""Provision and power states and the provision state machine, with Ironic's names.

Enrolment, verification and inspection run as the design has them. The rest of Ironic's
machine (deploy, undeploy, rebuild, clean, rescue, service, adopt) runs only on hardware
types that `provisions` (fake-hardware): each verb goes to its transient state and on at once
to where Ironic's fake interfaces end (`done`), since no step does anything.
"""

from __future__ import annotations

ENROLL = "enroll"
VERIFYING = "verifying"
MANAGEABLE = "manageable"
INSPECTING = "inspecting"
INSPECTWAIT = "inspect wait"
INSPECTFAIL = "inspect failed"
AVAILABLE = "available"
DEPLOYING = "deploying"
DEPLOYWAIT = "wait call-back"
DEPLOYFAIL = "deploy failed"
ACTIVE = "active"
DELETING = "deleting"
CLEANING = "cleaning"
CLEANWAIT = "clean wait"
CLEANFAIL = "clean failed"
RESCUING = "rescuing"
RESCUEWAIT = "rescue wait"
RESCUE = "rescue"
RESCUEFAIL = "rescue failed"
UNRESCUING = "unrescuing"
UNRESCUEFAIL = "unrescue failed"
SERVICING = "servicing"
SERVICEWAIT = "service wait"
SERVICEFAIL = "service failed"
ADOPTING = "adopting"
ADOPTFAIL = "adopt failed"

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
    # deployment
    (AVAILABLE, "deploy"): DEPLOYING,
    (DEPLOYFAIL, "deploy"): DEPLOYING,
    (DEPLOYFAIL, "rebuild"): DEPLOYING,
    (ACTIVE, "rebuild"): DEPLOYING,
    (DEPLOYING, "done"): ACTIVE,
    (DEPLOYING, "fail"): DEPLOYFAIL,
    # undeployment: deleting, then (automated) cleaning, then available
    (ACTIVE, "undeploy"): DELETING,
    (DEPLOYFAIL, "undeploy"): DELETING,
    (RESCUE, "undeploy"): DELETING,
    (RESCUEFAIL, "undeploy"): DELETING,
    (UNRESCUEFAIL, "undeploy"): DELETING,
    (SERVICEFAIL, "undeploy"): DELETING,
    (DELETING, "done"): CLEANING,
    # cleaning: manual (from manageable) back to manageable, automated to available
    (MANAGEABLE, "clean"): CLEANING,
    (CLEANING, "done"): MANAGEABLE,
    (CLEANING, "provided"): AVAILABLE,
    (CLEANING, "fail"): CLEANFAIL,
    (CLEANFAIL, "manage"): MANAGEABLE,
    # rescue
    (ACTIVE, "rescue"): RESCUING,
    (RESCUE, "rescue"): RESCUING,
    (RESCUEFAIL, "rescue"): RESCUING,
    (RESCUING, "done"): RESCUE,
    (RESCUING, "fail"): RESCUEFAIL,
    (RESCUE, "unrescue"): UNRESCUING,
    (RESCUEFAIL, "unrescue"): UNRESCUING,
    (UNRESCUEFAIL, "unrescue"): UNRESCUING,
    (UNRESCUEFAIL, "rescue"): RESCUING,
    (UNRESCUING, "done"): ACTIVE,
    (UNRESCUING, "fail"): UNRESCUEFAIL,
    # service (steps on a deployed node)
    (ACTIVE, "service"): SERVICING,
    (SERVICEFAIL, "service"): SERVICING,
    (SERVICING, "done"): ACTIVE,
    (SERVICING, "fail"): SERVICEFAIL,
    (SERVICEFAIL, "abort"): ACTIVE,
    # adoption of a node already running its workload
    (MANAGEABLE, "adopt"): ADOPTING,
    (ADOPTFAIL, "adopt"): ADOPTING,
    (ADOPTFAIL, "manage"): MANAGEABLE,
    (ADOPTING, "done"): ACTIVE,
    (ADOPTING, "fail"): ADOPTFAIL,
}

# The API's provision targets: what each means as an event, and its microversion.
TARGET_EVENTS: dict[str, str] = {
    "manage": "manage", "provide": "provide", "inspect": "inspect", "abort": "abort",
    "active": "deploy", "deploy": "deploy", "deleted": "undeploy", "undeploy": "undeploy",
    "rebuild": "rebuild", "clean": "clean", "adopt": "adopt", "rescue": "rescue",
    "unrescue": "unrescue", "service": "service",
}
TARGET_VERSIONS: dict[str, int] = {
    "active": 1, "deleted": 1, "rebuild": 1, "manage": 4, "provide": 4, "inspect": 6,
    "abort": 13, "clean": 15, "adopt": 17, "rescue": 38, "unrescue": 38, "deploy": 73,
    "undeploy": 73, "service": 87,
}
# Events run at once on a hardware type that provisions (fake-hardware), and where they end.
INSTANT_EVENTS = ("deploy", "rebuild", "undeploy", "clean", "rescue", "unrescue", "service",
                  "adopt")
# A node in these states is deployed, or being: it is not deleted, its instance stays.
DEPLOYED = (ACTIVE, DEPLOYFAIL, RESCUE, RESCUEFAIL, UNRESCUEFAIL, SERVICEFAIL)


def next_state(state: str, event: str) -> str | None:
    """The state `event` leads to from `state`, or None when the event is not allowed."""
    return TRANSITIONS.get((state, event))


def is_allowed(state: str, event: str) -> bool:
    return (state, event) in TRANSITIONS
