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
])
def test_allowed_transitions_match_ironic(source: str, event: str, target: str) -> None:
    assert states.next_state(source, event) == target


@pytest.mark.parametrize(("source", "event"), [
    ("enroll", "inspect"), ("enroll", "provide"), ("available", "inspect"),
    ("manageable", "abort"), ("verifying", "manage"), ("inspecting", "abort"),
])
def test_illegal_transitions_are_refused(source: str, event: str) -> None:
    assert states.next_state(source, event) is None
