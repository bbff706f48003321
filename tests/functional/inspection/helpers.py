"""Helpers for the end-to-end inspection tests: real `ironsight serve` processes, machines
described by trees that the real agent reads, and bounded waits.

Everything here is synchronous (httpx.Client, subprocess): the services run in their own
processes, the test only drives them over HTTP as an operator and a ramdisk would.
"""

from __future__ import annotations

import configparser
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from ironsight.lab.machines import MachineSpec, build_tree

from ..conftest import ServiceProcess

H = {"X-OpenStack-Ironic-API-Version": "1.115"}
GIB = 1024**3

# What every test in this folder runs with (the brief's settings).
BASE_CONF = """
[discoverd]
enabled = true
[processing]
add_ports = all
[introspection]
ironic_retry_interval = 0.1
# the fake ramdisks here boot through no PXE side: they have no callback token
allow_tokenless_reports = true
"""

_SEQ = itertools.count(1)


# --- services ---------------------------------------------------------------------------


class Service(ServiceProcess):
    """`ironsight serve [--only baremetal|discoverd]`, with BASE_CONF under `extra_conf`.

    Both services in one process unless `only`; then only the API of that service is waited
    for at start. `configure()` rewrites options before (re)starting, so that two processes
    can be pointed at each other once both have their ports."""

    def __init__(self, state_dir: Path, extra_conf: str = "", *, only: str | None = None,
                 service_url: bool = True) -> None:
        super().__init__(state_dir, BASE_CONF)
        self.only = only
        extra = configparser.ConfigParser(default_section="\x00none", interpolation=None)
        extra.read_string(extra_conf)
        self.configure(**{name: dict(extra[name]) for name in extra.sections()})
        if service_url and only is None:
            self.configure(discoverd={"service_url": f"{self.di_url}/v1"})

    def _ready_urls(self) -> list[str]:
        if self.only == "baremetal":
            return [self.url]
        if self.only == "discoverd":
            return [self.di_url]
        return [self.url, self.di_url]

    def start(self, timeout: float = 30) -> Service:
        cmd = [sys.executable, "-m", "ironsight.cli", "serve", "--config-file", str(self.conf)]
        if self.only:
            cmd += ["--only", self.only]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         env={**os.environ})
        deadline = time.monotonic() + timeout
        pending = self._ready_urls()
        while pending:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ironsight serve exited:\n{self.log.read_text()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"ironsight serve did not answer:\n{self.log.read_text()}")
            try:
                httpx.get(f"{pending[0]}/v1", timeout=1, verify=self.verify)
                pending.pop(0)
            except httpx.TransportError:
                time.sleep(0.05)
        return self

    def client(self) -> httpx.Client:
        """A client of the bare-metal API (latest microversion)."""
        return httpx.Client(base_url=self.url, headers=H, timeout=15, verify=self.verify,
                            auth=self.auth)

    def di_client(self) -> httpx.Client:
        return httpx.Client(base_url=self.di_url, timeout=15, verify=self.verify,
                            auth=self.auth)


# --- machines -----------------------------------------------------------------------------


def mac(seq: int, nic: int) -> str:
    return f"52:54:00:{seq >> 8 & 0xff:02x}:{seq & 0xff:02x}:{nic:02x}"


def machine(where: Path, *, nics: int = 2, **spec: Any) -> tuple[MachineSpec, Path]:
    """A machine with unique MACs (the PXE NIC first, with an IPv4 address) and its tree."""
    seq = next(_SEQ)
    fields: dict[str, Any] = {
        "name": f"insp-{seq}", "cpus": 4, "memory_mb": 8192, "disks_gb": (2, 40, 120),
        "macs": tuple(mac(seq, i) for i in range(nics)),
        "ipv4": (f"10.20.{seq >> 8 & 0xff}.{seq & 0xff}",)}
    fields.update(spec)
    built = MachineSpec(**fields)
    return built, build_tree(where / built.name, built)


def expected_local_gb(spec: MachineSpec) -> int:
    """The agent's root disk is the smallest of at least 4 GiB; local_gb is one GiB less."""
    return min(size for size in spec.disks_gb if size >= 4) - 1


