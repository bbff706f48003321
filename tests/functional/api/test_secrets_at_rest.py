"""Secret driver_info fields encrypted at rest ([DEFAULT] secrets_key_file), on SQLite and
PostgreSQL: the database never holds the plain value, the real IPMI drivers get it, a value
that no key opens fails the node's actions with a 4xx naming the field, and nodes enrolled
before the key was configured are encrypted by a pass over the database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from ironsight.baremetal.conductor.rekey import reseal_all
from ironsight.baremetal.secrets import DriverSecrets
from ironsight.common.keyfile import KeyFile, create_key_file, new_key, write_keys
from ironsight.lab.bmc import BmcServer

from .helpers import create_node, fault, manage, wait_for

PASSWORD = "enc-pa55-7d1e"


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "secrets.key"
    create_key_file(path)
    return path


@pytest.fixture
def conf_overrides(key_file: Path) -> dict[str, dict[str, str]]:
    return {"DEFAULT": {"secrets_key_file": str(key_file)},
            "ipmi": {"command_timeout": "2", "retries": "0"},
            "conductor": {"power_state_change_timeout": "10"}}


@pytest.fixture
def bmc() -> Any:
    with BmcServer.in_memory(1, "admin", PASSWORD) as server:
        yield server.bmcs[0]


def ipmi(port: int) -> dict[str, Any]:
    return {"ipmi_address": "127.0.0.1", "ipmi_port": port, "ipmi_username": "admin",
            "ipmi_password": PASSWORD}


def stored_info(db_url: str, uuid: str) -> str:
    """driver_info as the database holds it, as text."""
    engine = create_engine(db_url.replace("+asyncpg", "+psycopg"))
    try:
        with engine.connect() as conn:
            return str(conn.execute(text(
                "SELECT CAST(driver_info AS TEXT) FROM bm_nodes WHERE uuid = :u"),
                                    {"u": uuid}).scalar())
    finally:
        engine.dispose()


async def test_the_database_holds_a_token_and_the_driver_the_password(
        api: httpx.AsyncClient, bmc: Any, db_url: str) -> None:
    node = await create_node(api, driver="pxe_ipmitool", driver_info=ipmi(bmc.port))
    stored = stored_info(db_url, node["uuid"])
    assert "fernet:" in stored and PASSWORD not in stored
    doc = await manage(api, node["uuid"])  # verification reads the BMC with the password
    assert doc["power_state"] == "power off"
    assert doc["driver_info"]["ipmi_password"] == "******"


async def test_a_patch_of_another_field_keeps_the_stored_token(
        api: httpx.AsyncClient, bmc: Any, db_url: str) -> None:
    node = await create_node(api, driver="pxe_ipmitool", driver_info=ipmi(bmc.port))
    before = stored_info(db_url, node["uuid"])
    resp = await api.patch(f"/v1/nodes/{node['uuid']}", json=[
        {"op": "add", "path": "/driver_info/ipmi_priv_level", "value": "ADMINISTRATOR"}])
    assert resp.status_code == 200, resp.text
    after = stored_info(db_url, node["uuid"])
    token = json.loads(before)["ipmi_password"]
    assert token.startswith("fernet:")
    assert json.loads(after)["ipmi_password"] == token


async def test_a_password_set_by_patch_is_stored_encrypted(
        api: httpx.AsyncClient, bmc: Any, db_url: str) -> None:
    node = await create_node(api, driver="pxe_ipmitool",
                             driver_info={**ipmi(bmc.port), "ipmi_password": "wrong"})
    resp = await api.patch(f"/v1/nodes/{node['uuid']}", json=[
        {"op": "replace", "path": "/driver_info/ipmi_password", "value": PASSWORD}])
    assert resp.status_code == 200, resp.text
    assert PASSWORD not in stored_info(db_url, node["uuid"])
    await api.put(f"/v1/nodes/{node['uuid']}/states/power", json={"target": "power on"})
    await wait_for(api, node["uuid"], power="power on")
    assert bmc.machine.is_powered_on()


async def test_a_value_no_key_opens_fails_actions_naming_node_and_field(
        api: httpx.AsyncClient, bmc: Any, key_file: Path) -> None:
    node = await create_node(api, driver="pxe_ipmitool", driver_info=ipmi(bmc.port))
    write_keys(key_file, [new_key()])  # the key that encrypted it is gone
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/power", json={"target": "power on"})
    assert resp.status_code == 400
    message = fault(resp)
    assert f"Node {node['uuid']}: driver_info field 'ipmi_password'" in message
    assert PASSWORD not in message and "fernet:" not in message
    await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "manage"})
    doc = await wait_for(api, node["uuid"], provision="enroll")
    assert "driver_info field 'ipmi_password'" in doc["last_error"]
    validation = (await api.get(f"/v1/nodes/{node['uuid']}/validate")).json()
    assert validation["power"]["result"] is False
    assert not bmc.machine.is_powered_on()


async def test_nodes_enrolled_before_the_key_are_encrypted_by_a_pass(
        service: Any, api: httpx.AsyncClient, bmc: Any, db_url: str, key_file: Path) -> None:
    plain = service.conductor.secrets.keys
    service.conductor.secrets.keys = None  # as a service without secrets_key_file stores
    try:
        node = await create_node(api, driver="pxe_ipmitool", driver_info=ipmi(bmc.port))
    finally:
        service.conductor.secrets.keys = plain
    assert PASSWORD in stored_info(db_url, node["uuid"])
    done = await reseal_all(service.db, DriverSecrets(KeyFile(key_file), {"ipmi_password"}))
    assert done.rewritten >= 1 and not done.locked
    assert PASSWORD not in stored_info(db_url, node["uuid"])
    assert (await manage(api, node["uuid"]))["power_state"] == "power off"


async def test_a_rotation_pass_waits_for_a_locked_node(
        service: Any, api: httpx.AsyncClient, bmc: Any, key_file: Path) -> None:
    node = await create_node(api, driver="pxe_ipmitool", driver_info=ipmi(bmc.port))
    write_keys(key_file, [new_key(), *KeyFile(key_file).keys])
    task = await service.conductor.tasks.acquire(node["uuid"])
    done = await reseal_all(service.db, DriverSecrets(KeyFile(key_file)), patience=0.3,
                            interval=0.1)
    assert done.locked == [node["uuid"]]
    await task.release()
    done = await reseal_all(service.db, DriverSecrets(KeyFile(key_file)))
    assert (done.rewritten, done.locked) == (1, [])
