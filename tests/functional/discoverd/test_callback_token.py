"""The callback token against the real services: discoverd with its real database, the
bare-metal service over real HTTP. The token is issued as the node's boot script issues it
(`NodeCache.issue_token`; the script's own path, with dnsmasq's lease file, is covered by
tests/unit/discoverd/pxe/test_tokens.py). Tokenless reports are refused here (the embedded
default), unless a test says otherwise."""

from __future__ import annotations

import logging

import httpx
import pytest

from ironsight.discoverd.callback_token import HEADER
from ironsight.discoverd.service import DiscoverdService

from .helpers import (
    error_message,
    ipa_payload,
    issued_token,
    make_node,
    node,
    settled_power,
    start,
    wait_finished,
)

STRICT = pytest.mark.discoverd_conf(introspection={"allow_tokenless_reports": "false"})


async def status(di: httpx.AsyncClient, uuid: str) -> dict[str, object]:
    resp = await di.get(f"/v1/introspection/{uuid}")
    assert resp.status_code == 200
    return dict(resp.json())


@STRICT
async def test_report_with_the_nodes_token_is_processed(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    token = await issued_token(di_service, m.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(m, cpus=12), headers={HEADER: token})
    assert resp.status_code == 200, resp.text
    assert (await wait_finished(di, m.uuid))["error"] is None
    assert (await node(bm, m.uuid))["properties"]["cpus"] == 12


@STRICT
async def test_wrong_token_gets_403_and_changes_nothing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm, ports=1)
    await start(di, m.uuid)
    await issued_token(di_service, m.uuid)
    ports_before = (await bm.get(f"/v1/ports?node_uuid={m.uuid}")).json()["ports"]
    resp = await di.post("/v1/continue", json=ipa_payload(m, cpus=99, error="boom"),
                         headers={HEADER: "forged-token"})
    assert resp.status_code == 403
    assert "callback token does not match" in error_message(resp)
    assert (await status(di, m.uuid))["state"] == "waiting"
    assert (await di.get(f"/v1/introspection/{m.uuid}/data/unprocessed")).status_code == 404
    assert "cpus" not in (await node(bm, m.uuid))["properties"]
    assert (await bm.get(f"/v1/ports?node_uuid={m.uuid}")).json()["ports"] == ports_before


@STRICT
async def test_report_without_a_token_gets_403_by_default(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(m))
    assert resp.status_code == 403
    assert "allow_tokenless_reports" in error_message(resp)
    assert (await status(di, m.uuid))["state"] == "waiting"


async def test_report_without_a_token_is_accepted_when_allowed(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(m, cpus=6))
    assert resp.status_code == 200, resp.text
    assert (await wait_finished(di, m.uuid))["error"] is None


async def test_error_report_without_a_token_never_ends_the_introspection(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, caplog: pytest.LogCaptureFixture) -> None:
    """Tokenless reports allowed: the error report is answered 400 and logged as
    unauthenticated; the introspection keeps waiting and the node stays powered on."""
    m = await make_node(bm)
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    resp = await di.post("/v1/continue", json={**ipa_payload(m), "error": "fake failure"})
    assert resp.status_code == 400
    assert "does not end the introspection" in error_message(resp)
    doc = await status(di, m.uuid)
    assert (doc["state"], doc["error"]) == ("waiting", None)
    assert "unauthenticated error report" in caplog.text
    # a real report still completes it
    assert (await di.post("/v1/continue", json=ipa_payload(m))).status_code == 200
    assert (await wait_finished(di, m.uuid))["error"] is None


