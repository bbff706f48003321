"""Secrets at rest and in flight, through `ironsight serve` as an operator runs it with a
key file: distinctive BMC and SSH secrets are driven through real actions (the real
ipmitool against a virtual BMC, an SSH node whose hypervisor refuses), then looked for
everywhere they must not be: the service log, every API answer, error messages, the
database files and the command lines of every process while ipmitool runs. Then the key
commands: create-key, a bad key file at serve, encrypt and rotate-key under a running
service."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncssh
import httpx
import pytest

from ironsight.common.keyfile import read_keys
from ironsight.lab.bmc import BmcServer

from .conftest import ServiceProcess

HEADERS = {"X-OpenStack-Ironic-API-Version": "1.115"}
IPMI_SECRET = "ipmi-Zq8vX2-secret"
SSH_SECRET = "ssh-Lm4pR7-secret"
SSH_KEY = asyncssh.generate_private_key("ssh-ed25519").export_private_key().decode()
# What identifies the key in any text: a line of its base64 body.
SSH_KEY_MARK = SSH_KEY.splitlines()[2]
SECRETS = (IPMI_SECRET, SSH_SECRET, SSH_KEY_MARK)


def ironsight(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ironsight.cli", *args], capture_output=True,
                          text=True, timeout=120)


def closed_tcp_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class CmdlineSampler:
    """Every process's command line, read from /proc every few milliseconds."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    try:
                        with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                            self.seen.add(fh.read().replace(b"\0", b" ").decode(errors="replace"))
                    except OSError:
                        pass
            time.sleep(0.002)

    def __enter__(self) -> CmdlineSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture(scope="module")
def bmc() -> Iterator[Any]:
    with BmcServer.in_memory(1, "admin", IPMI_SECRET) as server:
        yield server.bmcs[0]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    state = tmp_path_factory.mktemp("secrets")
    key = state / "secrets.key"
    assert ironsight("secrets", "create-key", "--key-file", str(key)).returncode == 0
    svc = ServiceProcess(state, f"[DEFAULT]\nsecrets_key_file = {key}\n"
                                "[ipmi]\ncommand_timeout = 3\nretries = 0\n"
                                "[ssh]\nconnect_timeout = 2\n").start()
    try:
        yield svc
    finally:
        svc.stop()


def api(svc: ServiceProcess, method: str, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, f"{svc.url}{path}", headers=HEADERS, timeout=30, **kwargs)


