"""A stock ironic-python-agent 13 daemon, booted as Ironic 39 boots it for an in-band
inspection when the ramdisk is to stay (fast track: `ipa-inspection-callback-url` =
`<api>/v1/continue_inspection` and `ipa-api-url`), against the live bare-metal service.

Measured against Ironic 39 (fake-hardware, `[deploy] fast_track = true`), the daemon posts its
inspection (202), looks itself up by the UUID it was given (200, with its agent token),
heartbeats (202) and then stays up, serving its API and heartbeating; the node ends
`manageable`. Without fast track Ironic does not give the ramdisk `ipa-api-url`: it posts its
inspection and is powered off. See docs/inspection.md."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .helpers import (
    Service,
    enroll,
    expected_local_gb,
    inspect,
    machine,
    node,
    wait_node,
    wait_ramdisk_booted,
)
from .ipa import Ipa, missing_reason

pytestmark = [pytest.mark.functional,
              pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason()))]

V = {"X-OpenStack-Ironic-API-Version": "1.62"}


@pytest.fixture(scope="module")
def ipa_run(service: Service, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[dict[str, Any]]:
    where = tmp_path_factory.mktemp("ipa")
    spec, _tree = machine(where, nics=2, cpus=6, memory_mb=12288, disks_gb=(2, 30, 100))
    with service.client() as client:
        uuid = enroll(client, spec)
        inspect(client, uuid)
        wait_ramdisk_booted(service, client, uuid)
        agent = Ipa(where / "agent", spec, {
            "ipa-api-url": service.url,
            "ipa-inspection-callback-url": f"{service.url}/v1/continue_inspection",
            "BOOTIF": "01-" + spec.pxe_mac.replace(":", "-")})
        agent.start()
        try:
            agent.wait_for("heartbeat successful", timeout=90)
            final = wait_node(client, uuid, provision="manageable")
            yield {"spec": spec, "uuid": uuid, "node": final, "agent": agent,
                   "alive": agent.proc is not None and agent.proc.poll() is None,
                   "log": agent.text()}
        finally:
            agent.stop()


def test_the_node_ends_manageable_with_what_ipa_found(ipa_run):
    spec, doc = ipa_run["spec"], ipa_run["node"]
    assert doc["provision_state"] == "manageable"
    assert doc["last_error"] is None
    assert doc["properties"]["cpus"] == spec.cpus
    assert doc["properties"]["memory_mb"] == spec.memory_mb
    assert doc["properties"]["local_gb"] == expected_local_gb(spec)


def test_ipa_posts_its_inspection_then_looks_itself_up_and_heartbeats(ipa_run):
    log = ipa_run["log"]
    assert "inspection finished successfully" in log
    assert f"Lookup succeeded, node UUID is {ipa_run['uuid']}" in log
    assert "Agent token recorded as designated by the ironic installation." in log
    assert "heartbeat successful" in log


def test_ipa_logs_no_lookup_failure(ipa_run):
    log = ipa_run["log"]
    for failure in ("Failed looking up node", "LookupNodeError", "error sending heartbeat",
                    "Failed to perform inspection", "IPA-RUNNER: lockdown"):
        assert failure not in log


def test_ipa_stays_up_serving_and_heartbeating_as_against_ironic(ipa_run):
    assert ipa_run["alive"]
    assert "Started API service" in ipa_run["log"]


def test_the_agent_token_is_never_shown_by_the_api(ipa_run, client: httpx.Client):
    info = node(client, ipa_run["uuid"])["driver_internal_info"]
    assert info["agent_secret_token"] == "******"
    assert info["agent_url"] == f"https://127.0.0.1:{ipa_run['agent'].port}"


def test_a_second_lookup_gets_no_token(ipa_run, service: Service):
    resp = httpx.get(f"{service.url}/v1/lookup", params={"node_uuid": ipa_run["uuid"]},
                     headers=V, timeout=10)
    assert resp.status_code == 200, resp.text
    assert resp.json()["config"]["agent_token"] == "******"
    assert resp.json()["node"]["driver_internal_info"]["agent_secret_token"] == "******"


def test_a_heartbeat_with_another_token_is_refused(ipa_run, service: Service):
    resp = httpx.post(f"{service.url}/v1/heartbeat/{ipa_run['uuid']}", headers=V, timeout=10,
                      json={"callback_url": "http://10.0.0.1:9999", "agent_token": "x" * 64,
                            "agent_version": "13.0.0"})
    assert resp.status_code == 400
    assert "Invalid or missing agent token received." in resp.text
