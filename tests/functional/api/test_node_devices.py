"""A fake-hardware node's console, indicators and vendor passthru, and its boot device, with
Ironic 39's codes, documents and texts; bad requests are refused naming what is wrong and
leave no lock behind."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from tests.functional.api.helpers import create_node, fault

pytestmark = pytest.mark.functional

MISSING = "5c9dcd04-2073-49bc-9618-99ae634d8971"


async def fake_node(api: httpx.AsyncClient, **fields: Any) -> str:
    return str((await create_node(api, driver="fake-hardware", **fields))["uuid"])


async def node_doc(api: httpx.AsyncClient, node: str) -> dict[str, Any]:
    return dict((await api.get(f"/v1/nodes/{node}")).json())


async def wait_console(api: httpx.AsyncClient, node: str, enabled: bool) -> dict[str, Any]:
    """The node once its console is `enabled` and its lock released (bounded)."""
    for _ in range(250):
        doc = await node_doc(api, node)
        if doc["console_enabled"] is enabled and doc["reservation"] is None:
            return doc
        await asyncio.sleep(0.02)
    raise AssertionError(f"console of {node} never became {enabled}: {doc}")


async def unlocked(api: httpx.AsyncClient, node: str) -> bool:
    """Whether the node's lock is (or soon is) released."""
    for _ in range(250):
        if (await node_doc(api, node))["reservation"] is None:
            return True
        await asyncio.sleep(0.02)
    return False


# --- console ----------------------------------------------------------------------------------


async def test_a_new_node_has_its_console_disabled(api: httpx.AsyncClient) -> None:
    node = await fake_node(api, console_interface="fake")
    assert (await node_doc(api, node))["console_enabled"] is False
    resp = await api.get(f"/v1/nodes/{node}/states/console")
    assert resp.status_code == 200
    assert resp.json() == {"console_enabled": False, "console_info": None}


async def test_enabling_the_console_is_accepted_and_done_by_the_conductor(
        api: httpx.AsyncClient) -> None:
    node = await fake_node(api, console_interface="fake")
    resp = await api.put(f"/v1/nodes/{node}/states/console", json={"enabled": True})
    assert resp.status_code == 202
    assert resp.content == b""
    assert resp.headers["Location"].endswith(f"/v1/nodes/{node}/states/console")
    await wait_console(api, node, True)
    assert (await api.get(f"/v1/nodes/{node}/states/console")).json() == {
        "console_enabled": True, "console_info": {}}
    assert (await api.get(f"/v1/nodes/{node}/states")).json()["console_enabled"] is True


async def test_disabling_the_console_clears_its_info(api: httpx.AsyncClient) -> None:
    node = await fake_node(api, console_interface="fake")
    await api.put(f"/v1/nodes/{node}/states/console", json={"enabled": True})
    await wait_console(api, node, True)
    resp = await api.put(f"/v1/nodes/{node}/states/console", json={"enabled": False})
    assert resp.status_code == 202
    await wait_console(api, node, False)
    assert (await api.get(f"/v1/nodes/{node}/states/console")).json() == {
        "console_enabled": False, "console_info": None}


async def test_enabling_an_enabled_console_changes_nothing(api: httpx.AsyncClient) -> None:
    node = await fake_node(api, console_interface="fake")
    await api.put(f"/v1/nodes/{node}/states/console", json={"enabled": True})
    await wait_console(api, node, True)
    resp = await api.put(f"/v1/nodes/{node}/states/console", json={"enabled": "true"})
    assert resp.status_code == 202
    assert (await node_doc(api, node))["console_enabled"] is True


async def test_the_console_change_is_in_the_node_history(api: httpx.AsyncClient) -> None:
    node = await fake_node(api, console_interface="fake")
    await api.put(f"/v1/nodes/{node}/states/console", json={"enabled": True})
    await wait_console(api, node, True)
    events = (await api.get(f"/v1/nodes/{node}/history")).json()["history"]
    assert any(e["event"] == "Console enabled" for e in events)


