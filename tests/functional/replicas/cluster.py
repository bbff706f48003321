"""A scale-out deployment as the guide draws it (docs/scale-out.md): N replicas of each
service as separate `ironsight serve --only ...` processes on one PostgreSQL database, behind
HAProxy running docs/examples/haproxy.cfg itself. The bare-metal replicas reach discoverd,
and discoverd the bare-metal API, through the load balancer, as the tests' clients do.

The "ramdisks" are reports posted to discoverd through the load balancer and retried like
the real agent retries them; nodes are `fake`, so that what is tested is the services'
survival of kills and restarts, not the hardware's speed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from ..conftest import free_tcp_port as free_port

ROOT = Path(__file__).resolve().parents[3]
HAPROXY_CFG = ROOT / "docs" / "examples" / "haproxy.cfg"
BM = {"X-OpenStack-Ironic-API-Version": "1.115"}


def until(condition: Callable[[], Any], timeout: float, what: str,
          interval: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(interval)


def mac(i: int, nic: int) -> str:
    return f"02:5e:{nic:02x}:{i >> 8 & 255:02x}:{i & 255:02x}:07"


def report(i: int) -> dict[str, Any]:
    """An ironic-python-agent report of node `i` (two NICs; its ports have their MACs)."""
    return {"inventory": {
        "interfaces": [{"name": "eno1", "mac_address": mac(i, 0), "ipv4_address": "10.0.0.9"},
                       {"name": "eno2", "mac_address": mac(i, 1), "ipv4_address": None}],
        "cpu": {"count": 8, "architecture": "x86_64", "flags": []},
        "memory": {"physical_mb": 16384},
        "disks": [{"name": "/dev/sda", "size": 100 * 1024**3}],
        "boot": {"current_boot_mode": "bios", "pxe_interface": mac(i, 0)}},
        "root_disk": {"name": "/dev/sda", "size": 100 * 1024**3}}


class Replica:
    def __init__(self, kind: str, index: int, directory: Path, conf: str) -> None:
        self.kind, self.index, self.port = kind, index, free_port()
        self.name = f"{kind}-{index}"
        directory.mkdir(parents=True)
        self.conf = directory / "ironsight.conf"
        port = f"[api]\nport = {self.port}\n" if kind == "baremetal" else \
            f"[introspection]\nport = {self.port}\n"
        conf = conf.replace("[introspection]\n", port) if "[introspection]" in conf else \
            port + conf
        self.conf.write_text(f"[DEFAULT]\nstate_dir = {directory}\n" + conf)
        self.log = directory / "serve.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> Replica:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ironsight.cli", "serve", "--only", self.kind,
                 "--config-file", str(self.conf)], stdout=out, stderr=subprocess.STDOUT)
        until(self.answers, 30, f"{self.name} answers")
        return self

    def answers(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"{self.name} exited:\n{self.log.read_text()[-3000:]}")
        try:
            return httpx.get(f"http://{self.address}/v1", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM, as a rolling restart sends: the replica finishes or hands over its work."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Cluster:
    def __init__(self, directory: Path, database: str, replicas: int = 3) -> None:
        self.directory = directory
        self.lb_bm, self.lb_di = free_port(), free_port()
        self.bm_url, self.di_url = f"http://127.0.0.1:{self.lb_bm}", \
            f"http://127.0.0.1:{self.lb_di}"
        self.baremetal = [Replica("baremetal", i, directory / f"bm{i}", (
            f"[database]\nconnection = {database}\n"
            "[conductor]\nheartbeat_interval = 0.5\nheartbeat_timeout = 3\n"
            "sync_power_state_interval = 0\ncheck_provision_state_interval = 1\n"
            f"[discoverd]\nenabled = true\nservice_url = {self.di_url}/v1\n"
            "status_check_period = 0.5\nstart_grace_period = 3\n"))
            for i in range(1, replicas + 1)]
        self.discoverd = [Replica("discoverd", i, directory / f"di{i}", (
            f"[introspection]\nconnection = {database}\nironic_url = {self.bm_url}\n"
            "ironic_retry_interval = 0.2\nheartbeat_interval = 0.5\nheartbeat_timeout = 3\n"
            "allow_tokenless_reports = true\n"  # fake ramdisks: no PXE boot, no token
            "[processing]\nadd_ports = all\n"))
            for i in range(1, replicas + 1)]
        self.haproxy: subprocess.Popen[bytes] | None = None

    @property
    def replicas(self) -> list[Replica]:
        return [*self.baremetal, *self.discoverd]

    def start(self) -> Cluster:
        for replica in self.replicas:
            replica.start()
        env = {**os.environ, "IRONSIGHT_LB_BAREMETAL": f"127.0.0.1:{self.lb_bm}",
               "IRONSIGHT_LB_DISCOVERD": f"127.0.0.1:{self.lb_di}"}
        for replica in self.replicas:
            env[f"IRONSIGHT_{replica.kind.upper()}_{replica.index}"] = replica.address
        self.haproxy = subprocess.Popen(["haproxy", "-db", "-f", str(HAPROXY_CFG)], env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until(lambda: self._through_lb("GET", f"{self.bm_url}/v1") is not None, 15,
              "HAProxy answers")
        return self

    def stop(self) -> None:
        if self.haproxy is not None and self.haproxy.poll() is None:
            self.haproxy.terminate()
            self.haproxy.wait(10)
        for replica in self.replicas:
            replica.stop()

    # --- driving it as an operator and as the ramdisks -------------------------------------

    def _through_lb(self, method: str, url: str, body: Any = None) -> httpx.Response | None:
        try:
            return httpx.request(method, url, json=body, headers=BM, timeout=30)
        except httpx.TransportError:
            return None

    def call(self, method: str, path: str, body: Any = None, *, base: str | None = None,
             ok: tuple[int, ...] = (200, 201, 202, 204), attempts: int = 20) -> Any:
        """One request through the load balancer, retried as a client would on 5xx and on
        a connection the balancer could not complete."""
        url = (base or self.bm_url) + path
        resp = None
        for _ in range(attempts):
            resp = self._through_lb(method, url, body)
            if resp is not None and resp.status_code < 500 and resp.status_code != 409:
                break
            time.sleep(0.5)
        assert resp is not None and resp.status_code in ok, (method, path, resp and resp.text)
        return resp.json() if resp.content else None

    def enroll(self, count: int) -> list[str]:
        uuids = []
        for i in range(count):
            node = self.call("POST", "/v1/nodes", {"driver": "fake", "name": f"rep-{i}"})
            for nic in (0, 1):
                self.call("POST", "/v1/ports", {"node_uuid": node["uuid"],
                                                "address": mac(i, nic)})
            uuids.append(node["uuid"])
        for uuid in uuids:
            self.call("PUT", f"/v1/nodes/{uuid}/states/provision", {"target": "manage"})
        self.wait_provision(uuids, "manageable", 60)
        return uuids

    def inspect(self, uuids: list[str]) -> None:
        for uuid in uuids:
            self.call("PUT", f"/v1/nodes/{uuid}/states/provision", {"target": "inspect"})

    def waiting(self, uuids: list[str]) -> set[str]:
        """The nodes discoverd waits for a report of."""
        found: set[str] = set()
        for first in range(0, len(uuids), 100):
            body = self._through_lb(
                "GET", f"{self.di_url}/v1/introspection?uuid="
                       f"{','.join(uuids[first:first + 100])}")
            if body is not None and body.status_code == 200:
                found |= {s["uuid"] for s in body.json()["introspection"]
                          if s["state"] == "waiting"}
        return found

    def post_report(self, i: int) -> None:
        """As the agent does: retried while no discoverd answers, until one takes it."""
        for _ in range(60):
            resp = self._through_lb("POST", f"{self.di_url}/v1/continue", report(i))
            if resp is not None and resp.status_code < 500:
                assert resp.status_code == 200, resp.text
                return
            time.sleep(0.5)
        raise AssertionError(f"no discoverd took the report of node {i}")

    def nodes(self) -> dict[str, dict[str, Any]]:
        body = self.call("GET", "/v1/nodes?fields=uuid,provision_state,target_provision_state,"
                                "last_error,properties,power_state&limit=1000")
        return {n["uuid"]: n for n in body["nodes"]}

    def wait_provision(self, uuids: list[str], state: str, timeout: float) -> None:
        def settled() -> bool:
            nodes = self.nodes()
            return all(nodes[u]["provision_state"] == state
                       and not nodes[u]["target_provision_state"] for u in uuids)
        try:
            until(settled, timeout, f"every node {state}", interval=0.5)
        except AssertionError:
            nodes = self.nodes()
            left = {u: (nodes[u]["provision_state"], nodes[u]["last_error"]) for u in uuids
                    if nodes[u]["provision_state"] != state}
            raise AssertionError(f"not {state} after {timeout} s: {left}") from None
