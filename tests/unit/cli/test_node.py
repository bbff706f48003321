"""Unit tests of `ironsight node ...`: arguments -> requests, responses -> output, and
`--wait` (polled on a fake clock, so no test sleeps)."""

from __future__ import annotations

import json

import httpx
import pytest

from ..fakes import ironic_error
from .conftest import BASE, NODE2_UUID, NODE_UUID, PORT_UUID, node_obj, states

# --- node create / list / show ------------------------------------------------------------


def test_node_create_posts_driver_name_and_json_decoded_values(run, api):
    api.json("POST", "/v1/nodes", node_obj(), status=201)
    run("node", "create", "--driver", "fake", "--name", "demo-0",
        "--driver-info", "ipmi_address=10.0.0.5", "--driver-info", "ipmi_port=623",
        "--property", "cpus=4", "--property", "capabilities=boot_mode:uefi",
        "--extra", 'tags=["a", "b"]')
    assert api.body("POST", "/v1/nodes") == {
        "driver": "fake", "name": "demo-0",
        "driver_info": {"ipmi_address": "10.0.0.5", "ipmi_port": 623},
        "properties": {"cpus": 4, "capabilities": "boot_mode:uefi"},
        "extra": {"tags": ["a", "b"]},
    }


def test_node_create_sends_only_given_fields(run, api):
    api.json("POST", "/v1/nodes", node_obj(), status=201)
    run("node", "create", "--driver", "fake")
    assert api.body("POST", "/v1/nodes") == {"driver": "fake"}


