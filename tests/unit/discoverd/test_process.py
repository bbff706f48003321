"""Processing a ramdisk's report (Processor): what is decided before the ramdisk is answered,
the background completion, reapply and the ramdisk's logs.

The bare-metal API is a `FakeBareMetal` that records calls: these are unit tests of discoverd
alone, so a stand-in behind the `BareMetal` protocol is legitimate; the real bare-metal
service is exercised by tests/functional/discoverd/ (test_callback_*.py, test_hooks.py,
test_reapply.py, test_data.py). The node cache and the hooks are the real ones.
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any

import pytest

from ironsight.common.exceptions import Invalid, NotFound
from ironsight.discoverd import states
from ironsight.discoverd.ironic import IronicError
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook

from .helpers import BMC1, GIB, MAC1, MAC2, MAC3, UUID1, Build, Discoverd, agent_report

LOGS_TEXT = b"ramdisk-log-line-5d1e\n"
LOGS = base64.b64encode(LOGS_TEXT).decode()


async def waiting(di: Discoverd, **node: Any) -> None:
    """UUID1 (port MAC1, BMC1 unless `node` says otherwise) waiting for its ramdisk."""
    di.ironic.add_node(UUID1, **node)
    await di.introspector.start(UUID1)
    await di.settle()
    assert await di.state(UUID1) == states.WAITING
    di.ironic.calls.clear()
    di.notifications.clear()


async def token(di: Discoverd, uuid: str = UUID1) -> str:
    """The callback token the node's boot script would have carried: only a report with it
    may end the introspection."""
    issued = await di.cache.issue_token(uuid)
    assert issued is not None
    return issued


async def processed(di: Discoverd, report: dict[str, Any] | None = None) -> None:
    """Post `report` (default: the node's own), then wait for the end of processing."""
    assert await di.processor.process(report or agent_report()) == {"uuid": UUID1}
    await di.settle()


def patches(di: Discoverd) -> list[list[dict[str, Any]]]:
    return [call[2] for call in di.ironic.calls if call[0] == "patch_node"]


class Crashing(ProcessingHook):
    name = "crashing"

    def before_update(self, ctx: ProcessingContext) -> None:
        raise RuntimeError("boom")


class Oddly(ProcessingHook):
    """Sets properties whose names need escaping in a JSON pointer."""

    name = "oddly"

    def before_update(self, ctx: ProcessingContext) -> None:
        ctx.changes.properties["a/b~c"] = 1


# --- the answer to the ramdisk ----------------------------------------------------------------


async def test_report_is_answered_with_the_node_and_claimed_at_once(di: Discoverd) -> None:
    await waiting(di)
    assert await di.processor.process(agent_report()) == {"uuid": UUID1}
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.owner) == (states.PROCESSING, di.cache.owner)
    assert di.ironic.calls == []  # the node is not touched before the answer


async def test_raw_report_is_stored_without_its_logs(di: Discoverd) -> None:
    await waiting(di)
    report = agent_report()
    await di.processor.process({**report, "logs": LOGS})
    assert await di.cache.get_data(UUID1, processed=False) == report


async def test_invalid_report_is_refused_naming_the_field_and_changes_nothing(
        di: Discoverd) -> None:
    await waiting(di)
    report = agent_report()
    report["inventory"]["interfaces"] = []
    with pytest.raises(Invalid, match=r"inventory\.interfaces"):
        await di.processor.process(report)
    assert await di.state(UUID1) == states.WAITING
    assert di.ironic.calls == []