async def test_a_node_without_a_console_refuses_to_enable_one(api: httpx.AsyncClient) -> None:
    node = await fake_node(api, console_interface="no-console")
    resp = await api.put(f"/v1/nodes/{node}/states/console", json={"enabled": True})
    assert resp.status_code == 400
    assert fault(resp) == ("Driver fake-hardware does not support console (disabled or not "
                           "implemented).")
    assert (await node_doc(api, node))["reservation"] is None


async def test_a_node_without_a_console_shows_it_disabled(api: httpx.AsyncClient) -> None:
    node = await fake_node(api)
    resp = await api.get(f"/v1/nodes/{node}/states/console")
    assert resp.status_code == 200
    assert resp.json() == {"console_enabled": False, "console_info": None}


@pytest.mark.parametrize(("body", "text"), [
    ({}, 'Missing argument: "enabled"'),
    ({"enabled": "maybe"}, "Invalid enabled"),
    ({"enabled": True, "mode": "vnc"}, "mode"),
    (["enabled"], '"enabled"'),
])
async def test_a_bad_console_request_is_400_naming_the_field(
        api: httpx.AsyncClient, body: Any, text: str) -> None:
    node = await fake_node(api, console_interface="fake")
    resp = await api.put(f"/v1/nodes/{node}/states/console", json=body)
    assert resp.status_code == 400
    assert text in fault(resp)
    doc = await node_doc(api, node)
    assert doc["console_enabled"] is False
    assert doc["reservation"] is None


async def test_the_console_of_a_missing_node_is_404(api: httpx.AsyncClient) -> None:
    resp = await api.put(f"/v1/nodes/{MISSING}/states/console", json={"enabled": True})
    assert resp.status_code == 404


async def test_the_driver_cannot_change_while_the_console_is_enabled(
        api: httpx.AsyncClient) -> None:
    node = await fake_node(api, console_interface="fake")
    await api.put(f"/v1/nodes/{node}/states/console", json={"enabled": True})
    await wait_console(api, node, True)
    resp = await api.patch(f"/v1/nodes/{node}", json=[
        {"op": "replace", "path": "/driver", "value": "fake"}])
    assert resp.status_code == 409
    assert "Please stop the console first" in fault(resp)


async def test_validate_reports_the_console_interface(api: httpx.AsyncClient) -> None:
    with_console = await fake_node(api)  # fake-hardware's default: the fake console
    without = await fake_node(api, console_interface="no-console")
    assert (await api.get(f"/v1/nodes/{with_console}/validate")).json()["console"] == {
        "result": True}
    found = (await api.get(f"/v1/nodes/{without}/validate")).json()["console"]
    assert found["result"] is False
    assert "does not support console" in found["reason"]


# --- indicators -------------------------------------------------------------------------------


async def test_indicators_are_the_fake_management_s(api: httpx.AsyncClient) -> None:
    node = await fake_node(api)
    resp = await api.get(f"/v1/nodes/{node}/management/indicators")
    assert resp.status_code == 200
    found = resp.json()["indicators"]
    assert [{k: v for k, v in i.items() if k != "links"} for i in found] == [
        {"name": "led-0@chassis", "component": "chassis", "readonly": True,
         "states": ["off", "on"]},
        {"name": "led@system", "component": "system", "readonly": False,
         "states": ["blinking", "off", "on"]},
    ]
    assert found[1]["links"][0]["href"].endswith(
        f"/v1/nodes/{node}/management/indicators/led@system")
    assert found[1]["links"][1]["rel"] == "bookmark"


@pytest.mark.parametrize("indicator", ["led@system", "led-0@chassis"])
async def test_an_indicator_reads_on(api: httpx.AsyncClient, indicator: str) -> None:
    node = await fake_node(api)
    resp = await api.get(f"/v1/nodes/{node}/management/indicators/{indicator}")
    assert resp.status_code == 200
    assert resp.json() == {"state": "on"}