def test_node_create_json_output_is_exactly_the_created_node(run, api):
    created = node_obj()
    api.json("POST", "/v1/nodes", created, status=201)
    result = run("node", "create", "--driver", "fake", "-f", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == created


def test_node_create_rejects_a_pair_without_equals_before_any_request(run, api):
    result = run("node", "create", "--driver", "fake", "--property", "cpus")
    assert result.exit_code == 2
    assert "expected KEY=VALUE" in result.stderr
    assert api.requests == []


def test_node_list_follows_next_links_against_its_own_base_url(run, api):
    first = {"nodes": [{"uuid": NODE_UUID}],
             "next": f"http://public.example/v1/nodes?limit=1&marker={NODE_UUID}"}
    api.json("GET", "/v1/nodes", first, {"nodes": [{"uuid": NODE2_UUID}]})
    result = run("node", "list", "-f", "json")
    assert json.loads(result.stdout) == [{"uuid": NODE_UUID}, {"uuid": NODE2_UUID}]
    second = api.requests[1]
    assert second.url.host == "127.0.0.1"
    assert dict(second.url.params) == {"limit": "1", "marker": NODE_UUID}


def test_node_list_keeps_filters_on_following_pages(run, api):
    first = {"nodes": [{"uuid": NODE_UUID}], "next": f"{BASE}/v1/nodes?marker={NODE_UUID}"}
    api.json("GET", "/v1/nodes", first, {"nodes": []})
    run("node", "list", "--driver", "fake")
    assert dict(api.requests[1].url.params) == {"driver": "fake", "marker": NODE_UUID}


def test_node_list_with_limit_makes_one_request_and_ignores_next(run, api):
    page = {"nodes": [{"uuid": NODE_UUID}], "next": f"{BASE}/v1/nodes?marker={NODE_UUID}"}
    api.json("GET", "/v1/nodes", page)
    result = run("node", "list", "--limit", "1", "-f", "json")
    assert len(api.requests) == 1
    assert api.requests[0].url.params["limit"] == "1"
    assert json.loads(result.stdout) == [{"uuid": NODE_UUID}]


def test_node_list_passes_state_and_driver_filters(run, api):
    api.json("GET", "/v1/nodes", {"nodes": []})
    run("node", "list", "--provision-state", "manageable", "--driver", "fake")
    assert dict(api.requests[0].url.params) == {"provision_state": "manageable",
                                                "driver": "fake"}


def test_node_list_long_uses_the_detail_endpoint(run, api):
    api.json("GET", "/v1/nodes/detail", {"nodes": [node_obj()]})
    result = run("node", "list", "--long")
    assert result.exit_code == 0
    assert "Target Provision State" in result.stdout


def test_node_show_by_name_quotes_it_into_one_path_segment(run, api):
    api.json("GET", "/v1/nodes/a/b", node_obj())  # FakeApi routes on the decoded path
    run("node", "show", "a/b")
    assert api.requests[0].url.raw_path == b"/v1/nodes/a%2Fb"


def test_node_show_json_output_is_exactly_the_api_object(run, api):
    api.json("GET", "/v1/nodes/demo-0", node_obj())
    result = run("node", "show", "demo-0", "-f", "json")
    assert json.loads(result.stdout) == node_obj()


# --- node set / unset / delete ------------------------------------------------------------


def test_node_set_builds_an_add_patch_for_each_field(run, api):
    api.json("PATCH", "/v1/nodes/demo-0", node_obj())
    result = run("node", "set", "demo-0", "--name", "demo-1", "--driver", "pxe_ipmitool",
                 "--driver-info", "ipmi_address=10.0.0.5", "--property", "cpus=8",
                 "--extra", "rack=r1")
    assert result.exit_code == 0
    assert api.body("PATCH", "/v1/nodes/demo-0") == [
        {"op": "add", "path": "/name", "value": "demo-1"},
        {"op": "add", "path": "/driver", "value": "pxe_ipmitool"},
        {"op": "add", "path": "/driver_info/ipmi_address", "value": "10.0.0.5"},
        {"op": "add", "path": "/properties/cpus", "value": 8},
        {"op": "add", "path": "/extra/rack", "value": "r1"},
    ]


def test_node_set_maintenance_with_reason(run, api):
    api.json("PATCH", "/v1/nodes/demo-0", node_obj())
    run("node", "set", "demo-0", "--maintenance", "--reason", "bad disk")
    assert api.body("PATCH", "/v1/nodes/demo-0") == [
        {"op": "add", "path": "/maintenance", "value": True},
        {"op": "add", "path": "/maintenance_reason", "value": "bad disk"},
    ]


def test_node_set_no_maintenance(run, api):
    api.json("PATCH", "/v1/nodes/demo-0", node_obj())
    run("node", "set", "demo-0", "--no-maintenance")
    assert api.body("PATCH", "/v1/nodes/demo-0") == [
        {"op": "add", "path": "/maintenance", "value": False}]


def test_node_set_reason_without_maintenance_is_a_usage_error(run, api):
    result = run("node", "set", "demo-0", "--reason", "why")
    assert result.exit_code == 2
    assert api.requests == []


def test_node_set_with_nothing_to_set_is_a_usage_error(run, api):
    result = run("node", "set", "demo-0")
    assert result.exit_code == 2
    assert "nothing to set" in result.stderr


def test_node_set_escapes_slash_and_tilde_in_keys(run, api):
    api.json("PATCH", "/v1/nodes/demo-0", node_obj())
    run("node", "set", "demo-0", "--extra", "a/b~c=1")
    assert api.body("PATCH", "/v1/nodes/demo-0")[0]["path"] == "/extra/a~1b~0c"


def test_node_unset_builds_a_remove_patch(run, api):
    api.json("PATCH", "/v1/nodes/demo-0", node_obj())
    result = run("node", "unset", "demo-0", "--name", "--driver-info", "ipmi_port",
                 "--property", "cpus", "--extra", "rack")
    assert result.exit_code == 0
    assert api.body("PATCH", "/v1/nodes/demo-0") == [
        {"op": "remove", "path": "/name"},
        {"op": "remove", "path": "/driver_info/ipmi_port"},
        {"op": "remove", "path": "/properties/cpus"},
        {"op": "remove", "path": "/extra/rack"},
    ]


def test_node_unset_with_nothing_to_unset_is_a_usage_error(run, api):
    result = run("node", "unset", "demo-0")
    assert result.exit_code == 2
    assert api.requests == []


def test_node_delete_deletes_every_node_given(run, api):
    api.add("DELETE", "/v1/nodes/a", httpx.Response(204))
    api.add("DELETE", "/v1/nodes/b", httpx.Response(204))
    result = run("node", "delete", "a", "b")
    assert result.exit_code == 0
    assert [r.url.path for r in api.sent("DELETE")] == ["/v1/nodes/a", "/v1/nodes/b"]


def test_node_delete_carries_on_past_a_failure_then_exits_1(run, api):
    api.add("DELETE", "/v1/nodes/a", ironic_error(409, "Node a is locked by host h."))
    api.add("DELETE", "/v1/nodes/b", httpx.Response(204))
    result = run("node", "delete", "a", "b")
    assert result.exit_code == 1
    assert "Error: Node a is locked by host h. (HTTP 409)" in result.stderr
    assert len(api.sent("DELETE", "/v1/nodes/b")) == 1


# --- provision actions and --wait ---------------------------------------------------------


@pytest.mark.parametrize("verb", ["manage", "provide", "inspect"])
def test_provision_command_puts_its_verb_as_target(run, api, verb):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    result = run("node", verb, "demo-0")
    assert result.exit_code == 0
    assert api.body("PUT", "/v1/nodes/demo-0/states/provision") == {"target": verb}


def test_provision_without_wait_does_not_poll(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    run("node", "manage", "demo-0")
    assert api.sent("GET") == []


def test_node_abort_puts_abort_target(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    result = run("node", "abort", "demo-0")
    assert result.exit_code == 0
    assert api.body("PUT", "/v1/nodes/demo-0/states/provision") == {"target": "abort"}


def test_manage_wait_polls_until_the_target_state_clears(run, api, clock):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    api.add("GET", "/v1/nodes/demo-0", *states(
        ("verifying", "manageable"), ("verifying", "manageable"), ("manageable", None)))
    result = run("node", "manage", "demo-0", "--wait", "60")
    assert result.exit_code == 0
    assert len(api.sent("GET")) == 3
    assert clock.sleeps == [2.0, 2.0]


def test_wait_prints_one_progress_line_per_state_change_to_stderr(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    api.add("GET", "/v1/nodes/demo-0", *states(
        ("verifying", "manageable"), ("verifying", "manageable"), ("manageable", None)))
    result = run("node", "manage", "demo-0", "--wait", "60")
    assert result.stderr.splitlines() == [
        "node demo-0: provision state verifying (target manageable)",
        "node demo-0: provision state manageable",
    ]
    assert result.stdout == ""


def test_manage_wait_that_falls_back_to_enroll_exits_1_with_last_error(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    api.add("GET", "/v1/nodes/demo-0", *states(
        ("verifying", "manageable"), ("enroll", None),
        last_error="Missing driver_info: ipmi_address"))
    result = run("node", "manage", "demo-0", "--wait", "60")
    assert result.exit_code == 1
    assert ("Error: node demo-0 ended in provision state 'enroll': "
            "Missing driver_info: ipmi_address") in result.stderr


def test_inspect_wait_that_ends_in_inspect_failed_exits_1(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    api.json("GET", f"/v1/nodes/{NODE_UUID}/ports", {"ports": []})
    api.add("GET", "/v1/nodes/demo-0", *states(
        ("inspect wait", "manageable"), ("inspect failed", None), last_error="Ramdisk error"))
    result = run("node", "inspect", "demo-0", "--wait", "60")
    assert result.exit_code == 1
    assert "'inspect failed': Ramdisk error" in result.stderr


def test_inspect_wait_keeps_waiting_through_inspect_wait(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    api.json("GET", f"/v1/nodes/{NODE_UUID}/ports", {"ports": []})
    api.add("GET", "/v1/nodes/demo-0", *states(
        ("inspecting", "manageable"), ("inspect wait", "manageable"), ("manageable", None)))
    result = run("node", "inspect", "demo-0", "--wait", "60")
    assert result.exit_code == 0


def test_inspect_wait_ends_with_a_table_of_what_was_found(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    api.json("GET", f"/v1/nodes/{NODE_UUID}/ports",
             {"ports": [{"address": "52:54:00:00:00:01"}]})
    api.add("GET", "/v1/nodes/demo-0", *states(
        ("inspect wait", "manageable"), ("manageable", None), ("manageable", None),
        properties={"cpus": 8, "cpu_arch": "x86_64", "memory_mb": 16384, "local_gb": 99}))
    result = run("node", "inspect", "demo-0", "--wait", "60")
    assert result.exit_code == 0
    for text in ("CPUs", "16384", "x86_64", "99", "52:54:00:00:00:01"):
        assert text in result.stdout


def test_wait_times_out_and_exits_1(run, api, clock):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    api.add("GET", "/v1/nodes/demo-0", *states(("verifying", "manageable")))
    result = run("node", "manage", "demo-0", "--wait", "5")
    assert result.exit_code == 1
    assert "timed out after 5 s waiting for node demo-0" in result.stderr
    assert clock.sleeps == [2.0, 2.0, 1.0]


def test_wait_zero_means_no_time_limit(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/provision")
    slow = [("verifying", "manageable")] * 500 + [("manageable", None)]
    api.add("GET", "/v1/nodes/demo-0", *states(*slow))
    result = run("node", "manage", "demo-0", "--wait", "0")
    assert result.exit_code == 0


def test_wait_on_several_nodes_reports_each_and_fails_if_one_fails(run, api):
    for name in ("a", "b"):
        api.accept("PUT", f"/v1/nodes/{name}/states/provision")
    api.add("GET", "/v1/nodes/a", *states(("verifying", "manageable"), ("manageable", None)))
    api.add("GET", "/v1/nodes/b", *states(("verifying", "manageable"), ("enroll", None),
                                          last_error="bad credentials"))
    result = run("node", "manage", "a", "b", "--wait", "60")
    assert result.exit_code == 1
    assert "node a: provision state manageable" in result.stderr
    assert "node b ended in provision state 'enroll': bad credentials" in result.stderr


def test_failed_provision_request_is_not_waited_for(run, api):
    api.add("PUT", "/v1/nodes/demo-0/states/provision", ironic_error(
        400, 'The requested action "manage" can not be performed on node "demo-0" '
             'while it is in state "available".'))
    result = run("node", "manage", "demo-0", "--wait", "60")
    assert result.exit_code == 1
    assert "(HTTP 400)" in result.stderr
    assert api.sent("GET") == []


# --- power --------------------------------------------------------------------------------


@pytest.mark.parametrize(("action", "target"),
                         [("on", "power on"), ("off", "power off"), ("reboot", "rebooting")])
def test_power_command_puts_the_ironic_power_target(run, api, action, target):
    api.accept("PUT", "/v1/nodes/demo-0/states/power")
    result = run("node", "power", action, "demo-0")
    assert result.exit_code == 0
    assert api.body("PUT", "/v1/nodes/demo-0/states/power") == {"target": target}


def test_power_on_wait_polls_until_target_power_state_clears(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/power")
    api.json("GET", "/v1/nodes/demo-0",
             node_obj(power_state="power off", target_power_state="power on"),
             node_obj(power_state="power on", target_power_state=None))
    result = run("node", "power", "on", "demo-0", "--wait", "30")
    assert result.exit_code == 0
    assert result.stderr.splitlines()[-1] == "node demo-0: power state power on"


def test_power_wait_that_settles_in_the_wrong_state_exits_1(run, api):
    api.accept("PUT", "/v1/nodes/demo-0/states/power")
    api.json("GET", "/v1/nodes/demo-0",
             node_obj(power_state="power off", target_power_state=None,
                      last_error="IPMI timeout"))
    result = run("node", "power", "on", "demo-0", "--wait", "30")
    assert result.exit_code == 1
    assert "ended in power state 'power off': IPMI timeout" in result.stderr


# --- validate / boot device / history -----------------------------------------------------


VALIDATE = {"power": {"result": True, "reason": None},
            "inspect": {"result": False, "reason": "inspection not supported"}}


def test_node_validate_table_has_a_row_per_interface(run, api):
    api.json("GET", "/v1/nodes/demo-0/validate", VALIDATE)
    result = run("node", "validate", "demo-0")
    lines = [line for line in result.stdout.splitlines() if "power" in line or "inspect" in line]
    assert "False" in lines[0] and "inspection not supported" in lines[0]
    assert "True" in lines[1]


def test_node_validate_json_is_the_api_object(run, api):
    api.json("GET", "/v1/nodes/demo-0/validate", VALIDATE)
    result = run("node", "validate", "demo-0", "-f", "json")
    assert json.loads(result.stdout) == VALIDATE


def test_boot_device_set_puts_device_and_persistence(run, api):
    api.add("PUT", "/v1/nodes/demo-0/management/boot_device", httpx.Response(204))
    result = run("node", "boot-device", "set", "demo-0", "pxe", "--persistent")
    assert result.exit_code == 0
    assert api.body("PUT", "/v1/nodes/demo-0/management/boot_device") == {
        "boot_device": "pxe", "persistent": True}


def test_boot_device_set_rejects_an_unknown_device(run, api):
    result = run("node", "boot-device", "set", "demo-0", "floppy")
    assert result.exit_code == 2
    assert api.requests == []


def test_node_history_json_is_the_list_of_events(run, api):
    events = [{"uuid": PORT_UUID, "created_at": "2024-01-01T00:00:00+00:00",
               "severity": "INFO", "event": "manage: enroll -> verifying"}]
    api.json("GET", "/v1/nodes/demo-0/history", {"history": events})
    result = run("node", "history", "demo-0", "-f", "json")
    assert json.loads(result.stdout) == events


ATTEMPTS = {"attempts": [{"attempt": 1, "result": "failed", "failure_code": "BOOT_NO_LOADER",
                          "phases": [
                              {"phase": "started", "at": "2024-01-01T00:00:01.500000",
                               "source": "discoverd", "manage_boot": True},
                              {"phase": "dhcp_lease", "at": "2024-01-01T00:00:05",
                               "source": "pxe", "ip": "10.0.0.5"},
                              {"phase": "finished", "at": "2024-01-01T00:00:40",
                               "source": "discoverd", "result": "failed"}]}]}


def test_node_history_interleaves_the_inspection_steps_by_time(run, api):
    events = [{"uuid": PORT_UUID, "created_at": "2024-01-01T00:00:00+00:00",
               "severity": "INFO", "event": "inspect: manageable -> inspecting"},
              {"uuid": NODE_UUID, "created_at": "2024-01-01T00:00:41+00:00",
               "severity": "ERROR", "event": "inspect failed"}]
    api.json("GET", "/v1/nodes/demo-0/history", {"history": events})
    api.json("GET", "/v1/nodes/demo-0/inspection/attempts", ATTEMPTS)
    result = run("node", "history", "demo-0", "-f", "json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert [e["event"] for e in found] == [
        "inspect: manageable -> inspecting",
        "Inspection attempt 1: started (discoverd: manage_boot=True)",
        "Inspection attempt 1: dhcp_lease (pxe: ip=10.0.0.5)",
        "Inspection attempt 1: finished (discoverd: result=failed)",
        "inspect failed"]
    assert [e["event_type"] for e in found[1:4]] == ["inspection_step"] * 3
    assert found[3]["severity"] == "ERROR"  # the failed attempt's end


def test_node_history_without_steps_is_the_services_list(run, api):
    events = [{"uuid": PORT_UUID, "created_at": "2024-01-01T00:00:00+00:00",
               "severity": "INFO", "event": "manage: enroll -> verifying"}]
    api.json("GET", "/v1/nodes/demo-0/history", {"history": events})
    api.json("GET", "/v1/nodes/demo-0/inspection/attempts", ATTEMPTS)
    result = run("node", "history", "demo-0", "--no-steps", "-f", "json")
    assert json.loads(result.stdout) == events
    assert [r.url.path for r in api.requests] == ["/v1/nodes/demo-0/history"]
