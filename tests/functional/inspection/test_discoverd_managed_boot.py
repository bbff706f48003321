"""`[discoverd] conductor_boots = false`, the Kilo design: discoverd, not the conductor, sets the
boot device, reboots and powers the node off, through the bare-metal API (each a conductor
action under the node's lock); the inspection ends the same."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .helpers import (
    Service,
    accepted_reply,
    enroll,
    history,
    inspect,
    machine,
    run_agent,
    wait_node,
    wait_ramdisk_booted,
)


@pytest.fixture(scope="module")
def inspected(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    state: Path = tmp_path_factory.mktemp("kilo")
    svc = Service(state, "[discoverd]\nconductor_boots = false\n").start()
    try:
        spec, tree = machine(state / "machine", nics=2, cpus=4, memory_mb=4096,
                             disks_gb=(20,))
        with svc.client() as client:
            uuid = enroll(client, spec)
            inspect(client, uuid)
            wait_ramdisk_booted(svc, client, uuid)
            status, _ = accepted_reply(run_agent(tree, f"{svc.di_url}/v1/continue"))
            assert status == 200
            final = wait_node(client, uuid, provision="manageable")
            yield {"node": final, "history": [e["event"] for e in history(client, uuid)]}
    finally:
        svc.stop()


def test_without_managed_boot_the_node_ends_manageable_inspected_and_off(
        inspected: dict[str, Any]) -> None:
    doc = inspected["node"]
    assert (doc["power_state"], doc["last_error"], doc["properties"]["cpus"]) == (
        "power off", None, 4)


def test_without_managed_boot_discoverd_asked_for_boot_device_reboot_and_power_off(
        inspected: dict[str, Any]) -> None:
    wanted = ["Provision state changed from inspecting to inspect wait (wait)",
              "Boot device set to pxe (persistent=False)", "Power action requested: rebooting",
              "Node updated: properties", "Power action requested: power off",
              "Power state is now power off",
              "Provision state changed from inspect wait to manageable (done)"]
    events = inspected["history"]
    at = 0
    for want in wanted:
        at = next((i for i in range(at, len(events)) if events[i] == want), -1) + 1
        assert at, f"{want!r} missing, in order, from {events}"
