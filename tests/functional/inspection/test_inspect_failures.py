"""Inspections that fail or are aborted: the node ends in `inspect failed` with a reason an
operator can act on, powered off, unlocked, and can be inspected again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ironsight.discoverd.callback_token import HEADER

from ..conftest import free_tcp_port
from .helpers import (
    Service,
    accepted_reply,
    agent_document,
    di_status,
    enroll,
    history,
    inspect,
    issued_token,
    machine,
    ports,
    provision,
    run_agent,
    snapshot,
    wait_di_state,
    wait_node,
    wait_ramdisk_booted,
)

# --- 4. the ramdisk reports an error -----------------------------------------------------------


def test_ramdisk_error_fails_the_inspection_with_its_message(service, client, tmp_path):
    spec, tree = machine(tmp_path)
    uuid = enroll(client, spec)
    document = agent_document(tree)
    document["error"] = "RAID controller did not answer"
    inspect(client, uuid)
    wait_ramdisk_booted(service, client, uuid)
    resp = httpx.post(f"{service.di_url}/v1/continue", json=document, timeout=10,
                      headers={HEADER: issued_token(service, uuid)})
    assert resp.status_code == 400, resp.text
    assert "RAID controller did not answer" in resp.json()["error"]["message"]
    doc = wait_node(client, uuid, provision="inspect failed", power="power off")
    assert doc["last_error"].startswith("discoverd inspection failed: ")
    assert "RAID controller did not answer" in doc["last_error"]
    assert doc["reservation"] is None
    assert doc["target_provision_state"] is None
    assert "cpus" not in doc["properties"]
    status = di_status(service, uuid)
    assert status["state"] == "error" and "RAID controller did not answer" in status["error"]


# --- 5. discoverd unreachable when the inspection starts -----------------------------------


@pytest.fixture
def baremetal_without_discoverd(tmp_path: Any) -> Iterator[Service]:
    """The bare-metal service alone, its [discoverd] service_url on a port nobody serves;
    each start tries for 1 s, and a lost start is made again after 0.5 s, twice in all."""
    svc = Service(tmp_path, only="baremetal")
    svc.configure(discoverd={"service_url": f"http://127.0.0.1:{free_tcp_port()}/v1",
                             "start_grace_period": "0.5", "start_attempts": "2",
                             "start_unreachable_timeout": "1"})
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


def test_discoverd_down_at_every_start_fails_the_inspection_and_unlocks_the_node(
        baremetal_without_discoverd, tmp_path):
    svc = baremetal_without_discoverd
    spec, _ = machine(tmp_path)
    with svc.client() as client:
        uuid = enroll(client, spec)
        inspect(client, uuid)
        doc = wait_node(client, uuid, provision="inspect failed")
        assert doc["last_error"].startswith("Failed to start inspection:"), doc["last_error"]
        assert doc["reservation"] is None
        assert doc["target_provision_state"] is None
        # Nothing is stuck: the node takes the next action at once.
        resp = provision(client, uuid, "manage")
        assert resp.status_code == 202, resp.text
        wait_node(client, uuid, provision="manageable")


def test_discoverd_refusing_to_start_fails_the_inspection_with_its_reason(service, client,
                                                                          tmp_path):
    spec, _ = machine(tmp_path)
    uuid = enroll(client, spec, pxe_port=False)  # no port, no BMC address: nothing to look up
    inspect(client, uuid)
    doc = wait_node(client, uuid, provision="inspect failed")
    assert doc["last_error"].startswith("Failed to start inspection: No lookup attributes"), \
        doc["last_error"]
    assert doc["reservation"] is None


# --- 8. abort ---------------------------------------------------------------------------------


@pytest.fixture
def aborted(service: Service, client: httpx.Client, tmp_path: Any) -> dict[str, Any]:
    spec, tree = machine(tmp_path)
    uuid = enroll(client, spec)
    inspect(client, uuid)
    wait_ramdisk_booted(service, client, uuid)
    resp = provision(client, uuid, "abort")
    assert resp.status_code == 202, resp.text
    return {"uuid": uuid, "spec": spec, "tree": tree}


def test_abort_fails_the_node_and_cancels_the_introspection(service, client, aborted):
    uuid = aborted["uuid"]
    doc = wait_node(client, uuid, provision="inspect failed", power="power off")
    assert doc["reservation"] is None
    assert doc["target_provision_state"] is None
    events = [e["event"] for e in history(client, uuid)]
    assert "Provision state changed from inspect wait to inspect failed (abort): Inspection " \
           "was aborted by request." in events
    status = wait_di_state(service, uuid, "error")
    assert status["error"] == "Canceled by operator"
    assert status["finished"] is True


def test_abort_reason_stays_in_last_error_after_the_power_off(service, client, aborted):
    uuid = aborted["uuid"]
    wait_di_state(service, uuid, "error")
    doc = wait_node(client, uuid, provision="inspect failed", power="power off")
    assert doc["last_error"] == "Inspection was aborted by request."


def test_late_report_after_abort_is_refused_and_changes_nothing(service, client, aborted):
    uuid = aborted["uuid"]
    wait_di_state(service, uuid, "error")
    wait_node(client, uuid, provision="inspect failed", power="power off")
    before = snapshot(client, uuid)
    proc = run_agent(aborted["tree"], f"{service.di_url}/v1/continue", "--retries", "0")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "HTTP 404" in proc.stderr, proc.stderr
    assert snapshot(client, uuid) == before
    assert di_status(service, uuid)["error"] == "Canceled by operator"


# --- 9. re-inspection -----------------------------------------------------------------------


def test_inspect_failed_node_can_be_inspected_again(service, client, aborted):
    uuid, spec = aborted["uuid"], aborted["spec"]
    wait_node(client, uuid, provision="inspect failed", power="power off")
    wait_di_state(service, uuid, "error")
    inspect(client, uuid)
    wait_ramdisk_booted(service, client, uuid)
    reply = accepted_reply(run_agent(aborted["tree"], f"{service.di_url}/v1/continue"))
    assert reply == (200, {"uuid": uuid})
    doc = wait_node(client, uuid, provision="manageable", power="power off")
    assert doc["last_error"] is None
    assert doc["properties"]["cpus"] == spec.cpus
    assert set(ports(client, uuid)) == set(spec.macs)
    assert di_status(service, uuid)["state"] == "finished"
    events = [e["event"] for e in history(client, uuid)]
    assert events[-1] == ("Provision state changed from inspect wait to manageable (done): "
                          "power off")
    assert "Provision state changed from inspect failed to inspecting (inspect)" in events


# --- the callback token through the bare-metal API ---------------------------------------------


def test_continue_inspection_forwards_the_callback_token_to_discoverd(service, client,
                                                                     tmp_path):
    """A wrong token posted to the bare-metal API is refused by discoverd (403, nothing
    changed); the node's own token passes through unchanged and completes the inspection."""
    spec, tree = machine(tmp_path)
    uuid = enroll(client, spec)
    document = agent_document(tree)
    inspect(client, uuid)
    wait_ramdisk_booted(service, client, uuid)
    token = issued_token(service, uuid)
    forged = httpx.post(f"{service.url}/v1/continue_inspection", json=document, timeout=10,
                        headers={HEADER: "forged"})
    assert forged.status_code == 403, forged.text
    assert di_status(service, uuid)["state"] == "waiting"
    resp = httpx.post(f"{service.url}/v1/continue_inspection", json=document, timeout=10,
                      headers={HEADER: token})
    assert resp.status_code == 202, resp.text
    doc = wait_node(client, uuid, provision="manageable")
    assert doc["properties"]["memory_mb"] == spec.memory_mb
    assert token not in service.log.read_text()