async def test_setting_a_fake_indicator_is_unsupported_and_it_still_reads_on(
        api: httpx.AsyncClient) -> None:
    node = await fake_node(api)
    url = f"/v1/nodes/{node}/management/indicators/led@system"
    resp = await api.put(url, json={"state": "off"})
    assert resp.status_code == 400
    assert fault(resp) == ("Driver fake-hardware does not support set_indicator_state "
                           "(disabled or not implemented).")
    assert (await api.get(url)).json() == {"state": "on"}
    assert (await node_doc(api, node))["reservation"] is None


@pytest.mark.parametrize(("indicator", "text"), [
    ("led@disk", "Invalid component disk specified."),
    ("led-7@system", "Invalid indicator led-7 specified."),
    ("led", 'Malformed indicator name "led"'),
])
async def test_an_unknown_indicator_is_400_naming_it(api: httpx.AsyncClient, indicator: str,
                                                     text: str) -> None:
    node = await fake_node(api)
    resp = await api.get(f"/v1/nodes/{node}/management/indicators/{indicator}")
    assert resp.status_code == 400
    assert fault(resp) == text


@pytest.mark.parametrize(("body", "text"), [
    ({}, 'Missing argument: "state"'), ({"state": 1}, "Invalid state"),
    ({"state": "on", "colour": "red"}, "colour")])
async def test_a_bad_indicator_request_is_400_naming_the_field(
        api: httpx.AsyncClient, body: dict[str, Any], text: str) -> None:
    node = await fake_node(api)
    resp = await api.put(f"/v1/nodes/{node}/management/indicators/led@system", json=body)
    assert resp.status_code == 400
    assert text in fault(resp)
    assert (await node_doc(api, node))["reservation"] is None


async def test_indicators_of_a_missing_node_are_404(api: httpx.AsyncClient) -> None:
    resp = await api.get(f"/v1/nodes/{MISSING}/management/indicators/led")
    assert resp.status_code == 404


# --- vendor passthru --------------------------------------------------------------------------


async def test_vendor_methods_are_the_fake_vendor_s(api: httpx.AsyncClient) -> None:
    node = await fake_node(api, vendor_interface="fake")
    resp = await api.get(f"/v1/nodes/{node}/vendor_passthru/methods")
    assert resp.status_code == 200

    def method(description: str, *, sync: bool = False, shared: bool = False) -> Any:
        return {"http_methods": ["POST"], "async": not sync, "description": description,
                "attach": False, "require_exclusive_lock": not shared}

    assert resp.json() == {
        "fourth_method_shared_lock": method("Test if the value of bar is woof", shared=True),
        "log_passthrough": method("Test pass-through to wait."),
        "second_method": method("Test if the value of bar is kazoo"),
        "third_method_sync": method("Test if the value of bar is meow", sync=True),
    }


async def test_a_node_without_a_vendor_interface_has_no_methods(
        api: httpx.AsyncClient) -> None:
    node = await fake_node(api, vendor_interface="no-vendor")
    assert (await api.get(f"/v1/nodes/{node}/vendor_passthru/methods")).json() == {}


@pytest.mark.parametrize(("bar", "answer"), [("meow", True), ("woof", False)])
async def test_a_synchronous_vendor_method_answers_200_with_its_result(
        api: httpx.AsyncClient, bar: str, answer: bool) -> None:
    node = await fake_node(api, vendor_interface="fake")
    resp = await api.post(f"/v1/nodes/{node}/vendor_passthru",
                          params={"method": "third_method_sync"}, json={"bar": bar})
    assert resp.status_code == 200
    assert resp.json() is answer
    assert (await node_doc(api, node))["reservation"] is None