async def test_report_of_no_introspection_is_not_found_and_changes_nothing(
        di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(NotFound):
        await di.processor.process(agent_report((MAC3,), bmc="192.0.2.99"))
    assert await di.state(UUID1) == states.WAITING


async def test_node_is_found_by_the_reported_bmc_address(di: Discoverd) -> None:
    await waiting(di)
    assert await di.processor.process(agent_report((MAC3,), bmc=BMC1)) == {"uuid": UUID1}


@pytest.mark.parametrize("bmc", ["0.0.0.0", "::/0", "::"])
async def test_placeholder_bmc_addresses_are_not_looked_up(di: Discoverd, bmc: str) -> None:
    await waiting(di, driver_info={"ipmi_address": BMC1})
    await di.cache.start(UUID1, manage_boot=True, macs=[MAC1], bmc_addresses=[bmc])
    with pytest.raises(NotFound):
        await di.processor.process(agent_report((MAC3,), bmc=bmc))


async def test_reported_macs_are_looked_up_in_lowercase(di: Discoverd) -> None:
    await waiting(di)
    report = agent_report((MAC1.upper(),), bmc=None, pxe=None)
    assert await di.processor.process(report) == {"uuid": UUID1}


async def test_report_before_waiting_is_saved_is_processed(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    await di.introspector.start(UUID1)
    assert await di.state(UUID1) == states.STARTING
    await processed(di)
    assert await di.state(UUID1) == states.FINISHED


async def test_ramdisk_error_is_refused_and_ends_the_introspection_with_it(
        di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(Invalid, match=r"^Ramdisk reported error: disk on fire$"):
        await di.processor.process(agent_report(error="disk on fire"), await token(di))
    await di.settle()
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.ERROR, "Ramdisk reported error: disk on fire")
    assert "patch_node" not in di.ironic.names()
    assert ("set_power", UUID1, "power off") in di.ironic.calls


async def test_refused_report_keeps_no_data(di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(Invalid):
        await di.processor.process(agent_report(error="disk on fire"))
    with pytest.raises(NotFound):
        await di.cache.get_data(UUID1, processed=False)


async def test_hook_refusal_names_the_hook(di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(Invalid, match=r"^scheduler: The ramdisk data lacks inventory\.cpu\.count$"):
        await di.processor.process(agent_report(cpus=None), await token(di))
    assert await di.error(UUID1) == "scheduler: The ramdisk data lacks inventory.cpu.count"


async def test_every_refusing_hook_is_reported_together(di: Discoverd) -> None:
    await waiting(di)
    report = agent_report(("not-a-mac",), cpus=None)  # found by its BMC address
    with pytest.raises(Invalid) as raised:
        await di.processor.process(report, await token(di))
    assert str(raised.value) == (
        "validate_interfaces: No valid interfaces found in the ramdisk data: every NIC lacks "
        "a valid MAC address; scheduler: The ramdisk data lacks inventory.cpu.count")


async def test_second_report_while_processing_is_refused(di: Discoverd) -> None:
    await waiting(di)
    await di.processor.process(agent_report())
    with pytest.raises(Invalid, match="is processing; it does not accept ramdisk data now"):
        await di.processor.process(agent_report(cpus=64))
    await di.settle()
    assert await di.state(UUID1) == states.FINISHED
    assert di.ironic.nodes[UUID1]["properties"]["cpus"] == 4


async def test_refused_report_while_processing_changes_nothing(di: Discoverd) -> None:
    await waiting(di)
    await di.processor.process(agent_report())
    with pytest.raises(Invalid):
        await di.processor.process(agent_report(error="late report"))
    await di.settle()
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.FINISHED, None)


# --- completion in the background -------------------------------------------------------------


async def test_properties_are_set_in_one_patch(di: Discoverd) -> None:
    await waiting(di)
    await processed(di, agent_report(cpus=8, memory_mb=16384, disks_gib=(50,)))
    assert patches(di) == [[
        {"op": "add", "path": "/properties/cpus", "value": 8},
        {"op": "add", "path": "/properties/cpu_arch", "value": "x86_64"},
        {"op": "add", "path": "/properties/memory_mb", "value": 16384},
        {"op": "add", "path": "/properties/local_gb", "value": 49},
        {"op": "add", "path": "/properties/capabilities", "value": "boot_mode:bios"}]]


async def test_property_names_are_escaped_in_the_patch_path(di: Discoverd) -> None:
    await waiting(di)
    di.processor.hooks = [Oddly(di.conf)]
    await processed(di)
    assert patches(di) == [[{"op": "add", "path": "/properties/a~1b~0c", "value": 1}]]


async def test_ports_are_created_for_the_chosen_nics(di: Discoverd) -> None:
    await waiting(di, macs=())  # found by BMC address
    await processed(di, agent_report((MAC1, MAC2), pxe=MAC2))
    assert [c for c in di.ironic.calls if c[0] == "create_port"] == [
        ("create_port", UUID1, MAC2, True)]


async def test_ports_are_deleted_and_fixed_as_the_hooks_decide(build: Build) -> None:
    di = build(processing={"keep_ports": "present"})
    await waiting(di, macs=(MAC1, MAC2, MAC3))  # every port pxe_enabled
    by_mac = {p["address"]: p["uuid"] for p in di.ironic.ports[UUID1]}
    await processed(di, agent_report((MAC1, MAC2), pxe=MAC1))  # MAC3 is not seen
    changed = [c for c in di.ironic.calls if c[0] in ("delete_port", "patch_port")]
    assert changed == [("delete_port", by_mac[MAC3]),
                       ("patch_port", by_mac[MAC2],
                        [{"op": "replace", "path": "/pxe_enabled", "value": False}])]


async def test_processed_data_is_stored_with_the_changes(di: Discoverd) -> None:
    await waiting(di, macs=())
    await processed(di, agent_report((MAC1,), disks_gib=(20,), extra_field="kept"))
    data = await di.cache.get_data(UUID1, processed=True)
    assert (data["cpus"], data["local_gb"], data["boot_mac"], data["extra_field"]) == (
        4, 19, MAC1, "kept")
    assert data["root_disk"]["size"] == 20 * GIB
    assert data["changes"] == {
        "properties": {"cpus": 4, "cpu_arch": "x86_64", "memory_mb": 8192, "local_gb": 19,
                       "capabilities": "boot_mode:bios"},
        "created_ports": [MAC1], "deleted_ports": [], "warnings": []}


async def test_nothing_is_stored_with_store_data_off(build: Build) -> None:
    di = build(processing={"store_data": "false"})
    await waiting(di)
    await processed(di)
    assert await di.state(UUID1) == states.FINISHED
    for kind in (True, False):
        with pytest.raises(NotFound):
            await di.cache.get_data(UUID1, processed=kind)


async def test_finished_means_powered_off(di: Discoverd) -> None:
    await waiting(di)
    await processed(di)
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.FINISHED, None)
    assert di.ironic.calls[-2:] == [("set_power", UUID1, "power off"), ("get_power", UUID1)]


async def test_finish_tells_the_pxe_filter(di: Discoverd) -> None:
    await waiting(di)
    await processed(di)
    assert len(di.notifications) == 1
    assert await di.cache.introspection_macs() == set()


async def test_no_power_off_with_power_off_disabled(build: Build) -> None:
    di = build(processing={"power_off": "false"})
    await waiting(di)
    await processed(di)
    assert await di.state(UUID1) == states.FINISHED
    assert "set_power" not in di.ironic.names()


async def test_no_power_off_without_managing_boot(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    await di.introspector.start(UUID1, manage_boot=False)
    await di.settle()
    await processed(di)
    assert await di.state(UUID1) == states.FINISHED
    assert "set_power" not in di.ironic.names()


async def test_power_off_failure_ends_in_error(di: Discoverd) -> None:
    await waiting(di)
    di.ironic.power_answers = [{"power_state": "power on", "target_power_state": None,
                                "last_error": "IPMI timed out"}]
    await processed(di)
    assert await di.error(UUID1) == (f"Failed to power off node {UUID1} (introspection "
                                     "finished): IPMI timed out")


async def test_bare_metal_failure_while_updating_ends_in_error_and_powers_off(
        di: Discoverd) -> None:
    await waiting(di)
    di.ironic.fail["patch_node"] = IronicError("Node is locked", code=409)
    await processed(di)
    assert await di.error(UUID1) == "Failed to process the ramdisk data: Node is locked"
    assert ("set_power", UUID1, "power off") in di.ironic.calls


async def test_port_taken_by_another_node_is_only_a_warning(di: Discoverd) -> None:
    await waiting(di, macs=())
    di.ironic.taken_macs.add(MAC1)
    await processed(di)
    assert await di.state(UUID1) == states.FINISHED
    warnings = (await di.cache.get_data(UUID1, processed=True))["changes"]["warnings"]
    assert len(warnings) == 1 and MAC1 in warnings[0]


async def test_other_port_creation_failure_ends_in_error(di: Discoverd) -> None:
    await waiting(di, macs=())
    di.ironic.fail["create_port"] = IronicError("Internal error", code=500)
    await processed(di)
    assert await di.error(UUID1) == "Failed to process the ramdisk data: Internal error"


HINTS_FAILURE = ("Failed to process the ramdisk data: root_disk_selection: No disks satisfied "
                 "root device hints {'serial': 'NOPE'}")


async def test_hook_failure_after_the_answer_ends_in_error_and_changes_no_node(
        di: Discoverd) -> None:
    await waiting(di, properties={"root_device": {"serial": "NOPE"}})
    await processed(di)
    error = await di.error(UUID1)
    assert error is not None and error.startswith(HINTS_FAILURE)
    assert patches(di) == []


async def test_failing_hook_is_not_followed_by_the_failures_it_causes(di: Discoverd) -> None:
    await waiting(di, properties={"root_device": {"serial": "NOPE"}})
    await processed(di)
    assert await di.error(UUID1) == HINTS_FAILURE


async def test_crashing_hook_ends_in_error_naming_it(di: Discoverd) -> None:
    await waiting(di)
    di.processor.hooks.append(Crashing(di.conf))
    await processed(di)
    assert await di.error(UUID1) == ("Failed to process the ramdisk data: crashing: unexpected "
                                     "error: RuntimeError('boom')")


# --- reapply ----------------------------------------------------------------------------------


async def finished(di: Discoverd) -> None:
    await waiting(di)
    await processed(di)
    assert await di.state(UUID1) == states.FINISHED
    di.ironic.calls.clear()


async def test_reapply_is_reapplying_when_it_answers(di: Discoverd) -> None:
    await finished(di)
    await di.processor.reapply(UUID1, None)
    assert await di.state(UUID1) == states.REAPPLYING


async def test_reapply_runs_the_hooks_again_on_the_stored_report(build: Build) -> None:
    di = build(processing={"overwrite_existing": "true"})
    await finished(di)
    di.ironic.nodes[UUID1]["properties"]["cpus"] = 1
    await di.processor.reapply(UUID1, None)
    await di.settle()
    assert await di.state(UUID1) == states.FINISHED
    assert di.ironic.nodes[UUID1]["properties"]["cpus"] == 4


async def test_reapply_takes_no_power_action(di: Discoverd) -> None:
    await finished(di)
    await di.processor.reapply(UUID1, None)
    await di.settle()
    assert "set_power" not in di.ironic.names()


async def test_reapply_with_new_data_uses_and_stores_it_without_logs(di: Discoverd) -> None:
    await finished(di)
    new = agent_report(cpus=16)
    await di.processor.reapply(UUID1, {**new, "logs": LOGS})
    await di.settle()
    assert await di.cache.get_data(UUID1, processed=False) == new
    assert (await di.cache.get_data(UUID1, processed=True))["cpus"] == 16


async def test_reapply_of_an_errored_introspection_can_finish(di: Discoverd) -> None:
    await waiting(di, properties={"root_device": {"serial": "NOPE"}})
    await processed(di)
    assert await di.state(UUID1) == states.ERROR
    del di.ironic.nodes[UUID1]["properties"]["root_device"]
    await di.processor.reapply(UUID1, None)
    await di.settle()
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.FINISHED, None)


async def test_reapply_that_fails_ends_in_error(di: Discoverd) -> None:
    await finished(di)
    di.ironic.nodes[UUID1]["properties"]["root_device"] = {"serial": "NOPE"}
    await di.processor.reapply(UUID1, None)
    await di.settle()
    error = await di.error(UUID1)
    assert error is not None and error.startswith("Reapply failed: root_disk_selection: No disks")


async def test_reapply_of_an_introspection_in_progress_is_refused_naming_its_state(
        di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(Invalid, match='in state "waiting" \\(only finished or error\\)'):
        await di.processor.reapply(UUID1, agent_report())
    assert await di.state(UUID1) == states.WAITING
    with pytest.raises(NotFound):
        await di.cache.get_data(UUID1, processed=False)


async def test_reapply_with_invalid_data_is_refused_and_changes_nothing(di: Discoverd) -> None:
    await finished(di)
    stored = await di.cache.get_data(UUID1, processed=False)
    with pytest.raises(Invalid, match=r"inventory\.interfaces"):
        await di.processor.reapply(UUID1, {"inventory": {"interfaces": []}})
    assert await di.state(UUID1) == states.FINISHED
    assert await di.cache.get_data(UUID1, processed=False) == stored


async def test_reapply_without_stored_data_is_not_found(di: Discoverd) -> None:
    await di.cache.start(UUID1, manage_boot=True, macs=[MAC1], bmc_addresses=[])
    await di.cache.transition(UUID1, "error", error="boom")
    with pytest.raises(NotFound, match="No unprocessed introspection data"):
        await di.processor.reapply(UUID1, None)
    assert await di.state(UUID1) == states.ERROR


async def test_reapply_with_store_data_off_needs_the_data_in_the_request(build: Build) -> None:
    di = build(processing={"store_data": "false"})
    await finished(di)
    with pytest.raises(Invalid, match=r"\[processing\] store_data is off"):
        await di.processor.reapply(UUID1, None)
    await di.processor.reapply(UUID1, agent_report())
    await di.settle()
    assert await di.state(UUID1) == states.FINISHED


# --- the ramdisk's logs -----------------------------------------------------------------------


def log_files(di: Discoverd) -> list[Path]:
    return sorted(di.conf.ramdisk_logs_dir.glob(f"{UUID1}_*.tar.gz"))


async def test_logs_of_a_refused_report_are_written_to_their_own_file(di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(Invalid):
        await di.processor.process(agent_report(error="boom", logs=LOGS), await token(di))
    files = log_files(di)
    assert len(files) == 1 and files[0].read_bytes() == LOGS_TEXT


async def test_logs_of_an_accepted_report_are_not_kept_by_default(di: Discoverd) -> None:
    await waiting(di)
    await processed(di, agent_report(logs=LOGS))
    assert log_files(di) == []


async def test_logs_of_an_accepted_report_are_kept_with_always_store(build: Build) -> None:
    di = build(introspection={"always_store_ramdisk_logs": "true"})
    await waiting(di)
    await processed(di, agent_report(logs=LOGS))
    assert [f.read_bytes() for f in log_files(di)] == [LOGS_TEXT]


async def test_logs_that_are_not_base64_are_dropped(di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(Invalid):
        await di.processor.process(agent_report(error="boom", logs="!!not base64!!"))
    assert log_files(di) == []


async def test_logs_never_reach_the_service_log(di: Discoverd,
                                                caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    await waiting(di)
    with pytest.raises(Invalid):
        await di.processor.process(agent_report(error="boom", logs=LOGS))
    assert caplog.records
    assert LOGS not in caplog.text and LOGS_TEXT.decode().strip() not in caplog.text


# --- port fields, port patches and the previous report -----------------------------------------


class Linking(ProcessingHook):
    """Gives MAC2's port, if one is created, a physical network, and patches every existing
    port."""

    name = "linking"

    def before_update(self, ctx: ProcessingContext) -> None:
        ctx.changes.port_fields[MAC2] = {"physical_network": "physnet_a"}
        for port in ctx.ports:
            ctx.changes.patch_port(port["uuid"], {"op": "add", "path": "/extra/seen",
                                                  "value": True})


class Remembering(ProcessingHook):
    """Records the previous report it was given (`uses_previous_report`)."""

    name = "remembering"
    uses_previous_report = True
    seen: list[dict[str, Any] | None] = []

    def before_update(self, ctx: ProcessingContext) -> None:
        self.seen.append(ctx.previous)


async def test_a_port_created_in_the_run_gets_the_fields_hooks_gave_it(di: Discoverd) -> None:
    await waiting(di, macs=())
    di.processor.hooks.insert(0, Linking(di.conf))
    await processed(di, agent_report((MAC1, MAC2), pxe=MAC2))
    assert [c for c in di.ironic.calls if c[0] == "create_port"] == [
        ("create_port", UUID1, MAC2, True, {"physical_network": "physnet_a"})]
    assert di.ironic.ports[UUID1][0]["physical_network"] == "physnet_a"


async def test_fields_for_a_port_that_is_not_created_are_unused(di: Discoverd) -> None:
    await waiting(di, macs=())
    di.processor.hooks.insert(0, Linking(di.conf))
    await processed(di, agent_report((MAC1, MAC2), pxe=MAC1))  # add_ports=pxe: MAC1 only
    assert [c for c in di.ironic.calls if c[0] == "create_port"] == [
        ("create_port", UUID1, MAC1, True)]


async def test_a_port_being_deleted_is_not_patched(build: Build) -> None:
    di = build(processing={"keep_ports": "present"})
    await waiting(di, macs=(MAC1, MAC3))
    by_mac = {p["address"]: p["uuid"] for p in di.ironic.ports[UUID1]}
    di.processor.hooks.insert(0, Linking(di.conf))
    await processed(di, agent_report((MAC1,), pxe=MAC1))  # MAC3 is not seen: deleted
    assert await di.state(UUID1) == states.FINISHED
    changed = [c[:2] for c in di.ironic.calls if c[0] in ("delete_port", "patch_port")]
    assert changed == [("delete_port", by_mac[MAC3]), ("patch_port", by_mac[MAC1])]


async def test_hooks_that_ask_get_the_previous_introspections_report(di: Discoverd) -> None:
    Remembering.seen = []
    await waiting(di)
    di.processor.hooks.append(Remembering(di.conf))
    first = agent_report(disks_gib=(100,))
    await processed(di, first)
    await di.introspector.start(UUID1)
    await di.settle()
    await processed(di, agent_report(disks_gib=(100, 200)))
    assert Remembering.seen == [None, first]


async def test_the_previous_report_is_not_read_when_no_hook_asks(di: Discoverd) -> None:
    await waiting(di)
    seen: list[Any] = []

    class Looking(ProcessingHook):
        name = "looking"

        def before_update(self, ctx: ProcessingContext) -> None:
            seen.append(ctx.previous)

    di.processor.hooks.append(Looking(di.conf))
    await processed(di)
    await di.introspector.start(UUID1)
    await di.settle()
    await processed(di)
    assert seen == [None, None]


async def test_without_store_data_no_previous_report_is_given(build: Build) -> None:
    di = build(processing={"store_data": "false"})
    Remembering.seen = []
    await waiting(di)
    di.processor.hooks.append(Remembering(di.conf))
    await processed(di)
    await di.introspector.start(UUID1)
    await di.settle()
    await processed(di)
    assert Remembering.seen == [None, None]
