from __future__ import annotations

import pytest

from ironsight.baremetal import states


@pytest.mark.parametrize(("source", "event", "target"), [
    ("enroll", "manage", "verifying"),
    ("verifying", "done", "manageable"),
    ("verifying", "fail", "enroll"),
    ("manageable", "inspect", "inspecting"),
    ("inspecting", "wait", "inspect wait"),
    ("inspect wait", "done", "manageable"),
    ("inspecting", "fail", "inspect failed"),
    ("inspect wait", "abort", "inspect failed"),
    ("inspect failed", "manage", "manageable"),
    ("inspect failed", "inspect", "inspecting"),
    ("manageable", "provide", "available"),
    ("available", "manage", "manageable"),
    ("available", "deploy", "deploying"),
    ("deploying", "done", "active"),
    ("active", "rebuild", "deploying"),
    ("active", "undeploy", "deleting"),
    ("deleting", "done", "cleaning"),
    ("cleaning", "provided", "available"),
    ("manageable", "clean", "cleaning"),
    ("cleaning", "done", "manageable"),
    ("active", "rescue", "rescuing"),
    ("rescuing", "done", "rescue"),
    ("rescue", "unrescue", "unrescuing"),
    ("unrescuing", "done", "active"),
    ("active", "service", "servicing"),
    ("servicing", "done", "active"),
    ("manageable", "adopt", "adopting"),
    ("adopting", "done", "active"),
    ("deploy failed", "undeploy", "deleting"),
])
def test_allowed_transitions_match_ironic(source: str, event: str, target: str) -> None:
    assert states.next_state(source, event) == target


@pytest.mark.parametrize(("source", "event"), [
    ("enroll", "inspect"), ("enroll", "provide"), ("available", "inspect"),
    ("manageable", "abort"), ("verifying", "manage"), ("inspecting", "abort"),
    ("manageable", "deploy"), ("enroll", "deploy"), ("available", "undeploy"),
    ("available", "rescue"), ("active", "provide"), ("available", "clean"),
])
def test_illegal_transitions_are_refused(source: str, event: str) -> None:
    assert states.next_state(source, event) is None



def test_every_state_name_fits_its_column() -> None:
    names = {s for pair in states.TRANSITIONS for s in pair[:1]} | set(
        states.TRANSITIONS.values())
    assert max(len(n) for n in names) <= 15


def test_every_api_target_has_a_microversion() -> None:
    assert set(states.TARGET_EVENTS) == set(states.TARGET_VERSIONS)
