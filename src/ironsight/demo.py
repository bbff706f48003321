"""`make demo`: the bare-metal service on embedded defaults, driven as an operator would.

It starts `ironsight serve` with no config file (a fresh state directory, so the demo never
touches an operator's own), one virtual BMC over real IPMI/UDP, then enrolls three `fake`
nodes and one `pxe_ipmitool` node, manages them, powers them on and prints their table and the
history of the IPMI node. Everything it started is stopped at the end.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from ironsight.lab.bmc import BmcServer

URL = "http://127.0.0.1:6385"
HEADERS = {"X-OpenStack-Ironic-API-Version": "1.115"}
console = Console(width=None if sys.stdout.isatty() else 140)


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _start_service(state_dir: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "IRONSIGHT_STATE_DIR": str(state_dir)}
    log = open(state_dir / "service.log", "wb")  # noqa: SIM115 - lives as long as the process
    proc = subprocess.Popen([sys.executable, "-m", "ironsight.cli", "serve"], env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"ironsight serve exited early; see {state_dir / 'service.log'}:\n"
                             + (state_dir / "service.log").read_text()[-2000:])
        try:
            httpx.get(f"{URL}/v1", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("ironsight serve did not answer within 30 s")


def _call(client: httpx.Client, method: str, path: str, body: Any = None) -> Any:
    resp = client.request(method, path, json=body)
    if resp.status_code >= 400:
        raise SystemExit(f"{method} {path} failed: HTTP {resp.status_code} {resp.text}")
    return resp.json() if resp.content else None


def _wait(client: httpx.Client, uuids: list[str], what: str, done: Any,
          timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    with console.status(f"waiting: {what}"):
        while True:
            docs = [_call(client, "GET", f"/v1/nodes/{u}") for u in uuids]
            if all(done(d) for d in docs):
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}: "
                                 + "; ".join(f"{d['name']}: {d['last_error']}" for d in docs))
            time.sleep(0.2)


def _table(client: httpx.Client) -> Table:
    table = Table(title="Nodes")
    for col in ("UUID", "Name", "Driver", "Provision state", "Power state", "Last error"):
        table.add_column(col, no_wrap=col == "UUID")
    fields = "uuid,name,driver,provision_state,power_state,last_error"
    for doc in _call(client, "GET", f"/v1/nodes?fields={fields}")["nodes"]:
        table.add_row(doc["uuid"], doc["name"], doc["driver"], doc["provision_state"],
                      doc["power_state"], doc["last_error"] or "")
    return table


def run() -> None:
    if not _port_free(6385):
        raise SystemExit("port 6385 is in use: stop the service running there (the demo "
                         "starts its own on the embedded defaults)")
    state_dir = Path(tempfile.mkdtemp(prefix="ironsight-demo-"))
    password = secrets.token_urlsafe(12)
    console.print(f"[bold]ironsight demo[/bold]: state in {state_dir}")
    bmc_server = BmcServer.in_memory(1, "admin", password).start()
    bmc = bmc_server.bmcs[0]
    proc = _start_service(state_dir)
    try:
        with httpx.Client(base_url=URL, headers=HEADERS, timeout=30) as client:
            console.print(f"bare-metal API up at {URL}; virtual BMC on udp/127.0.0.1:{bmc.port}")
            uuids = [_call(client, "POST", "/v1/nodes", {"driver": "fake", "name": f"fake-{i}"})
                     ["uuid"] for i in range(3)]
            ipmi = _call(client, "POST", "/v1/nodes", {
                "driver": "pxe_ipmitool", "name": "ipmi-0",
                "driver_info": {"ipmi_address": "127.0.0.1", "ipmi_port": bmc.port,
                                "ipmi_username": "admin", "ipmi_password": password}})
            uuids.append(ipmi["uuid"])
            _call(client, "POST", "/v1/ports", {"address": "52:54:00:12:34:56",
                                                "node_uuid": ipmi["uuid"]})
            console.print("enrolled 3 fake nodes and 1 pxe_ipmitool node; managing them")
            for uuid in uuids:
                _call(client, "PUT", f"/v1/nodes/{uuid}/states/provision", {"target": "manage"})
            _wait(client, uuids, "verification (power state read through each driver)",
                  lambda d: d["provision_state"] == "manageable")
            for uuid in uuids:
                _call(client, "PUT", f"/v1/nodes/{uuid}/states/power", {"target": "power on"})
            _wait(client, uuids, "power on", lambda d: d["power_state"] == "power on"
                  and not d["target_power_state"])
            _call(client, "PUT", f"/v1/nodes/{ipmi['uuid']}/management/boot_device",
                  {"boot_device": "pxe"})
            console.print(_table(client))
            machine = bmc.machine
            console.print(f"the virtual BMC's machine is now: power {machine.power_state}, "  # type: ignore[attr-defined]
                          f"boot device {machine.get_boot_device().device}")
            history = _call(client, "GET", f"/v1/nodes/{ipmi['uuid']}/history")["history"]
            console.print("[bold]history of ipmi-0[/bold]")
            for event in history:
                console.print(f"  {event['created_at'][11:23]}  {event['event']}")
    finally:
        proc.terminate()
        proc.wait(10)
        bmc_server.stop()
        shutil.rmtree(state_dir, ignore_errors=True)
    console.print("demo finished; the service and the virtual BMC are stopped.")


if __name__ == "__main__":
    run()
