"""Starting an introspection: what it checks, what it does to the node, what it refuses."""

from __future__ import annotations

import datetime as dt
import uuid

import httpx
import pytest

from .conftest import BOTH_DBS
from .helpers import (
    error_message,
    ipa_payload,
    make_node,
    node,
    settled_power,
    start,
    status,
    wait_finished,
    wait_state,
    when,
)

STATUS_FIELDS = {"uuid", "finished", "state", "error", "started_at", "finished_at", "links"}


@BOTH_DBS
async def test_start_answers_202_and_status_is_waiting(bm: httpx.AsyncClient,
                                                       di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    resp = await di.post(f"/v1/introspection/{m.uuid}")
    assert resp.status_code == 202
    assert resp.json() == {}
    doc = await wait_state(di, m.uuid, "waiting")
    assert set(doc) == STATUS_FIELDS
    assert doc["uuid"] == m.uuid
    assert doc["finished"] is False
    assert doc["error"] is None
    assert doc["finished_at"] is None
    started = dt.datetime.fromisoformat(doc["started_at"])
    assert started.tzinfo is None  # UTC, no offset, as upstream
    assert abs((dt.datetime.now(dt.UTC).replace(tzinfo=None) - started).total_seconds()) < 60
    assert doc["links"] == [{"rel": "self",
                             "href": f"http://di.test/v1/introspection/{m.uuid}"}]


async def test_start_by_node_name(bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    resp = await di.post(f"/v1/introspection/{m.name}")
    assert resp.status_code == 202, resp.text
    doc = await wait_state(di, m.name, "waiting")
    assert doc["uuid"] == m.uuid
    assert (await status(di, m.uuid))["state"] == "waiting"


async def test_start_sets_pxe_boot_and_powers_the_node_on(bm: httpx.AsyncClient,
                                                          di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    assert (await node(bm, m.uuid))["power_state"] == "power off"
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    resp = await bm.get(f"/v1/nodes/{m.uuid}/management/boot_device")
    assert resp.json() == {"boot_device": "pxe", "persistent": False}


async def test_start_with_manage_boot_false_leaves_power_and_boot_alone(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    resp = await di.post(f"/v1/introspection/{m.uuid}", params={"manage_boot": "false"})
    assert resp.status_code == 202, resp.text
    await wait_state(di, m.uuid, "waiting")
    assert (await node(bm, m.uuid))["power_state"] == "power off"
    history = (await bm.get(f"/v1/nodes/{m.uuid}/history")).json()["history"]
    assert not [e for e in history if e["event"].startswith("Boot device set")]


async def test_start_refused_for_available_node(bm: httpx.AsyncClient,
                                                di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    resp = await bm.put(f"/v1/nodes/{m.uuid}/states/provision", json={"target": "provide"})
    assert resp.status_code == 202, resp.text
    assert (await node(bm, m.uuid))["provision_state"] == "available"
    resp = await di.post(f"/v1/introspection/{m.uuid}")
    assert resp.status_code == 400
    assert '"available"' in error_message(resp)
    assert (await di.get(f"/v1/introspection/{m.uuid}")).status_code == 404


async def test_start_refused_without_ports_or_bmc_address(bm: httpx.AsyncClient,
                                                          di: httpx.AsyncClient) -> None:
    m = await make_node(bm, ports=0, bmc=False)
    resp = await di.post(f"/v1/introspection/{m.uuid}")
    assert resp.status_code == 400
    assert "No lookup attributes" in error_message(resp)
    assert (await di.get(f"/v1/introspection/{m.uuid}")).status_code == 404


async def test_start_refused_with_loopback_bmc_address_only(bm: httpx.AsyncClient,
                                                            di: httpx.AsyncClient) -> None:
    m = await make_node(bm, ports=0, bmc=False, driver_info={"ipmi_address": "127.0.0.1"})
    resp = await di.post(f"/v1/introspection/{m.uuid}")
    assert resp.status_code == 400
    assert "No lookup attributes" in error_message(resp)


async def test_start_refused_when_power_interface_does_not_validate(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    # pxe_ipmitool without ipmi_address: verification fails, the node stays in enroll
    m = await make_node(bm, driver="pxe_ipmitool", bmc=False, managed=False)
    resp = await di.post(f"/v1/introspection/{m.uuid}")
    assert resp.status_code == 400
    message = error_message(resp)
    assert "Failed validation of power interface" in message
    assert "ipmi_address" in message  # the reason, from the bare-metal service
    assert (await di.get(f"/v1/introspection/{m.uuid}")).status_code == 404


async def test_start_unknown_node_is_404(di: httpx.AsyncClient) -> None:
    for ident in (str(uuid.uuid4()), "no-such-node"):
        resp = await di.post(f"/v1/introspection/{ident}")
        assert resp.status_code == 404, resp.text
        assert ident in error_message(resp)


async def test_start_refused_when_a_mac_is_already_under_introspection(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    first = await make_node(bm, nics=1, bmc=False)
    await start(di, first.uuid)
    # the bare-metal service keeps MACs unique: move the port to the second node
    port = (await bm.get("/v1/ports", params={"address": first.macs[0]})).json()["ports"][0]
    assert (await bm.delete(f"/v1/ports/{port['uuid']}")).status_code == 204
    second = await make_node(bm, nics=0, bmc=False)
    resp = await bm.post("/v1/ports", json={"node_uuid": second.uuid,
                                             "address": first.macs[0]})
    assert resp.status_code == 201, resp.text
    resp = await di.post(f"/v1/introspection/{second.uuid}")
    assert resp.status_code == 409
    message = error_message(resp)
    assert first.macs[0] in message and first.uuid in message
    assert (await di.get(f"/v1/introspection/{second.uuid}")).status_code == 404
    assert (await status(di, first.uuid))["state"] == "waiting"


async def test_start_refused_when_a_bmc_address_is_already_under_introspection(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    first = await make_node(bm, ports=0)
    await start(di, first.uuid)
    second = await make_node(bm, ports=0, bmc=False,
                             driver_info={"ipmi_address": first.bmc})
    resp = await di.post(f"/v1/introspection/{second.uuid}")
    assert resp.status_code == 409
    assert first.bmc in error_message(resp)
    assert (await status(di, first.uuid))["state"] == "waiting"


async def test_start_again_while_waiting_restarts_it(bm: httpx.AsyncClient,
                                                     di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    first = await start(di, m.uuid)
    second = await start(di, m.uuid)
    assert when(second, "started_at") > when(first, "started_at")
    assert second["state"] == "waiting"
    resp = await di.post("/v1/continue", json=ipa_payload(m))
    assert resp.status_code == 200, resp.text
    assert (await wait_finished(di, m.uuid))["state"] == "finished"


async def test_start_again_after_finish_starts_a_new_introspection(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    assert (await di.post("/v1/continue", json=ipa_payload(m))).status_code == 200
    await wait_finished(di, m.uuid)
    doc = await start(di, m.uuid)
    assert doc["finished_at"] is None and doc["error"] is None
    # the previous introspection's data stays readable (the latest), and in the history
    assert (await di.get(f"/v1/introspection/{m.uuid}/data")).status_code == 200
    history = (await di.get(f"/v1/introspection/{m.uuid}/data/history")).json()["history"]
    assert [run["id"] for run in history] == [1]


@pytest.mark.parametrize("value", ["maybe", ""])
async def test_start_with_bad_manage_boot_is_400(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                                 value: str) -> None:
    m = await make_node(bm)
    resp = await di.post(f"/v1/introspection/{m.uuid}", params={"manage_boot": value})
    assert resp.status_code == 400
    assert "manage_boot" in error_message(resp)


# --- a start with what the caller knows of the node (the conductor's) -------------------------


def known(*macs: str, state: str = "inspecting", **info: str) -> dict[str, object]:
    return {"node": {"provision_state": state, "maintenance": False, "driver_info": info},
            "ports": [{"address": mac} for mac in macs]}


async def test_a_start_with_what_the_caller_knows_reads_no_ports_back(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    """The node has no port and no BMC in the bare-metal service: without the body it
    would be refused for want of lookup attributes."""
    m = await make_node(bm, ports=0, bmc=False)
    resp = await di.post(f"/v1/introspection/{m.uuid}", params={"manage_boot": "false"},
                         json=known("52:54:00:12:34:56"))
    assert resp.status_code == 202, resp.text
    await wait_state(di, m.uuid, "waiting")


@pytest.mark.parametrize("body", [{}, None, [], {"uuid": "ignored"}])
async def test_a_start_with_another_body_is_the_upstream_start(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, body: object) -> None:
    """Upstream ignores the body (openstacksdk sends `{"uuid": ...}`): the node is read
    through the bare-metal API, where it has no lookup attributes."""
    m = await make_node(bm, ports=0, bmc=False)
    resp = await di.post(f"/v1/introspection/{m.uuid}", json=body)
    assert resp.status_code == 400
    assert "No lookup attributes" in error_message(resp)


async def test_a_start_whose_caller_knows_a_state_not_to_inspect_in_is_refused(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    resp = await di.post(f"/v1/introspection/{m.uuid}", params={"manage_boot": "false"},
                         json=known("52:54:00:12:34:57", state="active"))
    assert resp.status_code == 400
    assert '"active"' in error_message(resp)
    assert (await di.get(f"/v1/introspection/{m.uuid}")).status_code == 404


@pytest.mark.parametrize(("body", "named"), [
    ({"node": {}}, "body"),
    ({**known(), "colour": "red"}, "body"),
    ({"node": {"provision_state": "inspecting"}, "ports": []}, "node"),
    ({**known(), "node": {**known()["node"], "provision_state": 1}}, "node.provision_state"),  # type: ignore[dict-item]
    ({**known(), "node": {**known()["node"], "maintenance": "no"}}, "node.maintenance"),  # type: ignore[dict-item]
    (known(ipmi_password="s3cret"), "node.driver_info"),
    ({**known(), "ports": {}}, "ports"),
    ({**known(), "ports": [{"address": "52:54:00:12:34:58", "pxe_enabled": True}]},
     "ports[0]"),
    (known("52:54:00:12:34:59", "not-a-mac"), "ports[1].address"),
])
async def test_a_bad_start_body_is_400_naming_the_field_and_starts_nothing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, body: object, named: str) -> None:
    m = await make_node(bm)
    resp = await di.post(f"/v1/introspection/{m.uuid}", params={"manage_boot": "false"},
                         json=body)
    assert resp.status_code == 400, resp.text
    assert named in error_message(resp)
    assert "s3cret" not in resp.text
    assert (await di.get(f"/v1/introspection/{m.uuid}")).status_code == 404


async def test_a_start_with_a_body_names_the_node_by_uuid(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    resp = await di.post(f"/v1/introspection/{m.name}", params={"manage_boot": "false"},
                         json=known("52:54:00:12:34:5a"))
    assert resp.status_code == 400
    assert "by UUID" in error_message(resp)