@pytest.mark.parametrize(("method", "body"), [
    ("second_method", {"bar": "kazoo"}), ("fourth_method_shared_lock", {"bar": "x"}),
    ("log_passthrough", {"anything": [1, 2]}), ("log_passthrough", None)])
async def test_an_asynchronous_vendor_method_answers_202(api: httpx.AsyncClient, method: str,
                                                         body: Any) -> None:
    node = await fake_node(api, vendor_interface="fake")
    resp = await api.post(f"/v1/nodes/{node}/vendor_passthru", params={"method": method},
                          json=body)
    assert resp.status_code == 202
    assert resp.content == b""
    assert await unlocked(api, node)


@pytest.mark.parametrize(("method", "verb", "body", "text"), [
    ("nope", "POST", {}, "No handler for method nope"),
    ("third_method_sync", "GET", None, "The method third_method_sync does not support HTTP GET"),
    ("second_method", "PUT", {"bar": "x"}, "The method second_method does not support HTTP PUT"),
    ("third_method_sync", "POST", {},
     "Parameter 'bar' not passed to method 'third_method_sync'."),
    ("second_method", "POST", {"bar": ""}, "Parameter 'bar' not passed to method"),
    ("second_method", "POST", {"bar": "x", "baz": 1}, "baz"),
    ("second_method", "POST", ["bar"], "JSON object"),
])
async def test_a_bad_vendor_call_is_400_saying_why(api: httpx.AsyncClient, method: str,
                                                   verb: str, body: Any, text: str) -> None:
    node = await fake_node(api, vendor_interface="fake")
    resp = await api.request(verb, f"/v1/nodes/{node}/vendor_passthru",
                             params={"method": method}, json=body)
    assert resp.status_code == 400
    assert text in fault(resp)
    assert (await node_doc(api, node))["reservation"] is None


async def test_a_vendor_call_without_a_method_is_400(api: httpx.AsyncClient) -> None:
    node = await fake_node(api, vendor_interface="fake")
    resp = await api.post(f"/v1/nodes/{node}/vendor_passthru", json={"bar": "x"})
    assert resp.status_code == 400
    assert fault(resp) == "Missing mandatory parameter: method"


async def test_a_node_without_a_vendor_interface_has_no_handler(
        api: httpx.AsyncClient) -> None:
    node = await fake_node(api, vendor_interface="no-vendor")
    resp = await api.post(f"/v1/nodes/{node}/vendor_passthru",
                          params={"method": "second_method"}, json={"bar": "kazoo"})
    assert resp.status_code == 400
    assert fault(resp) == "No handler for method second_method"


async def test_vendor_methods_of_a_missing_node_are_404(api: httpx.AsyncClient) -> None:
    assert (await api.get(f"/v1/nodes/{MISSING}/vendor_passthru/methods")).status_code == 404


@pytest.mark.parametrize("driver", ["fake-hardware", "fake"])
async def test_fake_hardware_has_no_driver_vendor_methods(api: httpx.AsyncClient,
                                                          driver: str) -> None:
    resp = await api.get(f"/v1/drivers/{driver}/vendor_passthru/methods")
    assert resp.status_code == 200
    assert resp.json() == {}


async def test_a_driver_vendor_call_has_no_handler(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/drivers/fake-hardware/vendor_passthru",
                          params={"method": "lookup"}, json={})
    assert resp.status_code == 400
    assert fault(resp) == "No handler for method lookup"


async def test_vendor_methods_of_an_unknown_driver_are_404(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/drivers/no-such-driver/vendor_passthru/methods")
    assert resp.status_code == 404
    assert "no-such-driver" in fault(resp)


# --- boot device ------------------------------------------------------------------------------


async def test_a_fresh_fake_node_boots_from_pxe(api: httpx.AsyncClient) -> None:
    node = await fake_node(api)
    resp = await api.get(f"/v1/nodes/{node}/management/boot_device")
    assert resp.status_code == 200
    assert resp.json() == {"boot_device": "pxe", "persistent": False}
