"""The timeline's HTTP API with the real services: the ramdisk's hello (`POST /v1/hello`,
token-checked), the conductor's steps (`POST /v1/phases`, admin) and
the attempts (`GET /v1/introspection/{node}/attempts`)."""

from __future__ import annotations

import json

import httpx
import pytest

from ironsight.discoverd.callback_token import HEADER
from ironsight.discoverd.service import DiscoverdService

from .conftest import BOTH_DBS
from .helpers import error_message, ipa_payload, issued_token, make_node, start, wait_finished

UNKNOWN = "7f3c9f7e-0000-4000-8000-000000000000"


async def attempts(di: httpx.AsyncClient, uuid: str) -> list[dict[str, object]]:
    resp = await di.get(f"/v1/introspection/{uuid}/attempts")
    assert resp.status_code == 200, resp.text
    return list(resp.json()["attempts"])


def phases(attempt: dict[str, object]) -> list[str]:
    return [str(p["phase"]) for p in attempt["phases"]]  # type: ignore[union-attr]


async def test_a_hello_with_the_token_is_202_and_on_the_timeline(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    token = await issued_token(di_service, m.uuid)
    resp = await di.post("/v1/hello", json={"macs": [m.macs[0]]}, headers={HEADER: token})
    assert (resp.status_code, resp.json()) == (202, {"uuid": m.uuid})
    assert phases((await attempts(di, m.uuid))[-1])[-1] == "hello"


async def test_a_hello_with_a_wrong_token_is_403_and_records_nothing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await issued_token(di_service, m.uuid)
    before = await attempts(di, m.uuid)
    resp = await di.post("/v1/hello", json={"macs": [m.macs[0]]}, headers={HEADER: "nope"})
    assert resp.status_code == 403
    assert await attempts(di, m.uuid) == before


async def test_a_hello_without_a_token_is_403_naming_the_header(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await di.post("/v1/hello", json={"macs": [m.macs[0]]})
    assert resp.status_code == 403
    assert HEADER in error_message(resp)


@pytest.mark.parametrize(("body", "status"), [
    (b"[]", 400), (b"{not json", 400), (b'{"macs": 5}', 400),
    (b'{"macs": ["' + b"a" * 5000 + b'"]}', 413)])
async def test_a_bad_hello_is_refused_with_a_clear_status(
        di: httpx.AsyncClient, body: bytes, status: int) -> None:
    resp = await di.post("/v1/hello", content=body,
                         headers={"Content-Type": "application/json"})
    assert resp.status_code == status, resp.text


async def test_the_conductors_steps_are_recorded_at_their_times_with_details(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid, wait=False)
    resp = await di.post("/v1/phases", json={"nodes": [
        {"uuid": m.uuid, "phases": [
            {"phase": "media_inserted", "at": "2026-12-06T10:02:13Z",
             "details": {"network": "dhcp"}},
            {"phase": "power_on_requested", "at": "2026-12-06T10:02:14.500000"}]},
        {"uuid": UNKNOWN, "phases": [{"phase": "powered_on"}]}]})
    assert (resp.status_code, resp.json()) == (202, {"recorded": [m.uuid]})
    found = {p["phase"]: p
             for p in (await attempts(di, m.uuid))[-1]["phases"]}  # type: ignore[union-attr]
    assert (found["media_inserted"]["source"], found["media_inserted"]["network"],
            found["media_inserted"]["at"]) == ("conductor", "dhcp", "2026-12-06T10:02:13")
    assert found["power_on_requested"]["at"] == "2026-12-06T10:02:14.500000"


def one(**step: object) -> dict[str, object]:
    return {"nodes": [{"uuid": "{uuid}", "phases": [step]}]}


@pytest.mark.parametrize(("body", "field"), [
    (one(phase="hello"), "nodes[0].phases[0].phase"),
    (one(phase="started"), "nodes[0].phases[0].phase"),
    ({"nodes": [{"uuid": "{uuid}", "phases": []}]}, "nodes[0].phases"),
    ({}, "nodes"), ({"nodes": []}, "nodes"),
    (one(phase="powered_on", details=[1]), "nodes[0].phases[0].details"),
    (one(phase="powered_on", extra=1), "nodes[0].phases[0]"),
    (one(phase="powered_on", at="yesterday"), "nodes[0].phases[0].at"),
    ({"nodes": [{"uuid": "{uuid}", "phases": [{"phase": "powered_on"}] * 9}]},
     "nodes[0].phases"),
    ({"nodes": [{"uuid": "node-1", "phases": [{"phase": "powered_on"}]}]}, "nodes[0].uuid"),
    ({"nodes": [{"uuid": "{uuid}", "phases": [{"phase": "powered_on"}]},
                {"uuid": "{uuid}", "phases": [{"phase": "finished"}]}]},
     "nodes[1].phases[0].phase")])
async def test_steps_the_conductor_may_not_tell_are_400_naming_the_field_and_none_is_kept(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, body: dict[str, object],
        field: str) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    before = await attempts(di, m.uuid)
    text = json.dumps(body).replace("{uuid}", m.uuid)
    resp = await di.post("/v1/phases", content=text,
                         headers={"Content-Type": "application/json"})
    assert resp.status_code == 400, resp.text
    assert field in error_message(resp)
    assert await attempts(di, m.uuid) == before


async def test_the_attempts_of_an_unknown_node_are_404(di: httpx.AsyncClient) -> None:
    assert (await di.get(f"/v1/introspection/{UNKNOWN}/attempts")).status_code == 404


async def test_attempts_are_listed_oldest_first_and_one_can_be_asked_for(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    for _ in range(2):
        await start(di, m.uuid)
        assert (await di.post(f"/v1/introspection/{m.uuid}/abort")).status_code == 202
        await wait_finished(di, m.uuid)
    found = await attempts(di, m.uuid)
    assert [(a["attempt"], a["result"], a["failure_code"]) for a in found] == [
        (1, "failed", "ABORTED"), (2, "failed", "ABORTED")]
    resp = await di.get(f"/v1/introspection/{m.uuid}/attempts", params={"attempt": "2"})
    assert [a["attempt"] for a in resp.json()["attempts"]] == [2]
    resp = await di.get(f"/v1/introspection/{m.uuid}/attempts", params={"attempt": "9"})
    assert resp.status_code == 404
    resp = await di.get(f"/v1/introspection/{m.uuid}/attempts", params={"attempt": "0"})
    assert resp.status_code == 400
    assert "attempt" in error_message(resp)


async def test_a_report_ends_the_attempt_as_a_success(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    token = await issued_token(di_service, m.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(m), headers={HEADER: token})
    assert resp.status_code == 200, resp.text
    await wait_finished(di, m.uuid)
    (attempt,) = await attempts(di, m.uuid)
    assert (attempt["result"], attempt["failure_code"], attempt["diagnosis"]) == (
        "success", None, None)
    assert set(attempt) == {"attempt", "started_at", "finished_at", "result", "failure_code",
                            "diagnosis", "phases"}


async def test_a_beat_with_the_token_is_202_and_its_log_readable(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    token = await issued_token(di_service, m.uuid)
    resp = await di.post("/v1/beat", json={"macs": [m.macs[0]], "stage": "collecting",
                                           "log": "ironsight[2.1] network up\n"},
                         headers={HEADER: token})
    assert resp.status_code == 202, resp.text
    resp = await di.get(f"/v1/introspection/{m.uuid}/logs")
    assert resp.status_code == 200
    assert (resp.json()["stage"], resp.json()["log"]) == (
        "collecting", "ironsight[2.1] network up\n")


async def test_a_beat_without_a_token_is_403_and_a_huge_one_413(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    body = {"macs": [m.macs[0]], "stage": "s", "log": "x"}
    assert (await di.post("/v1/beat", json=body)).status_code == 403
    body["log"] = "x" * 30000
    assert (await di.post("/v1/beat", json=body)).status_code == 413
    assert (await di.get(f"/v1/introspection/{m.uuid}/logs")).json()["log"] == ""


@BOTH_DBS
async def test_a_reports_step_is_on_the_timeline_with_its_macs_and_model(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(m))
    assert resp.status_code == 200, resp.text
    await wait_finished(di, m.uuid)
    steps = {p["phase"]: p for p in (await attempts(di, m.uuid))[-1]["phases"]}
    report = steps["report_received"]
    assert (report["source"], report["model"]) == ("ramdisk", "ACME Test")
    assert set(m.macs) <= set(report["macs"])  # type: ignore[arg-type]
    assert steps["started"]["at"] <= report["at"] <= steps["finished"]["at"]
