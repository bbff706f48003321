"""`[conductor] inspect_wait_timeout`: a ramdisk that never reports fails the inspection,
and the introspection is aborted in discoverd too (node powered off)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .helpers import (
    Service,
    enroll,
    history,
    inspect,
    machine,
    wait_di_state,
    wait_node,
    wait_ramdisk_booted,
    wait_step,
)

TIMEOUT_CONF = """
[conductor]
inspect_wait_timeout = 2
check_provision_state_interval = 0.5
"""


@pytest.fixture(scope="module")
def timed_out(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A node whose ramdisk never reports, once the conductor has given up on it."""
    svc = Service(tmp_path_factory.mktemp("timeout"), TIMEOUT_CONF).start()
    try:
        spec, _ = machine(tmp_path_factory.mktemp("machines"))
        with svc.client() as client:
            uuid = enroll(client, spec)
            inspect(client, uuid)
            wait_ramdisk_booted(svc, client, uuid)
            failed = wait_node(client, uuid, provision="inspect failed", timeout=8)
            status = wait_di_state(svc, uuid, "error")
            settled = wait_node(client, uuid, provision="inspect failed", power="power off")
            attempts = {"attempts": wait_step(client, uuid, "powered_off")}
            yield {"uuid": uuid, "failed": failed, "status": status, "node": settled,
                   "history": history(client, uuid), "attempts": attempts["attempts"]}
    finally:
        svc.stop()


def test_timeout_fails_the_node(timed_out):
    events = [e["event"] for e in timed_out["history"]]
    assert any(e.startswith("Provision state changed from inspect wait to inspect failed "
                            "(fail): Timeout reached while inspecting") for e in events), events
    assert timed_out["node"]["reservation"] is None
    assert timed_out["node"]["target_provision_state"] is None


def test_timeout_aborts_the_introspection_in_discoverd(timed_out):
    assert timed_out["status"]["state"] == "error"
    assert timed_out["status"]["error"] == "Canceled by operator"


def test_timed_out_node_is_powered_off(timed_out):
    assert timed_out["node"]["power_state"] == "power off"


def test_timeout_reason_stays_in_last_error_after_the_power_off(timed_out):
    assert "Timeout reached while inspecting" in (timed_out["node"]["last_error"] or "")


def test_the_timeout_names_the_step_the_boot_stalled_at(timed_out):
    # the fake driver boots nothing: no DHCP request ever comes after the power on
    assert ("Please check the node's history and logs. BOOT_NO_DHCP: the node was powered "
            "on at ") in timed_out["node"]["last_error"]
    assert timed_out["node"]["last_error"].endswith(
        " but no DHCP request from it was ever seen.")


def test_the_timed_out_attempt_ends_with_its_code(timed_out):
    (attempt,) = timed_out["attempts"]
    assert (attempt["result"], attempt["failure_code"]) == ("failed", "BOOT_NO_DHCP")
    assert [p["phase"] for p in attempt["phases"]] == [
        "started", "power_on_requested", "powered_on", "finished", "powered_off"]