@STRICT
async def test_error_report_with_the_token_ends_the_introspection(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    token = await issued_token(di_service, m.uuid)
    resp = await di.post("/v1/continue", json={**ipa_payload(m), "error": "disk on fire"},
                         headers={HEADER: token})
    assert resp.status_code == 400
    assert (await wait_finished(di, m.uuid))["error"] == "Ramdisk reported error: disk on fire"


@STRICT
async def test_token_is_dead_once_the_introspection_ended(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    token = await issued_token(di_service, m.uuid)
    assert (await di.post("/v1/continue", json=ipa_payload(m),
                          headers={HEADER: token})).status_code == 200
    await wait_finished(di, m.uuid)
    await start(di, m.uuid)  # the next introspection of the same node
    replay = await di.post("/v1/continue", json=ipa_payload(m, cpus=1),
                           headers={HEADER: token})
    assert replay.status_code == 403
    assert (await status(di, m.uuid))["state"] == "waiting"


@STRICT
async def test_token_never_appears_in_api_answers_or_the_log(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    m = await make_node(bm)
    await start(di, m.uuid)
    tokens = [await issued_token(di_service, m.uuid), await issued_token(di_service, m.uuid)]
    await di.post("/v1/continue", json=ipa_payload(m), headers={HEADER: tokens[0]})  # stale
    assert (await di.post("/v1/continue", json=ipa_payload(m),
                          headers={HEADER: tokens[1]})).status_code == 200
    await wait_finished(di, m.uuid)
    answers = [await di.get(path) for path in (
        f"/v1/introspection/{m.uuid}", "/v1/introspection",
        f"/v1/introspection/{m.uuid}/data", f"/v1/introspection/{m.uuid}/data/unprocessed")]
    for token in tokens:
        for answer in answers:
            assert answer.status_code == 200
            assert token not in answer.text
        assert token not in caplog.text
        assert token not in str((await bm.get(f"/v1/nodes/{m.uuid}")).text)


@pytest.mark.discoverd_conf(introspection={
    "ramdisk_rate_limit": "6", "ramdisk_rate_burst": "2", "ramdisk_rate_limit_exempt": ""})
async def test_ramdisk_callback_is_rate_limited_per_address(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    answers = [await di.post("/v1/continue", json={"inventory": "x"}) for _ in range(3)]
    assert [a.status_code for a in answers[:2]] == [400, 400]
    assert answers[2].status_code == 429
    assert 1 <= int(answers[2].headers["Retry-After"]) <= 10
    assert "Too many requests" in error_message(answers[2])


async def test_loopback_is_exempt_from_the_rate_limit_by_default(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    codes = {(await di.post("/v1/continue", json={"inventory": "x"})).status_code
             for _ in range(30)}
    assert 429 not in codes


# --- boot_params: the token of a ramdisk the bare-metal service boots from virtual media ------

VMEDIA = pytest.mark.discoverd_conf(introspection={"allow_tokenless_reports": "false",
                                                   "ramdisk_url": "http://10.9.0.1:5051/"},
                                    pxe={"kernel_params": "console=ttyS0,115200"})


@VMEDIA
async def test_boot_params_carry_a_token_that_is_accepted(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await di.post(f"/v1/introspection/{m.uuid}/boot_params")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["callback_url"] == "http://10.9.0.1:5051/v1/continue"
    words = body["kernel_params"].split()
    assert words[0] == "ironsight.callback_url=http://10.9.0.1:5051/v1/continue"
    assert words[-1] == "console=ttyS0,115200"
    assert not any(w.startswith("BOOTIF=") for w in words)
    token = next(w.split("=", 1)[1] for w in words if w.startswith("ironsight.callback_token="))
    resp = await di.post("/v1/continue", json=ipa_payload(m, cpus=3), headers={HEADER: token})
    assert resp.status_code == 200, resp.text
    assert (await wait_finished(di, m.uuid))["error"] is None


@VMEDIA
async def test_boot_params_again_replace_the_token(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    first = (await di.post(f"/v1/introspection/{m.uuid}/boot_params")).json()
    await di.post(f"/v1/introspection/{m.uuid}/boot_params")
    old = next(w.split("=", 1)[1] for w in first["kernel_params"].split()
               if w.startswith("ironsight.callback_token="))
    resp = await di.post("/v1/continue", json=ipa_payload(m), headers={HEADER: old})
    assert resp.status_code == 403


@VMEDIA
async def test_boot_params_of_a_finished_introspection_are_409(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    assert (await di.post(f"/v1/introspection/{m.uuid}/abort")).status_code == 202
    await wait_finished(di, m.uuid)
    resp = await di.post(f"/v1/introspection/{m.uuid}/boot_params")
    assert resp.status_code == 409
    assert "not waiting for its ramdisk" in error_message(resp)


@VMEDIA
async def test_boot_params_of_an_unknown_node_are_404(di: httpx.AsyncClient) -> None:
    resp = await di.post("/v1/introspection/7f3c9f7e-0000-4000-8000-000000000000/boot_params")
    assert resp.status_code == 404


@pytest.mark.discoverd_conf(introspection={"ramdisk_url": ""}, pxe={"http_url": ""})
async def test_boot_params_without_a_ramdisk_url_say_which_option(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await di.post(f"/v1/introspection/{m.uuid}/boot_params")
    assert resp.status_code == 409
    assert "[introspection] ramdisk_url" in error_message(resp)
