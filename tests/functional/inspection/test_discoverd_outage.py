"""discoverd goes away while a node waits in `inspect wait`. The services run as two
processes (`serve --only baremetal` / `serve --only discoverd`) so that discoverd alone can
stop; every test leaves discoverd running again (same state directory, same database)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from .helpers import (
    Service,
    accepted_reply,
    di_status,
    enroll,
    inspect,
    machine,
    node,
    provision,
    run_agent,
    snapshot,
    wait_node,
    wait_ramdisk_booted,
)

STATUS_PERIOD = 0.5  # [discoverd] status_check_period of the bare-metal service


@pytest.fixture(scope="module")
def split_services(tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[tuple[Service, Service]]:
    """(bare-metal service, discoverd), each in its own process and state directory."""
    bm = Service(tmp_path_factory.mktemp("bm"),
                 f"[discoverd]\nstatus_check_period = {STATUS_PERIOD}\n", only="baremetal")
    di = Service(tmp_path_factory.mktemp("di"), only="discoverd")
    bm.configure(discoverd={"service_url": f"{di.di_url}/v1"})
    di.configure(introspection={"ironic_url": bm.url})
    try:
        with ThreadPoolExecutor(2) as pool:
            for started in [pool.submit(bm.start), pool.submit(di.start)]:
                started.result()
        yield bm, di
    finally:
        di.stop()
        bm.stop()


@pytest.fixture
def bm_client(split_services: tuple[Service, Service]) -> Iterator[httpx.Client]:
    bm, di = split_services
    try:
        with bm.client() as client:
            yield client
    finally:
        if di.proc is None or di.proc.poll() is not None:
            di.start()  # a failed test must not leave discoverd down for the next one


def test_node_keeps_waiting_while_discoverd_is_down_and_completes_when_it_is_back(
        split_services, bm_client, tmp_path):
    bm, di = split_services
    spec, tree = machine(tmp_path)
    uuid = enroll(bm_client, spec)
    inspect(bm_client, uuid)
    wait_ramdisk_booted(di, bm_client, uuid)
    di.stop()
    # More than two status periods without discoverd: still waiting, no error.
    until = time.monotonic() + 3 * STATUS_PERIOD + 0.2
    while time.monotonic() < until:
        doc = node(bm_client, uuid)
        assert doc["provision_state"] == "inspect wait", doc
        assert doc["last_error"] is None, doc
        assert doc["reservation"] is None, doc
        time.sleep(0.1)
    assert "Cannot get introspection statuses from discoverd" in bm.log.read_text()
    di.start()
    assert di_status(di, uuid)["state"] == "waiting"
    reply = accepted_reply(run_agent(tree, f"{di.di_url}/v1/continue"))
    assert reply == (200, {"uuid": uuid})
    doc = wait_node(bm_client, uuid, provision="manageable", power="power off")
    assert doc["last_error"] is None
    assert doc["properties"]["cpus"] == spec.cpus


def test_abort_while_discoverd_is_down_is_not_lost(split_services, bm_client, tmp_path):
    _, di = split_services
    spec, tree = machine(tmp_path)
    uuid = enroll(bm_client, spec)
    inspect(bm_client, uuid)
    wait_ramdisk_booted(di, bm_client, uuid)
    di.stop()
    resp = provision(bm_client, uuid, "abort")
    if resp.status_code != 202:
        return  # refusing the abort while discoverd is down is a correct answer too
    wait_node(bm_client, uuid, provision="inspect failed")
    di.start()
    time.sleep(3 * STATUS_PERIOD)  # room for a retried abort to reach discoverd
    before = snapshot(bm_client, uuid)
    proc = run_agent(tree, f"{di.di_url}/v1/continue", "--retries", "0")
    time.sleep(0.5)  # what discoverd does after answering (power off) has time to land
    after = snapshot(bm_client, uuid)
    assert proc.returncode == 1 and "HTTP 404" in proc.stderr, proc.stdout + proc.stderr
    assert after["properties"] == before["properties"] == {}
    assert after["ports"] == before["ports"]
