"""python-ironicclient's `baremetal inspection rule ...` commands, unmodified, against a running
`ironsight serve` whose bare-metal API forwards `/v1/inspection_rules` to its discoverd (the
rules live there), one test per command; and what the API answers around them (version gate,
links pointing at the bare-metal API, the client's documented quirks put right).

One service serves the module; each test makes and deletes its own rules."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import ServiceProcess
from .test_baremetal_cli import BAREMETAL

ACTIONS = [{"op": "add-trait", "args": {"name": "CUSTOM_A"}},
           {"op": "add-trait", "args": {"name": "CUSTOM_B"}},
           {"op": "add-trait", "args": {"name": "CUSTOM_C"}}]
CONDITIONS = [{"op": "gt", "args": {"values": ["{inventory[memory][physical_mb]}", 16000]}},
              {"op": "is-true", "args": {"value": "{plugin_data[auto_discovered]}"}}]
V96 = {"X-OpenStack-Ironic-API-Version": "1.96"}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("baremetal-rules"))
    svc.configure(discoverd={"service_url": f"{svc.di_url}/v1"}).start()
    try:
        yield svc
    finally:
        svc.stop()


def bm(service: ServiceProcess, *args: str, check: bool = True
       ) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([BAREMETAL, "--os-endpoint", service.url, "--os-auth-type", "none",
                           *args], capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"baremetal {' '.join(args)} failed: {proc.stderr}")
    return proc


def bm_json(service: ServiceProcess, *args: str) -> Any:
    return json.loads(bm(service, *args, "-f", "json").stdout)


def shown(service: ServiceProcess, uuid: str) -> dict[str, Any]:
    return dict(bm_json(service, "inspection", "rule", "show", uuid))


@pytest.fixture
def rule(service: ServiceProcess) -> Iterator[dict[str, Any]]:
    created = bm_json(service, "inspection", "rule", "create", "--actions",
                      json.dumps(ACTIONS), "--conditions", json.dumps(CONDITIONS),
                      "--description", "GPU nodes", "--priority", "100")
    yield dict(created)
    httpx.delete(f"{service.url}/v1/inspection_rules/{created['uuid']}", headers=V96)


def test_create_stores_the_rule_with_a_typed_priority(service: ServiceProcess,
                                                      rule: dict[str, Any]) -> None:
    """`--priority 100` reaches the API as the string "100" (a client quirk): stored as 100."""
    assert (rule["priority"], rule["description"], rule["phase"]) == (100, "GPU nodes", "main")
    assert (rule["actions"], rule["conditions"]) == (ACTIONS, CONDITIONS)


def test_create_from_a_file_and_sensitive(service: ServiceProcess, tmp_path: Path) -> None:
    path = tmp_path / "actions.json"
    path.write_text(json.dumps(ACTIONS[:1]))
    created = bm_json(service, "inspection", "rule", "create", "--actions", str(path),
                      "--sensitive", "true")
    try:
        assert created["sensitive"] is True
        assert created["actions"] is None  # hidden, as Ironic hides a sensitive rule's
    finally:
        bm(service, "inspection", "rule", "delete", created["uuid"])


def test_list_shows_the_default_fields_and_long_every_field(service: ServiceProcess,
                                                            rule: dict[str, Any]) -> None:
    listed = bm_json(service, "inspection", "rule", "list")
    assert {"uuid": rule["uuid"], "description": "GPU nodes"} in listed
    long = bm_json(service, "inspection", "rule", "list", "--long")
    (mine,) = [r for r in long if r["uuid"] == rule["uuid"]]
    assert mine["priority"] == 100 and mine["actions"] == ACTIONS


def test_show_gives_the_whole_rule(service: ServiceProcess, rule: dict[str, Any]) -> None:
    found = shown(service, rule["uuid"])
    assert found["uuid"] == rule["uuid"]
    assert found["actions"] == ACTIONS and found["built_in"] is False


def test_set_changes_fields_and_replaces_lists(service: ServiceProcess,
                                               rule: dict[str, Any]) -> None:
    bm(service, "inspection", "rule", "set", rule["uuid"], "--priority", "7",
       "--description", "renamed", "--actions", json.dumps(ACTIONS[:1]))
    found = shown(service, rule["uuid"])
    assert (found["priority"], found["description"], found["actions"]) == (
        7, "renamed", ACTIONS[:1])


def test_unset_removes_fields_and_the_actions_the_user_named(service: ServiceProcess,
                                                             rule: dict[str, Any]) -> None:
    """`--action K` is sent as `/action/K` (a client quirk): the K-th action as listed."""
    bm(service, "inspection", "rule", "unset", rule["uuid"], "--description",
       "--action", "0", "--action", "2", "--condition", "1")
    found = shown(service, rule["uuid"])
    assert found["description"] is None
    assert found["actions"] == [ACTIONS[1]]
    assert found["conditions"] == CONDITIONS[:1]


def test_delete_removes_the_rule(service: ServiceProcess, rule: dict[str, Any]) -> None:
    bm(service, "inspection", "rule", "delete", rule["uuid"])
    gone = bm(service, "inspection", "rule", "show", rule["uuid"], check=False)
    assert gone.returncode != 0 and "404" in gone.stderr


def test_delete_all_deletes_every_rule(service: ServiceProcess, rule: dict[str, Any]) -> None:
    """The client means `delete all` to delete every rule but sends `DELETE .../all`."""
    bm(service, "inspection", "rule", "delete", "all")
    assert bm_json(service, "inspection", "rule", "list") == []


def test_a_bad_rule_is_refused_naming_the_field(service: ServiceProcess) -> None:
    proc = bm(service, "inspection", "rule", "create", "--actions",
              '[{"op": "no-such-op", "args": {}}]', check=False)
    assert proc.returncode != 0
    assert "400" in proc.stderr and "actions" in proc.stderr


# --- the API around the commands -----------------------------------------------------------------


def test_links_and_location_point_at_the_baremetal_api(service: ServiceProcess) -> None:
    created = httpx.post(f"{service.url}/v1/inspection_rules", headers=V96,
                         json={"actions": ACTIONS[:1]})
    assert created.status_code == 201, created.text
    uuid = created.json()["uuid"]
    try:
        assert created.headers["location"] == f"{service.url}/v1/inspection_rules/{uuid}"
        assert [link["href"] for link in created.json()["links"]] == [
            f"{service.url}/v1/inspection_rules/{uuid}",
            f"{service.url}/inspection_rules/{uuid}"]
    finally:
        httpx.delete(f"{service.url}/v1/inspection_rules/{uuid}", headers=V96)


def test_before_1_96_reads_are_404_and_writes_405(service: ServiceProcess) -> None:
    old = {"X-OpenStack-Ironic-API-Version": "1.95"}
    assert httpx.get(f"{service.url}/v1/inspection_rules", headers=old).status_code == 404
    assert httpx.post(f"{service.url}/v1/inspection_rules", headers=old,
                      json={"actions": ACTIONS}).status_code == 405


def test_an_unknown_rule_is_an_ironic_404(service: ServiceProcess) -> None:
    resp = httpx.get(f"{service.url}/v1/inspection_rules/"
                     "bbb45f41-d4bc-4307-8d1d-32f95ce1e920", headers=V96)
    assert resp.status_code == 404
    assert "faultstring" in json.loads(resp.json()["error_message"])
