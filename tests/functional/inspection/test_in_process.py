"""`ironsight serve` with both services in one process: discoverd calls the bare-metal API
in-process (no HTTP between the two), says so at start, and an inspection runs end to end as
it does over HTTP; `serve --only discoverd` stays on HTTP."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from .helpers import (
    Service,
    accepted_reply,
    enroll,
    expected_local_gb,
    history,
    inspect,
    machine,
    ports,
    run_agent,
    wait_node,
    wait_ramdisk_booted,
    wait_until,
)

IN_PROCESS = "discoverd calls the bare-metal API in-process"


def test_one_process_says_discoverd_calls_in_process(service: Service) -> None:
    log = service.log.read_text()
    assert IN_PROCESS in log
    assert f"{service.url} is this process's bare-metal listener" in log


def test_an_inspection_end_to_end(service: Service, client: httpx.Client,
                                  tmp_path: Path) -> None:
    spec, tree = machine(tmp_path, nics=2, cpus=8, memory_mb=16384, disks_gb=(2, 50, 200))
    uuid = enroll(client, spec)
    inspect(client, uuid)
    wait_ramdisk_booted(service, client, uuid)
    assert accepted_reply(run_agent(tree, f"{service.di_url}/v1/continue")) == (
        200, {"uuid": uuid})
    doc = wait_node(client, uuid, provision="manageable", power="power off")
    assert doc["last_error"] is None
    assert doc["properties"]["cpus"] == 8
    assert doc["properties"]["memory_mb"] == 16384
    assert doc["properties"]["local_gb"] == expected_local_gb(spec)
    assert ports(client, uuid) == {m: m == spec.pxe_mac for m in spec.macs}
    assert history(client, uuid)


def test_discoverd_alone_stays_on_http(service: Service,
                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    alone = Service(tmp_path_factory.mktemp("alone"), only="discoverd")
    alone.configure(introspection={"ironic_url": service.url})
    alone.start()
    try:
        text = wait_until(lambda: alone.log.read_text() if "discoverd calls" in
                          alone.log.read_text() else None, "the start-up log")
    finally:
        alone.stop()
    assert f"discoverd calls the bare-metal API over HTTP at {service.url}" in text
    assert IN_PROCESS not in text
