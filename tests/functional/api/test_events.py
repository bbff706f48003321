"""`POST /v1/events` (1.54): the networking service's port events, validated as Ironic does
and accepted (the noop network interface has nothing to do with them)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .helpers import fault

pytestmark = pytest.mark.functional

EVENT = {"event": "network.bind_port", "port_id": "11111111-2222-3333-4444-555555555555",
         "mac_address": "52:54:00:00:00:01", "status": "ACTIVE",
         "device_id": "66666666-7777-8888-9999-000000000000",
         "binding:host_id": "66666666-7777-8888-9999-000000000000",
         "binding:vnic_type": "baremetal"}


async def test_a_valid_event_is_accepted(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/events", json={"events": [EVENT]})
    assert resp.status_code == 204, resp.text


@pytest.mark.parametrize(("change", "field"), [
    ({"event": "network.nosuch"}, "events.0.event"),
    ({"port_id": "not-a-uuid"}, "events.0.port_id"),
    ({"mac_address": "zz"}, "events.0.mac_address"),
    ({"extra": 1}, "events.0.extra"),
])
async def test_a_bad_event_is_refused_naming_the_field(
        api: httpx.AsyncClient, change: dict[str, Any], field: str) -> None:
    resp = await api.post("/v1/events", json={"events": [{**EVENT, **change}]})
    assert resp.status_code == 400
    assert f"'{field}'" in fault(resp)


async def test_an_empty_batch_is_refused(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/events", json={"events": []})
    assert resp.status_code == 400
    assert "'events'" in fault(resp)


async def test_events_do_not_exist_before_1_54(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/events", json={"events": [EVENT]},
                          headers={"X-OpenStack-Ironic-API-Version": "1.53"})
    assert resp.status_code == 404