def settle(svc: ServiceProcess, uuid: str, **want: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        doc: dict[str, Any] = api(svc, "GET", f"/v1/nodes/{uuid}").json()
        if not doc["target_power_state"] and not doc["target_provision_state"] and all(
                doc[k] == v for k, v in want.items()):
            return doc
        assert time.monotonic() < deadline, doc
        time.sleep(0.05)


def test_secrets_appear_nowhere_but_where_drivers_use_them(service: ServiceProcess,
                                                           bmc: Any) -> None:
    answers: list[str] = []

    def call(method: str, path: str, **kwargs: Any) -> httpx.Response:
        resp = api(service, method, path, **kwargs)
        answers.append(resp.text)
        return resp

    ipmi_node = call("POST", "/v1/nodes", json={
        "driver": "pxe_ipmitool", "name": "secret-ipmi", "driver_info": {
            "ipmi_address": "127.0.0.1", "ipmi_port": bmc.port, "ipmi_username": "admin",
            "ipmi_password": IPMI_SECRET}}).json()["uuid"]
    ssh_node = call("POST", "/v1/nodes", json={
        "driver": "pxe_ssh", "name": "secret-ssh", "driver_info": {
            "ssh_address": "127.0.0.1", "ssh_port": closed_tcp_port(), "ssh_username": "me",
            "ssh_virt_type": "virsh", "ssh_password": SSH_SECRET,
            "ssh_key_contents": SSH_KEY}}).json()["uuid"]
    call("POST", "/v1/ports", json={"node_uuid": ipmi_node, "address": "52:54:00:aa:bb:01"})
    with CmdlineSampler() as argv:
        call("PUT", f"/v1/nodes/{ipmi_node}/states/provision", json={"target": "manage"})
        settle(service, ipmi_node, provision_state="manageable")
        for target in ("power on", "power off"):
            call("PUT", f"/v1/nodes/{ipmi_node}/states/power", json={"target": target})
            settle(service, ipmi_node, power_state=target)
        call("PUT", f"/v1/nodes/{ipmi_node}/management/boot_device",
             json={"boot_device": "pxe"})
        call("GET", f"/v1/nodes/{ipmi_node}/management/boot_device")
        call("PUT", f"/v1/nodes/{ssh_node}/states/provision", json={"target": "manage"})
        settle(service, ssh_node, provision_state="enroll")  # the hypervisor refuses
        call("PUT", f"/v1/nodes/{ssh_node}/states/power", json={"target": "power on"})
        settle(service, ssh_node)
    assert any("ipmitool" in line for line in argv.seen), "no ipmitool run was sampled"
    for node in (ipmi_node, ssh_node):
        for path in ("", "/history", "/validate", "/states", "/ports"):
            call("GET", f"/v1/nodes/{node}{path}")
    for path in ("/v1/nodes", "/v1/nodes/detail", "/v1/ports/detail",
                 "/v1/drivers/pxe_ipmitool/properties"):
        call("GET", path)
    answers.append(httpx.get(f"{service.di_url}/v1/introspection", timeout=10).text)
    ssh_doc = api(service, "GET", f"/v1/nodes/{ssh_node}").json()
    assert ssh_doc["last_error"]  # an error message to look into
    answers.append(ssh_doc["last_error"])
    time.sleep(1)  # the last log lines and the WAL written
    places = {"API answers": "\n".join(answers), "service log": service.log.read_text(),
              "process command lines": "\n".join(argv.seen)}
    for path in service.state_dir.glob("*.sqlite*"):
        places[path.name] = path.read_bytes().decode("latin-1")
    assert any("fernet:" in text for name, text in places.items() if "sqlite" in name)
    for secret in SECRETS:
        for where, text in places.items():
            assert secret not in text, f"a secret shows in {where}"


def test_serve_with_a_key_file_that_cannot_be_used_says_so_in_one_line(tmp_path: Path) -> None:
    conf = tmp_path / "bad.conf"
    missing = tmp_path / "missing.key"
    conf.write_text(f"[DEFAULT]\nstate_dir = {tmp_path}\nsecrets_key_file = {missing}\n")
    proc = ironsight("serve", "--config-file", str(conf))
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert lines[-1].startswith("Error: [DEFAULT] secrets_key_file:") and len(lines) == 1
    assert str(missing) in lines[0] and "Traceback" not in proc.stderr


def test_create_key_refuses_to_replace_a_key_file(tmp_path: Path) -> None:
    key = tmp_path / "k"
    assert ironsight("secrets", "create-key", "--key-file", str(key)).returncode == 0
    before = key.read_bytes()
    proc = ironsight("secrets", "create-key", "--key-file", str(key))
    assert proc.returncode != 0 and "exists already" in proc.stderr
    assert key.read_bytes() == before


def test_rotate_key_under_a_running_service_keeps_every_node_working(
        service: ServiceProcess, bmc: Any) -> None:
    node = api(service, "POST", "/v1/nodes", json={
        "driver": "pxe_ipmitool", "name": "rotated", "driver_info": {
            "ipmi_address": "127.0.0.1", "ipmi_port": bmc.port, "ipmi_username": "admin",
            "ipmi_password": IPMI_SECRET}}).json()["uuid"]
    key = service.state_dir / "secrets.key"
    old = read_keys(key)
    proc = ironsight("secrets", "rotate-key", "--config-file", str(service.conf))
    assert proc.returncode == 0, proc.stderr
    assert "old keys removed" in proc.stdout
    new = read_keys(key)
    assert len(new) == 1 and new[0] not in old
    api(service, "PUT", f"/v1/nodes/{node}/states/power", json={"target": "power on"})
    doc = settle(service, node, power_state="power on")
    assert doc["last_error"] is None
    again = ironsight("secrets", "encrypt", "--config-file", str(service.conf))
    assert again.returncode == 0 and again.stdout.startswith("0 of ")  # nothing left to do
