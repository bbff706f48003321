"""Each action, through the engine: what it changes and the patches that result."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pytest

from ironsight.discoverd.rules.model import ApiResponse

from ..helpers import MAC2
from .builders import PORT1, PORT2, facts, rule, run


def act(op: str, **args: object) -> dict[str, object]:
    return {"op": op, "args": args}


async def test_fail_stops_with_the_message_naming_the_rule() -> None:
    outcome = await run(rule(act("fail", msg="no disk on {node.name}"), description="disks"))
    assert outcome.failure is not None
    assert outcome.failure.startswith("rule 'disks' (")
    assert outcome.failure.endswith("): no disk on compute-0")


async def test_log_records_the_message_and_level() -> None:
    r = rule(act("log", msg="{inventory[cpu][count]} CPUs", level="warning"))
    outcome = await run(r)
    assert [(e.rule, e.level, e.message) for e in outcome.logs] == [
        (r.uuid, "warning", "4 CPUs")]


async def test_set_attribute_patches_the_node() -> None:
    outcome = await run(rule(act("set-attribute", path="/properties/memory_mb",
                                 value="{inventory[memory][physical_mb]}")))
    assert outcome.node_patch == [{"op": "add", "path": "/properties/memory_mb",
                                   "value": 8192}]
    assert outcome.node["properties"]["memory_mb"] == 8192


async def test_set_attribute_of_a_top_level_field() -> None:
    outcome = await run(rule(act("set-attribute", path="resource_class", value="baremetal")))
    assert outcome.node_patch == [{"op": "add", "path": "/resource_class",
                                   "value": "baremetal"}]


async def test_set_attribute_creates_nested_objects() -> None:
    outcome = await run(rule(act("set-attribute", path="extra.hw.vendor",
                                 value="{inventory[system_vendor][manufacturer]}")))
    assert outcome.node_patch == [{"op": "add", "path": "/extra/hw",
                                   "value": {"vendor": "ACME"}}]


async def test_setting_the_same_value_patches_nothing() -> None:
    outcome = await run(rule(act("set-attribute", path="driver", value="ipmi")))
    assert outcome.node_patch == []


async def test_extend_attribute() -> None:
    outcome = await run(rule(act("extend-attribute", path="/extra/tags", value="gpu"),
                             act("extend-attribute", path="/extra/tags", value="gpu",
                                 unique=True)))
    assert outcome.node_patch == [{"op": "add", "path": "/extra/tags", "value": ["gpu"]}]


async def test_extend_attribute_of_a_non_list_fails_the_run() -> None:
    outcome = await run(rule(act("extend-attribute", path="driver", value="x")))
    assert outcome.failure is not None and "not a list" in outcome.failure


async def test_del_attribute() -> None:
    outcome = await run(rule(act("del-attribute", path="driver_info.ipmi_username")))
    assert outcome.node_patch == [{"op": "remove", "path": "/driver_info/ipmi_username"}]


async def test_del_attribute_of_an_absent_key_only_warns() -> None:
    outcome = await run(rule(act("del-attribute", path="extra.absent")))
    assert outcome.node_patch == [] and outcome.failure is None
    assert "nothing to delete at /node/extra/absent" in outcome.warnings[0]


async def test_secrets_the_api_masks_are_never_written_back() -> None:
    outcome = await run(rule(act("set-attribute", path="driver_info.ipmi_port", value="623")))
    assert outcome.node_patch == [{"op": "add", "path": "/driver_info/ipmi_port",
                                   "value": "623"}]


async def test_set_capability_keeps_the_others() -> None:
    outcome = await run(rule(act("set-capability", name="cpu_vt", value="true")))
    assert outcome.node_patch == [{"op": "add", "path": "/properties/capabilities",
                                   "value": "boot_mode:bios,cpu_vt:true"}]


async def test_set_capability_replaces_a_value() -> None:
    outcome = await run(rule(act("set-capability", name="boot_mode",
                                 value="{inventory[boot][current_boot_mode]}x")))
    assert outcome.node["properties"]["capabilities"] == "boot_mode:biosx"


async def test_unset_capability() -> None:
    outcome = await run(rule(act("unset-capability", name="boot_mode")))
    assert outcome.node_patch == [{"op": "add", "path": "/properties/capabilities",
                                   "value": ""}]


async def test_add_trait() -> None:
    outcome = await run(rule(act("add-trait", name="CUSTOM_GPU")))
    assert (outcome.traits_add, outcome.traits_remove) == (["CUSTOM_GPU"], [])
    assert outcome.node_patch == []


async def test_remove_trait() -> None:
    outcome = await run(rule(act("remove-trait", name="CUSTOM_OLD")),
                        the_facts=facts(traits=["CUSTOM_OLD", "CUSTOM_KEEP"]))
    assert (outcome.traits_add, outcome.traits_remove) == ([], ["CUSTOM_OLD"])


async def test_a_trait_added_then_removed_is_no_change() -> None:
    outcome = await run(rule(act("add-trait", name="CUSTOM_X"),
                             act("remove-trait", name="CUSTOM_X")))
    assert (outcome.traits_add, outcome.traits_remove) == ([], [])


async def test_set_plugin_data() -> None:
    outcome = await run(rule(act("set-plugin-data", path="hw.cores",
                                 value="{inventory[cpu][count]}")))
    assert outcome.plugin_data["hw"] == {"cores": 4}


async def test_extend_plugin_data() -> None:
    outcome = await run(rule(act("extend-plugin-data", path="seen", value=1),
                             act("extend-plugin-data", path="seen", value=1, unique=True)))
    assert outcome.plugin_data["seen"] == [1]


async def test_unset_plugin_data() -> None:
    outcome = await run(rule(act("unset-plugin-data", path="/root_disk/size")))
    assert outcome.plugin_data["root_disk"] == {"name": "/dev/sda"}


async def test_set_port_attribute_by_mac() -> None:
    outcome = await run(rule(act("set-port-attribute", port_id=MAC2.upper(),
                                 path="physical_network", value="physnet2")))
    assert outcome.port_patches == {PORT2: [{"op": "add", "path": "/physical_network",
                                             "value": "physnet2"}]}


async def test_set_port_attribute_by_uuid() -> None:
    outcome = await run(rule(act("set-port-attribute", port_id=PORT1,
                                 path="/local_link_connection/switch_id",
                                 value="00:11:22:33:44:55")))
    assert outcome.port_patches == {PORT1: [{"op": "add",
                                             "path": "/local_link_connection/switch_id",
                                             "value": "00:11:22:33:44:55"}]}


async def test_extend_port_attribute() -> None:
    outcome = await run(rule(act("extend-port-attribute", port_id=PORT1, path="extra.vlans",
                                 value=100)))
    assert outcome.port_patches == {PORT1: [{"op": "add", "path": "/extra/vlans",
                                             "value": [100]}]}


async def test_del_port_attribute() -> None:
    f = facts()
    f.ports[0]["physical_network"] = "physnet1"
    outcome = await run(rule(act("del-port-attribute", port_id=PORT1,
                                 path="physical_network")), the_facts=f)
    assert outcome.port_patches == {PORT1: [{"op": "remove", "path": "/physical_network"}]}


async def test_an_unknown_port_fails_the_run() -> None:
    outcome = await run(rule(act("set-port-attribute", port_id="52:54:00:ff:ff:ff",
                                 path="extra.x", value=1)))
    assert outcome.failure is not None and "no port '52:54:00:ff:ff:ff'" in outcome.failure


async def test_actions_loop_over_items() -> None:
    outcome = await run(rule({"op": "set-port-attribute",
                              "args": {"port_id": "{item[mac_address]}",
                                       "path": "extra.nic", "value": "{item[name]}"},
                              "loop": [
                                  {"mac_address": "52:54:00:00:00:01", "name": "eth0"},
                                  {"mac_address": "52:54:00:00:00:02", "name": "eth1"}]}))
    assert outcome.port_patches == {
        PORT1: [{"op": "add", "path": "/extra/nic", "value": "eth0"}],
        PORT2: [{"op": "add", "path": "/extra/nic", "value": "eth1"}]}


class Server:
    """Stands in for an HTTP server (the engine never opens sockets: the transport is
    injected); answers with `statuses` in turn and records each request."""

    def __init__(self, *statuses: int | Exception) -> None:
        self.statuses = list(statuses)
        self.requests: list[tuple[str, Mapping[str, str], Mapping[str, str], float]] = []

    async def __call__(self, url: str, headers: Mapping[str, str],
                       proxies: Mapping[str, str], timeout: float) -> ApiResponse:
        self.requests.append((url, headers, proxies, timeout))
        status = self.statuses.pop(0)
        if isinstance(status, Exception):
            raise status
        return ApiResponse(status)


def api_call(**args: object) -> dict[str, object]:
    return act("api-call", url="https://cmdb.example/hook?node={node.uuid}&token=x",
               backoff_factor=0, **args)


async def test_api_call_gets_the_interpolated_url() -> None:
    server = Server(200)
    outcome = await run(rule(api_call(headers={"X-Node": "{node.name}"}, timeout=2)),
                        api_call=server)
    assert outcome.failure is None
    url, headers, _proxies, timeout = server.requests[0]
    assert url.startswith("https://cmdb.example/hook?node=11111111-")
    assert (headers, timeout) == ({"X-Node": "compute-0"}, 2.0)


async def test_api_call_traces_no_query_string() -> None:
    outcome = await run(rule(api_call()), api_call=Server(204))
    assert outcome.traces[0].actions[0].changes == [
        {"op": "api-call", "url": "https://cmdb.example/hook", "status": 204}]


async def test_api_call_retries_on_429_and_5xx() -> None:
    server = Server(429, 503, OSError("connection refused"), 200)
    outcome = await run(rule(api_call(retries=3)), api_call=server)
    assert outcome.failure is None and len(server.requests) == 4


async def test_api_call_gives_up_after_the_retries() -> None:
    outcome = await run(rule(api_call(retries=1)), api_call=Server(500, 502))
    assert outcome.failure is not None
    assert "failed after 2 attempt(s): HTTP 502" in outcome.failure
    assert "token" not in outcome.failure


async def test_api_call_does_not_retry_a_client_error() -> None:
    server = Server(404, 200)
    outcome = await run(rule(api_call()), api_call=server)
    assert outcome.failure is not None and "HTTP 404" in outcome.failure
    assert len(server.requests) == 1


async def test_api_call_times_out() -> None:
    async def slow(url: str, headers: Mapping[str, str], proxies: Mapping[str, str],
                   timeout: float) -> ApiResponse:
        await asyncio.sleep(10)
        return ApiResponse(200)

    outcome = await run(rule(api_call(timeout=0.01, retries=0)), api_call=slow)
    assert outcome.failure is not None and "TimeoutError" in outcome.failure


async def test_without_a_transport_api_call_is_only_recorded() -> None:
    outcome = await run(rule(api_call()))
    assert outcome.failure is None
    assert outcome.traces[0].actions[0].changes[0]["status"] is None


@pytest.mark.parametrize("level", ["debug", "info", "warning", "error", "critical"])
async def test_every_log_level(level: str) -> None:
    outcome = await run(rule(act("log", msg="m", level=level.upper())))
    assert outcome.logs[0].level == level


async def test_a_port_may_be_named_by_its_inventory_interface() -> None:
    outcome = await run(rule(act("set-port-attribute", port_id="eth1", path="extra.nic",
                                 value="second")))
    assert outcome.port_patches == {PORT2: [{"op": "add", "path": "/extra/nic",
                                             "value": "second"}]}


async def test_lldp_data_sets_each_ports_switch_port() -> None:
    lldp = {"eth0": {"switch_chassis_id": "00:11:22:33:44:55", "switch_port_id": "Te1/1",
                     "switch_system_name": "leaf-1"},
            "eth1": {"switch_chassis_id": "00:11:22:33:44:66", "switch_port_id": "Te1/2",
                     "switch_system_name": "leaf-2"}}
    the_facts = facts(plugin_data={"parsed_lldp": lldp})
    outcome = await run(rule({"op": "set-port-attribute", "loop": ["eth0", "eth1"], "args": {
        "port_id": "{item}", "path": "local_link_connection",
        "value": {"switch_id": "{{plugin_data[parsed_lldp][{item}][switch_chassis_id]}}",
                  "port_id": "{{plugin_data[parsed_lldp][{item}][switch_port_id]}}",
                  "switch_info": "{{plugin_data[parsed_lldp][{item}][switch_system_name]}}"}}}),
        the_facts=the_facts)
    assert outcome.port_patches[PORT2] == [
        {"op": "add", "path": "/local_link_connection/switch_id", "value": "00:11:22:33:44:66"},
        {"op": "add", "path": "/local_link_connection/port_id", "value": "Te1/2"},
        {"op": "add", "path": "/local_link_connection/switch_info", "value": "leaf-2"}]
    assert outcome.failure is None and outcome.warnings == []


async def test_an_object_field_cannot_be_set_to_text() -> None:
    outcome = await run(rule(act("set-attribute", path="properties", value="{node.name}")))
    assert outcome.failure is not None and "'properties' is an object" in outcome.failure
    assert outcome.node_patch == []