def enroll(client: httpx.Client, spec: MachineSpec, *, driver: str = "fake",
           driver_info: dict[str, Any] | None = None,
           properties: dict[str, Any] | None = None, pxe_port: bool = True) -> str:
    """Create the node (named after the machine) with its PXE port (unless not `pxe_port`),
    manage it; its UUID."""
    body: dict[str, Any] = {"driver": driver, "name": spec.name}
    if driver_info:
        body["driver_info"] = driver_info
    if properties:
        body["properties"] = properties
    resp = client.post("/v1/nodes", json=body)
    assert resp.status_code == 201, resp.text
    uuid = str(resp.json()["uuid"])
    if pxe_port:
        resp = client.post("/v1/ports", json={"address": spec.pxe_mac, "node_uuid": uuid})
        assert resp.status_code == 201, resp.text
    resp = client.put(f"/v1/nodes/{uuid}/states/provision", json={"target": "manage"})
    assert resp.status_code == 202, resp.text
    # verification talks to the BMC (ipmitool's own retries): room for a stall of the machine
    wait_node(client, uuid, provision="manageable", timeout=30)
    return uuid


# --- driving and observing ----------------------------------------------------------------


def node(client: httpx.Client, ident: str) -> dict[str, Any]:
    resp = client.get(f"/v1/nodes/{ident}")
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


def ports(client: httpx.Client, ident: str) -> dict[str, bool]:
    """The node's ports: MAC -> pxe_enabled."""
    resp = client.get("/v1/ports/detail", params={"node": ident})
    assert resp.status_code == 200, resp.text
    return {p["address"]: p["pxe_enabled"] for p in resp.json()["ports"]}


def snapshot(client: httpx.Client, uuid: str) -> dict[str, Any]:
    """What an action that should change nothing must leave as it was."""
    doc = node(client, uuid)
    keys = ("provision_state", "target_provision_state", "power_state", "last_error",
            "properties", "reservation", "inspection_finished_at")
    return {**{k: doc[k] for k in keys}, "ports": ports(client, uuid)}


def history(client: httpx.Client, ident: str) -> list[dict[str, Any]]:
    resp = client.get(f"/v1/nodes/{ident}/history")
    assert resp.status_code == 200, resp.text
    return list(resp.json()["history"])


def di_status(svc: Service, uuid: str) -> dict[str, Any]:
    resp = httpx.get(f"{svc.di_url}/v1/introspection/{uuid}", timeout=10, verify=svc.verify,
                     auth=svc.auth)
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


def provision(client: httpx.Client, ident: str, target: str) -> httpx.Response:
    return client.put(f"/v1/nodes/{ident}/states/provision", json={"target": target})


def inspect(client: httpx.Client, ident: str) -> None:
    resp = provision(client, ident, "inspect")
    assert resp.status_code == 202, resp.text


