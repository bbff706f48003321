"""Stored introspection data: processed and unprocessed, `store_data`, and the ramdisk's
`logs`, which are never stored with the data nor written to the service log."""

from __future__ import annotations

import base64
import logging
from pathlib import Path

import httpx
import pytest

from ironsight.discoverd.callback_token import HEADER
from ironsight.discoverd.service import DiscoverdService

from .helpers import (
    introspect,
    ipa_payload,
    issued_token,
    legacy_payload,
    make_node,
    start,
    wait_finished,
)

# A distinctive `logs` value: base64 of a tarball-ish blob with a marker inside.
LOGS_MARKER = "ramdisk-secret-log-line-7f3a9c"
LOGS = base64.b64encode(f"{LOGS_MARKER}\n".encode() * 8).decode()


async def test_processed_and_unprocessed_data_readable_after_finish(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    payload = ipa_payload(m, cpus=12, logs=LOGS, extra_collector={"any": ["thing", 1]})
    await introspect(di, m, payload)
    resp = await di.get(f"/v1/introspection/{m.uuid}/data")
    assert resp.status_code == 200
    processed = resp.json()
    assert processed["cpus"] == 12 and processed["cpu_arch"] == "x86_64"
    assert processed["memory_mb"] == 16384 and processed["local_gb"] == 499
    assert processed["boot_mac"] == m.macs[0]
    assert set(processed["all_interfaces"]) == {"eno1", "eno2"}
    assert processed["extra_collector"] == {"any": ["thing", 1]}
    assert "logs" not in processed
    resp = await di.get(f"/v1/introspection/{m.uuid}/data/unprocessed")
    assert resp.status_code == 200
    expected = dict(payload)
    del expected["logs"]
    assert resp.json() == expected


async def test_data_by_node_name(bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    assert (await di.get(f"/v1/introspection/{m.name}/data")).json()["cpus"] == 8


async def test_data_not_there_while_waiting(bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    for path in ("data", "data/unprocessed"):
        resp = await di.get(f"/v1/introspection/{m.uuid}/{path}")
        assert resp.status_code == 404, path


@pytest.mark.parametrize("version", ["1.0", "1.16"])
async def test_data_is_readable_at_any_version_in_range(bm: httpx.AsyncClient,
                                                        di: httpx.AsyncClient,
                                                        version: str) -> None:
    """As upstream's server: versions are only range-checked (the inspector client pins
    1.0 by default, and reads unprocessed data, which upstream added in 1.17)."""
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    for path in ("data", "data/unprocessed"):
        resp = await di.get(f"/v1/introspection/{m.uuid}/{path}",
                            headers={"X-OpenStack-Ironic-Inspector-API-Version": version})
        assert resp.status_code == 200, resp.text


@pytest.mark.discoverd_conf(processing={"store_data": "false"})
async def test_store_data_false_keeps_nothing(bm: httpx.AsyncClient,
                                              di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    doc = await introspect(di, m, ipa_payload(m))
    assert doc["state"] == "finished"
    for path in ("data", "data/unprocessed"):
        resp = await di.get(f"/v1/introspection/{m.uuid}/{path}")
        assert resp.status_code == 404, path


@pytest.mark.parametrize("fmt", ["ipa", "legacy"])
async def test_logs_never_in_service_log_nor_stored(bm: httpx.AsyncClient,
                                                    di: httpx.AsyncClient,
                                                    caplog: pytest.LogCaptureFixture,
                                                    fmt: str) -> None:
    caplog.set_level(logging.DEBUG)
    m = await make_node(bm)
    payload = (ipa_payload if fmt == "ipa" else legacy_payload)(m, logs=LOGS)
    await introspect(di, m, payload)
    for path in ("data", "data/unprocessed"):
        assert LOGS not in (await di.get(f"/v1/introspection/{m.uuid}/{path}")).text
    assert caplog.records  # the capture works: the service did log
    assert LOGS not in caplog.text and LOGS_MARKER not in caplog.text


async def test_logs_of_a_failed_run_go_to_their_own_file(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService,
        caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    caplog.set_level(logging.DEBUG)
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(m, error="boom", logs=LOGS),
                         headers={HEADER: await issued_token(di_service, m.uuid)})
    assert resp.status_code == 400
    assert LOGS not in resp.text
    await wait_finished(di, m.uuid)
    files = list((tmp_path / "ramdisk-logs").glob(f"{m.uuid}_*.tar.gz"))
    assert len(files) == 1
    assert files[0].read_bytes() == base64.b64decode(LOGS)
    assert LOGS not in caplog.text and LOGS_MARKER not in caplog.text


async def test_logs_that_are_not_base64_are_dropped_quietly(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService,
        caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    caplog.set_level(logging.DEBUG)
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(m, error="boom",
                                                          logs=f"!!{LOGS_MARKER}!!"),
                         headers={HEADER: await issued_token(di_service, m.uuid)})
    assert resp.status_code == 400
    await wait_finished(di, m.uuid)
    assert not list((tmp_path / "ramdisk-logs").glob("*"))
    assert LOGS_MARKER not in caplog.text


async def test_logs_in_a_reapply_body_are_not_stored(bm: httpx.AsyncClient,
                                                     di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    resp = await di.post(f"/v1/introspection/{m.uuid}/data/unprocessed",
                         json=ipa_payload(m, cpus=3, logs=LOGS))
    assert resp.status_code == 202, resp.text
    await wait_finished(di, m.uuid)
    raw = (await di.get(f"/v1/introspection/{m.uuid}/data/unprocessed")).json()
    assert "logs" not in raw
