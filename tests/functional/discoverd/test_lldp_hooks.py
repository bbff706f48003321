"""Ironic's LLDP and port hooks end to end: a report carrying LLDP (in IPA's two places) is
processed by discoverd with `parse-lldp,local-link-connection` (and `physical-network`) on,
and the ports' `local_link_connection` and `physical_network` are read back through the
bare-metal API; the parsed LLDP through discoverd's data API.

The hooks are loaded from this tree's pyproject.toml entry points (see
tests/unit/discoverd/declared_hooks.py: the installed copy may predate them)."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import httpx
import pytest
from ironic_inspector_client import ClientV1

from ironsight.discoverd.plugins import base

from ...unit.discoverd import lldp_frames as f
from ...unit.discoverd.declared_hooks import with_declared
from .helpers import introspect, ipa_payload, make_node, ports

DEFAULT = "ramdisk_error,validate_interfaces,root_disk_selection,scheduler,capabilities,ports"
LLDP_CHAIN = f"{DEFAULT},parse-lldp,local-link-connection,physical-network"
pytestmark = pytest.mark.discoverd_conf(processing={
    "processing_hooks": LLDP_CHAIN, "add_ports": "all",
    "physical_network_cidr_map": "10.0.0.0/16:physnet_prov"})


@pytest.fixture(autouse=True)
def _declared_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """discoverd loads the tree's hooks (before the services start: autouse runs first)."""
    monkeypatch.setattr(base, "entry_points", with_declared(importlib.metadata.entry_points))


async def test_ports_get_their_local_link_connection_from_lldp(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2, ports=1)  # eno1 has a port; eno2's is created
    payload = ipa_payload(m, lldp_raw={"eno1": f.switch_port("Ethernet1/7", "leaf-a")})
    payload["inventory"]["interfaces"][1]["lldp"] = f.switch_port("Ethernet1/8", "leaf-a")
    doc = await introspect(di, m, payload)
    assert doc["error"] is None
    found = await ports(bm, m.uuid)
    assert found[m.macs[0]]["local_link_connection"] == {
        "switch_id": f.SWITCH_MAC, "port_id": "Ethernet1/7", "switch_info": "leaf-a"}
    assert found[m.macs[1]]["local_link_connection"] == {
        "switch_id": f.SWITCH_MAC, "port_id": "Ethernet1/8", "switch_info": "leaf-a"}


async def test_keys_the_port_has_are_kept(bm: httpx.AsyncClient,
                                          di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=1)
    (port,) = (await ports(bm, m.uuid)).values()
    resp = await bm.patch(f"/v1/ports/{port['uuid']}", json=[
        {"op": "add", "path": "/local_link_connection/port_id", "value": "set-by-operator"}])
    assert resp.status_code == 200, resp.text
    await introspect(di, m, ipa_payload(m, lldp_raw={"eno1": f.switch_port("Et9", "leaf-b")}))
    assert (await ports(bm, m.uuid))[m.macs[0]]["local_link_connection"] == {
        "port_id": "set-by-operator", "switch_id": f.SWITCH_MAC, "switch_info": "leaf-b"}


async def test_parsed_lldp_is_in_the_processed_data(bm: httpx.AsyncClient,
                                                    di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=1)
    await introspect(di, m, ipa_payload(m, lldp_raw={"eno1": f.switch_port("Et3", "leaf-c")}))
    resp = await di.get(f"/v1/introspection/{m.uuid}/data")
    assert resp.status_code == 200, resp.text
    assert resp.json()["parsed_lldp"] == {"eno1": {
        "switch_chassis_id": f.SWITCH_MAC, "switch_port_id": "Et3",
        "switch_system_name": "leaf-c"}}


async def test_malformed_lldp_is_a_warning_not_a_failed_introspection(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=1)
    doc = await introspect(di, m, ipa_payload(m, lldp_raw={"eno1": [[1, "0"], [5, "616"]]}))
    assert doc["error"] is None
    data = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    assert len(data["changes"]["warnings"]) == 2
    assert (await ports(bm, m.uuid))[m.macs[0]]["local_link_connection"] == {}


async def test_ports_get_the_physical_network_of_their_address(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2, ports=1)
    await introspect(di, m, ipa_payload(m, ips={0: "10.0.3.4", 1: "10.0.9.9"}))
    found = await ports(bm, m.uuid)
    assert {mac: found[mac]["physical_network"] for mac in m.macs} == {
        m.macs[0]: "physnet_prov", m.macs[1]: "physnet_prov"}


class DataOf(ClientV1):
    """python-ironic-inspector-client's own `get_interface_data` (what `openstack baremetal
    introspection interface show` prints), given the processed data this test fetched from
    discoverd: the in-process service has no socket for the client's HTTP session to reach
    (test_inspector_client.py runs the client over HTTP against `ironsight serve`)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def get_data(self, node_id: str, raw: bool = False, processed: bool = True) -> Any:
        return self.data


async def test_inspector_clients_interface_show_reads_the_lldp(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=1)
    await introspect(di, m, ipa_payload(m, lldp_raw={"eno1": f.switch_port("Et5", "leaf-d")}))
    data = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    shown = DataOf(data).get_interface_data(m.uuid, "eno1", [
        "interface", "mac", "switch_chassis_id", "switch_port_id", "switch_system_name"])
    assert dict(shown) == {"interface": "eno1", "mac": m.macs[0],
                           "switch_chassis_id": f.SWITCH_MAC, "switch_port_id": "Et5",
                           "switch_system_name": "leaf-d"}