def wait_until(check: Callable[[], Any], what: str, timeout: float = 10,
               interval: float = 0.02) -> Any:
    """Call `check` until it returns something truthy (returned), at most `timeout` s."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def wait_node(client: httpx.Client, ident: str, *, provision: str | None = None,
              power: str | None = None, timeout: float = 10) -> dict[str, Any]:
    """Poll until the node settles (no target power state; no target provision state unless
    it waits in `inspect wait`) in the wanted provision and power states."""
    last: dict[str, Any] = {}

    def settled() -> dict[str, Any] | None:
        nonlocal last
        last = node(client, ident)
        ok = (not last["target_provision_state"] or last["provision_state"] == "inspect wait") \
            and not last["target_power_state"] \
            and provision in (None, last["provision_state"]) \
            and power in (None, last["power_state"])
        return last if ok else None

    try:
        return dict(wait_until(settled, f"node {ident}: {provision} / {power}", timeout))
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last seen: {_brief(last)}") from None


def _brief(doc: dict[str, Any]) -> dict[str, Any]:
    keys = ("provision_state", "target_provision_state", "power_state", "target_power_state",
            "last_error", "reservation")
    return {k: doc.get(k) for k in keys}


def wait_ramdisk_booted(svc: Service, client: httpx.Client, uuid: str,
                        timeout: float = 10) -> dict[str, Any]:
    """Wait until discoverd has booted the node into the (simulated) ramdisk: the node is
    in `inspect wait` and powered on, and discoverd waits for the callback."""

    def booted() -> dict[str, Any] | None:
        doc = node(client, uuid)
        if doc["provision_state"] == "inspect wait" and doc["power_state"] == "power on" \
                and not doc["target_power_state"] \
                and di_status(svc, uuid)["state"] == "waiting":
            return doc
        return None

    return dict(wait_until(booted, f"node {uuid} booted into the ramdisk", timeout))


def wait_di_state(svc: Service, uuid: str, *states: str, timeout: float = 10
                  ) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        doc = di_status(svc, uuid)
        return doc if doc["state"] in states else None

    return dict(wait_until(reached, f"discoverd state {states} for {uuid}", timeout))


# --- the ramdisk (the real agent on a machine tree) -----------------------------------------


def run_agent(tree: Path, callback_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the real agent against the machine tree, posting to `callback_url`."""
    return subprocess.run(
        [sys.executable, "-m", "ironsight.agent", "--root", str(tree), "--callback-url",
         callback_url, "--backoff", "0.2", *args],
        capture_output=True, text=True, timeout=60, check=False)


def agent_document(tree: Path) -> dict[str, Any]:
    """The document the real agent builds for the machine (`--print`)."""
    proc = subprocess.run([sys.executable, "-m", "ironsight.agent", "--root", str(tree),
                           "--print"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def accepted_reply(proc: subprocess.CompletedProcess[str]) -> tuple[int, Any]:
    """(HTTP status, JSON body) of the agent's `callback accepted by URL: HTTP S BODY` line."""
    assert proc.returncode == 0, f"agent failed ({proc.returncode}): {proc.stderr}"
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("callback accepted"))
    _, _, rest = line.partition(": HTTP ")
    status, _, body = rest.partition(" ")
    return int(status), json.loads(body)


class Ramdisk(threading.Thread):
    """Plays a node's discovery ramdisk in the background: once discoverd has booted it,
    the real agent posts the machine's report. `error` holds what went wrong, if anything."""

    def __init__(self, svc: Service, uuid: str, tree: Path, timeout: float = 30) -> None:
        super().__init__(daemon=True)
        self.svc, self.uuid, self.tree, self.timeout = svc, uuid, tree, timeout
        self.result: subprocess.CompletedProcess[str] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with self.svc.client() as client:
                wait_ramdisk_booted(self.svc, client, self.uuid, self.timeout)
            self.result = run_agent(self.tree, f"{self.svc.di_url}/v1/continue")
        except BaseException as exc:
            self.error = exc


def issued_token(svc: Service, uuid: str) -> str:
    """The callback token the node's boot script would carry, issued in the service's own
    discoverd database (SQLite in its state directory) as the script issues it: only a
    report with it may end the introspection."""
    import asyncio

    from ironsight.common.db import Database
    from ironsight.discoverd.node_cache import NodeCache

    async def issue() -> str | None:
        db = Database(f"sqlite:///{svc.state_dir / 'discoverd.sqlite'}")
        try:
            return await NodeCache(db).issue_token(uuid)
        finally:
            await db.close()

    token = asyncio.run(issue())
    assert token is not None, "the introspection does not wait for its ramdisk"
    return token


def wait_step(client: httpx.Client, uuid: str, phase: str, timeout: float = 5
              ) -> list[dict[str, Any]]:
    """The node's inspection attempts once the latest has `phase` (the conductor sends its
    steps a fraction of a second after taking them)."""
    def seen() -> list[dict[str, Any]] | None:
        found = client.get(f"/v1/nodes/{uuid}/inspection/attempts").json()["attempts"]
        return found if found and any(p["phase"] == phase for p in found[-1]["phases"]) \
            else None

    return list(wait_until(seen, f"step {phase} of node {uuid}", timeout))
