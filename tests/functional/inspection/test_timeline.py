"""An inspection's timeline through the bare-metal API and `ironsight node timeline`, with
the real services and the real agent (its hello, then its report). The PXE phases need a
booting machine: tests/e2e (QEMU) covers them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ironsight.cli.main import _register, cli

from .helpers import (
    enroll,
    inspect,
    issued_token,
    machine,
    run_agent,
    wait_node,
    wait_ramdisk_booted,
    wait_step,
)


@pytest.fixture(scope="module")
def ironsight_cli():
    _register()
    return cli


def inspected(service, client, tmp_path) -> tuple[str, str]:
    """A node inspected to the end by the real agent, which had its boot's token."""
    spec, tree = machine(tmp_path)
    uuid = enroll(client, spec)
    inspect(client, uuid)
    wait_ramdisk_booted(service, client, uuid)
    token = issued_token(service, uuid)
    (tree / "proc" / "cmdline").write_text(f"quiet ironsight.callback_token={token}\n")
    (tree / "tmp").mkdir(exist_ok=True)
    (tree / "tmp" / "ramdisk.log").write_text("ironsight[3.20] network up: 10.0.0.9 (dhcp)\n")
    proc = run_agent(tree, f"{service.di_url}/v1/continue")
    assert proc.returncode == 0, proc.stderr
    assert "hello sent" in proc.stderr
    wait_node(client, uuid, provision="manageable", power="power off")
    wait_step(client, uuid, "powered_off")
    return uuid, spec.name


def test_an_inspected_node_shows_each_step_of_its_attempt_in_order(service, client,
                                                                   tmp_path):
    uuid, _ = inspected(service, client, tmp_path)
    resp = client.get(f"/v1/nodes/{uuid}/inspection/attempts")
    assert resp.status_code == 200, resp.text
    (attempt,) = resp.json()["attempts"]
    assert (attempt["attempt"], attempt["result"], attempt["failure_code"]) == (
        1, "success", None)
    # the conductor boots the node and powers it off once discoverd has finished
    assert [(p["phase"], p["source"]) for p in attempt["phases"]] == [
        ("started", "discoverd"), ("power_on_requested", "conductor"),
        ("powered_on", "conductor"), ("hello", "ramdisk"), ("report_received", "ramdisk"),
        ("processing_done", "discoverd"), ("finished", "discoverd"),
        ("powered_off", "conductor")]
    assert attempt["started_at"] <= attempt["finished_at"]


def test_node_timeline_prints_the_attempts_as_json_by_name(service, client, tmp_path,
                                                           ironsight_cli):
    _, name = inspected(service, client, tmp_path)
    result = CliRunner().invoke(ironsight_cli, ["node", "timeline", name, "-f", "json"],
                                env={"IRONSIGHT_URL": service.url})
    assert result.exit_code == 0, result.output
    (attempt,) = json.loads(result.stdout)
    assert attempt["result"] == "success"
    assert attempt["phases"][3]["phase"] == "hello"


def test_node_timeline_table_heads_each_attempt_with_its_result(service, client, tmp_path,
                                                                ironsight_cli):
    _, name = inspected(service, client, tmp_path)
    result = CliRunner(env={"COLUMNS": "200"}).invoke(
        ironsight_cli, ["node", "timeline", name, "--attempt", "1"],
        env={"IRONSIGHT_URL": service.url})
    assert result.exit_code == 0, result.output
    assert "1 (success)" in result.stdout
    assert "report_received" in result.stdout


def test_an_attempt_not_kept_is_a_404_naming_it(service, client, tmp_path):
    uuid, _ = inspected(service, client, tmp_path)
    resp = client.get(f"/v1/nodes/{uuid}/inspection/attempts", params={"attempt": "7"})
    assert resp.status_code == 404
    assert "attempt 7" in resp.text


@pytest.mark.parametrize("value", ["0", "x", "-1", "1" * 12])
def test_a_bad_attempt_number_is_a_400_naming_the_parameter(service, client, tmp_path, value):
    spec, _ = machine(tmp_path)
    uuid = enroll(client, spec)
    resp = client.get(f"/v1/nodes/{uuid}/inspection/attempts", params={"attempt": value})
    assert resp.status_code == 400
    assert "attempt" in resp.text


def test_a_node_never_inspected_has_no_attempts(service, client, tmp_path):
    spec, _ = machine(tmp_path)
    uuid = enroll(client, spec)
    resp = client.get(f"/v1/nodes/{uuid}/inspection/attempts")
    assert (resp.status_code, resp.json()) == (200, {"attempts": []})


def test_the_ramdisks_log_is_readable_through_the_api_and_the_cli(service, client, tmp_path,
                                                                  ironsight_cli):
    uuid, name = inspected(service, client, tmp_path)
    resp = client.get(f"/v1/nodes/{uuid}/inspection/logs")
    assert resp.status_code == 200, resp.text
    assert (resp.json()["attempt"], resp.json()["stage"]) == (1, "posting")
    assert "network up: 10.0.0.9" in resp.json()["log"]
    result = CliRunner().invoke(ironsight_cli, ["node", "timeline", name, "--logs"],
                                env={"IRONSIGHT_URL": service.url})
    assert result.exit_code == 0, result.output
    assert "network up: 10.0.0.9" in result.stdout
